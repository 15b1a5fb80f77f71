/* OpenCL discovery itself (opencl_probe.h): dlopen("libOpenCL.so.1") and the platform/device
 * queries. Runs in the probe's child, or in prof-clhelper (agent/cl_layer/helper/), the
 * board-libc helper that a static musl agent executes instead (it cannot load libraries). */
#include "opencl_probe.h"

#include <stdio.h>
#include <string.h>

#include "generated/config.h"

#ifdef CONFIG_AGENT_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>

#ifdef __BIONIC__
#include <stdlib.h>
/* Android (the bionic prof-clhelper, mk/cl_layer.mk bionic-libs): no ICD loader package and no
 * libOpenCL.so.1; the vendor ships libOpenCL.so in its partition (Adreno, PowerVR; on Mali
 * often a link to egl/libGLES_mali.so, which exports the cl* functions itself). PROF_CL_LIBRARY
 * (as for the preload shim) names another. */
#ifdef __LP64__
#define ANDROID_LIB "lib64"
#else
#define ANDROID_LIB "lib"
#endif
static const char *const android_opencl[] = {
	"libOpenCL.so", "/vendor/" ANDROID_LIB "/libOpenCL.so", "/system/vendor/" ANDROID_LIB "/libOpenCL.so",
	"/vendor/" ANDROID_LIB "/egl/libGLES_mali.so", "/system/" ANDROID_LIB "/libOpenCL.so"};

void *opencl_lib_open(char *err, size_t errlen)
{
	const char *env = getenv("PROF_CL_LIBRARY");
	void *lib = env && *env ? dlopen(env, RTLD_NOW | RTLD_LOCAL) : NULL;
	for (size_t i = 0; !lib && i < sizeof(android_opencl) / sizeof(android_opencl[0]); i++)
		lib = dlopen(android_opencl[i], RTLD_NOW | RTLD_LOCAL);
	/* a linker namespace that refuses the vendor directory ("not accessible for the namespace")
	 * still takes what LD_LIBRARY_PATH names (linker/linker_namespaces.cpp is_accessible) */
	if (!lib)
		snprintf(err, errlen,
			 "no vendor OpenCL library (set PROF_CL_LIBRARY=PATH; LD_LIBRARY_PATH=/vendor/" ANDROID_LIB
			 " if not accessible): %s",
			 dlerror());
	return lib;
}
#else
void *opencl_lib_open(char *err, size_t errlen)
{
	void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib)
		return lib;
#if defined(CONFIG_STATIC) && !defined(__GLIBC__)
	snprintf(err, errlen,
		 "libOpenCL.so.1 not loadable: static musl agent (%s); BOARD_LIBC=glibc builds one that can",
		 dlerror());
#else
	snprintf(err, errlen, "libOpenCL.so.1 not found (%s): install an OpenCL ICD loader and driver", dlerror());
#endif
	return NULL;
}
#endif

typedef cl_int (*get_platform_ids_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef cl_int (*get_platform_info_fn)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
typedef cl_int (*get_device_ids_fn)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
typedef cl_int (*get_device_info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);

static void get_str(get_device_info_fn f, cl_device_id d, cl_device_info what, char *out, size_t len)
{
	out[0] = 0;
	if (f(d, what, len, out, NULL) != CL_SUCCESS)
		out[0] = 0;
	out[len - 1] = 0;
}

void opencl_probe_fill(struct opencl_probe *p)
{
	void *lib = opencl_lib_open(p->status, sizeof(p->status));
	if (!lib)
		return;
	get_platform_ids_fn gpi = (get_platform_ids_fn)dlsym(lib, "clGetPlatformIDs");
	get_platform_info_fn gpinfo = (get_platform_info_fn)dlsym(lib, "clGetPlatformInfo");
	get_device_ids_fn gdi = (get_device_ids_fn)dlsym(lib, "clGetDeviceIDs");
	get_device_info_fn gdinfo = (get_device_info_fn)dlsym(lib, "clGetDeviceInfo");
	if (!gpi || !gpinfo || !gdi || !gdinfo) {
		snprintf(p->status, sizeof(p->status), "libOpenCL.so.1 lacks the platform/device queries");
		return;
	}
	cl_platform_id plats[8];
	cl_uint np = 0;
	cl_int rc = gpi(8, plats, &np);
	if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (rc == CL_SUCCESS && np == 0)) {
		snprintf(p->status, sizeof(p->status), "ok");
		return;
	}
	if (rc != CL_SUCCESS) {
		snprintf(p->status, sizeof(p->status), "clGetPlatformIDs failed (%d)", rc);
		return;
	}
	if (np > 8)
		np = 8;
	p->nplatforms = np;
	for (cl_uint i = 0; i < np; i++) {
		char pname[128] = "";
		if (gpinfo(plats[i], CL_PLATFORM_NAME, sizeof(pname), pname, NULL) != CL_SUCCESS)
			pname[0] = 0;
		pname[sizeof(pname) - 1] = 0;
		cl_device_id devs[OPENCL_PROBE_MAX_DEVICES];
		cl_uint nd = 0;
		if (gdi(plats[i], CL_DEVICE_TYPE_ALL, OPENCL_PROBE_MAX_DEVICES, devs, &nd) != CL_SUCCESS)
			continue;
		if (nd > OPENCL_PROBE_MAX_DEVICES)
			nd = OPENCL_PROBE_MAX_DEVICES;
		for (cl_uint j = 0; j < nd && p->ndevices < OPENCL_PROBE_MAX_DEVICES; j++) {
			struct opencl_device *d = &p->devices[p->ndevices++];
			memcpy(d->platform, pname, sizeof(d->platform));
			get_str(gdinfo, devs[j], CL_DEVICE_NAME, d->name, sizeof(d->name));
			get_str(gdinfo, devs[j], CL_DEVICE_VENDOR, d->vendor, sizeof(d->vendor));
			get_str(gdinfo, devs[j], CL_DEVICE_VERSION, d->version, sizeof(d->version));
			get_str(gdinfo, devs[j], CL_DRIVER_VERSION, d->driver, sizeof(d->driver));
			cl_uint u = 0;
			cl_ulong ul = 0;
			cl_device_type t = 0;
			if (gdinfo(devs[j], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(u), &u, NULL) == CL_SUCCESS)
				d->compute_units = u;
			if (gdinfo(devs[j], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(ul), &ul, NULL) == CL_SUCCESS)
				d->global_mem_bytes = ul;
			u = 0;
			if (gdinfo(devs[j], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(u), &u, NULL) == CL_SUCCESS)
				d->max_clock_mhz = u;
			if (gdinfo(devs[j], CL_DEVICE_TYPE, sizeof(t), &t, NULL) == CL_SUCCESS)
				d->type = (uint32_t)t;
		}
	}
	snprintf(p->status, sizeof(p->status), "ok");
	/* No dlclose: the child exits right away. */
}
#endif

