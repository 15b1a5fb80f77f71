/* Capstone, loaded on first use in dynamic builds (cs_api.h). */
#include "generated/config.h"
#ifdef CONFIG_AGENT_TRACER

#include "cs_api.h"

#include <errno.h>

#if defined(CONFIG_STATIC) || defined(CS_API_LINKED)

static const struct cs_api linked = {
    .open = cs_open,
    .option = cs_option,
    .malloc_insn = cs_malloc,
    .free_insn = cs_free,
    .close = cs_close,
    .reg_name = cs_reg_name,
    .disasm_iter = cs_disasm_iter,
    .regs_access = cs_regs_access,
};

int cs_api_load(const struct cs_api **out)
{
	*out = &linked;
	return 0;
}

const char *cs_api_error(void)
{
	return "";
}

#else /* dlopen */

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
/* The runtime library of the headers built against (Debian: libcapstone4). */
#define CS_SONAME "libcapstone.so." CS_STR(CS_API_MAJOR)
#define CS_PACKAGE "libcapstone" CS_STR(CS_API_MAJOR)

static struct cs_api loaded;
static int load_rc;
static char load_err[320];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	if (!p && !load_err[0])
		snprintf(load_err, sizeof(load_err),
			 "agent trace needs libcapstone (apt install " CS_PACKAGE "): " CS_SONAME
			 " has no %s",
			 name);
	return p;
}

static void load(void)
{
	void *lib = dlopen(CS_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		const char *why = dlerror();
		snprintf(load_err, sizeof(load_err),
			 "agent trace needs libcapstone (apt install " CS_PACKAGE "): %s",
			 why ? why : CS_SONAME " not found");
		load_rc = -ELIBACC;
		return;
	}
	/* POSIX: a data pointer from dlsym converts to the function's type. */
	*(void **)&loaded.open = sym(lib, "cs_open");
	*(void **)&loaded.option = sym(lib, "cs_option");
	*(void **)&loaded.malloc_insn = sym(lib, "cs_malloc");
	*(void **)&loaded.free_insn = sym(lib, "cs_free");
	*(void **)&loaded.close = sym(lib, "cs_close");
	*(void **)&loaded.reg_name = sym(lib, "cs_reg_name");
	*(void **)&loaded.disasm_iter = sym(lib, "cs_disasm_iter");
	*(void **)&loaded.regs_access = sym(lib, "cs_regs_access");
	if (load_err[0]) {
		dlclose(lib);
		load_rc = -ELIBACC;
	}
}

int cs_api_load(const struct cs_api **out)
{
	pthread_once(&once, load);
	*out = load_rc < 0 ? NULL : &loaded;
	return load_rc;
}

const char *cs_api_error(void)
{
	return load_err;
}

#endif
#endif /* CONFIG_AGENT_TRACER */
