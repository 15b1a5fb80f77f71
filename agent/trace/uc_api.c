/* Unicorn, loaded on first use (uc_api.h). */
#include "generated/config.h"
#ifdef CONFIG_AGENT_TRACE_REPLAY

#include "uc_api.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define UC_SONAME "libunicorn.so.2"
#define UC_PACKAGE "libunicorn2"

static struct uc_api loaded;
static int load_rc;
static char load_err[320];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p && !load_err[0])
		snprintf(load_err, sizeof(load_err),
			 "replay windows need Unicorn 2 (apt install " UC_PACKAGE "): " UC_SONAME " has no %s", name);
	return p;
}

static void load(void)
{
	void *lib = dlopen(UC_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		snprintf(load_err, sizeof(load_err), "replay windows need Unicorn 2 (apt install " UC_PACKAGE "): %s",
			 why ? why : UC_SONAME " not found");
		load_rc = -ELIBACC;
		return;
	}
	unsigned (*version)(unsigned *, unsigned *);
	/* POSIX: a data pointer from dlsym converts to the function's type. */
	*(void **)&version = sym(lib, "uc_version");
	*(void **)&loaded.open = sym(lib, "uc_open");
	*(void **)&loaded.close = sym(lib, "uc_close");
	*(void **)&loaded.reg_write = sym(lib, "uc_reg_write");
	*(void **)&loaded.reg_read = sym(lib, "uc_reg_read");
	*(void **)&loaded.mem_map_ptr = sym(lib, "uc_mem_map_ptr");
	*(void **)&loaded.mem_read = sym(lib, "uc_mem_read");
	*(void **)&loaded.hook_add = sym(lib, "uc_hook_add");
	*(void **)&loaded.emu_start = sym(lib, "uc_emu_start");
	*(void **)&loaded.emu_stop = sym(lib, "uc_emu_stop");
	*(void **)&loaded.strerror = sym(lib, "uc_strerror");
	unsigned major = 0, minor = 0;
	if (!load_err[0]) {
		version(&major, &minor);
		if (major != UC_API_MAJOR)
			snprintf(load_err, sizeof(load_err),
				 "replay windows need Unicorn %d (apt install " UC_PACKAGE "): " UC_SONAME " is %u.%u",
				 UC_API_MAJOR, major, minor);
	}
	if (load_err[0]) {
		dlclose(lib);
		load_rc = -ELIBACC;
	}
}

int uc_api_load(const struct uc_api **out)
{
	pthread_once(&once, load);
	*out = load_rc < 0 ? NULL : &loaded;
	return load_rc;
}

const char *uc_api_error(void)
{
	return load_err;
}

#endif /* CONFIG_AGENT_TRACE_REPLAY */
