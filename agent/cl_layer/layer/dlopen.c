/* Programs that load OpenCL themselves (hashcat, Python modules, engines):
 * dlopen("libOpenCL.so...") + dlsym would hand them the library's functions,
 * not the shim's. The shim's dlopen loads the library the program asked for,
 * then returns instead a handle of libprofcl_bridge.so, an empty library
 * whose dependencies are libprofcl_preload.so and then libOpenCL.so.1: dlsym
 * on it searches the bridge and its dependencies in that order (glibc
 * dlsym(3): "the library loaded by dlopen and the libraries it depends on,
 * breadth first"), so the program gets the shim's function where the shim
 * has one and the library's everywhere else. That holds only when the
 * bridge's libOpenCL.so.1 is the library the program loaded (same soname);
 * otherwise the program gets its own handle back and the agent is told, in
 * one line, that the program's calls are not seen (layer mode sees them).
 * Every other dlopen is a tail call to the C library's, so that the search
 * for the program's libraries (its RUNPATH, $ORIGIN) is the program's. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlopen.h"

typedef void *(*dlopen_fn)(const char *, int);

static dlopen_fn real;
static void *opencl_lib; /* what the program loaded */

static dlopen_fn real_dlopen(void)
{
	dlopen_fn f = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!f) {
		*(void **)&f = dlsym(RTLD_NEXT, "dlopen");
		__atomic_store_n(&real, f, __ATOMIC_RELEASE);
	}
	return f;
}

void *pcl_real_dlopen(const char *file, int mode)
{
	dlopen_fn f = real_dlopen();
	return f ? f(file, mode) : NULL;
}

void *pcl_dlopened_library(void)
{
	return __atomic_load_n(&opencl_lib, __ATOMIC_ACQUIRE);
}

static bool is_opencl(const char *file)
{
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	return strncmp(base, "libOpenCL.so", 12) == 0;
}

/* The program's own search for a bare name failed from here (the C library
 * searched for the shim, not for the caller): the directories the caller's
 * object would search (dlinfo RTLD_DI_SERINFO: its RUNPATH, LD_LIBRARY_PATH,
 * the defaults), tried in order. */
static void *search_as(const void *caller, const char *file, int mode)
{
#ifdef __BIONIC__
	/* bionic has no dlinfo: the shim's own search (its linker namespace) is all there is */
	(void)caller, (void)file, (void)mode;
	return NULL;
#else
	Dl_info info;
	if (strchr(file, '/') || !dladdr(caller, &info))
		return NULL;
	void *obj = pcl_real_dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (!obj)
		obj = pcl_real_dlopen(NULL, RTLD_LAZY); /* the main program */
	Dl_serinfo size;
	Dl_serinfo *si = NULL;
	void *found = NULL;
	if (obj && dlinfo(obj, RTLD_DI_SERINFOSIZE, &size) == 0 && (si = malloc(size.dls_size)) != NULL) {
		si->dls_size = size.dls_size;
		si->dls_cnt = size.dls_cnt;
		if (dlinfo(obj, RTLD_DI_SERINFO, si) == 0)
			for (unsigned i = 0; i < si->dls_cnt && !found; i++) {
				char path[PATH_MAX];
				if (snprintf(path, sizeof(path), "%s/%s", si->dls_serpath[i].dls_name, file) <
				    (int)sizeof(path))
					found = pcl_real_dlopen(path, mode);
			}
	}
	free(si);
	if (obj)
		dlclose(obj);
	return found;
#endif
}

/* libprofcl_bridge.so next to this library. */
static void *bridge(void)
{
	Dl_info info;
	char path[PATH_MAX];
	if (!dladdr((void *)bridge, &info) || !info.dli_fname)
		return NULL;
	const char *slash = strrchr(info.dli_fname, '/');
	int dir = slash ? (int)(slash - info.dli_fname) : 0;
	if (snprintf(path, sizeof(path), "%.*s%slibprofcl_bridge.so", dir, info.dli_fname, slash ? "/" : "") >=
	    (int)sizeof(path))
		return NULL;
	return pcl_real_dlopen(path, RTLD_NOW | RTLD_LOCAL);
}

static __attribute__((noinline)) void *opencl_dlopen(const char *file, int mode, const void *caller)
{
	void *h = pcl_real_dlopen(file, mode);
	if (!h)
		h = search_as(caller, file, mode);
	if (!h)
		return NULL; /* the program's own dlopen would not have found it either */
	void *expected = NULL;
	__atomic_compare_exchange_n(&opencl_lib, &expected, h, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	void *b = bridge();
	void *ours = dlsym(RTLD_DEFAULT, "clSetKernelArg");
	if (b && dlsym(b, "clGetPlatformIDs") == dlsym(h, "clGetPlatformIDs") && dlsym(b, "clSetKernelArg") == ours &&
	    ours != dlsym(h, "clSetKernelArg")) {
		pcl_preload_ready();
		pcl_send_note(PCL_NOTE_DLOPEN_BRIDGED, file);
		pcl_log("the program dlopen'ed %s: the shim stands in for it", file);
		return b;
	}
	if (b)
		dlclose(b);
	pcl_init();
	pcl_mode = PCL_MODE_PRELOAD;
	pcl_send_note(PCL_NOTE_DLOPEN_UNBRIDGED, file);
	pcl_log("the program dlopen'ed %s and the shim cannot stand in for it: its calls are not seen", file);
	return h;
}

PCL_EXPORT void *dlopen(const char *file, int mode)
{
	if (file && is_opencl(file))
		return opencl_dlopen(file, mode, __builtin_return_address(0));
	/* A tail call: the C library sees the program's return address, so it searches as the program. */
	return real_dlopen()(file, mode);
}
