#include "cl_state.h"

static const char *const names[PCL_FN__N] = {
	[PCL_FN_NONE] = "(none)",
#define PCL_FN_NAME(f) [PCL_FN_##f] = #f,
	PCL_FNS(PCL_FN_NAME)
#undef PCL_FN_NAME
	[PCL_FN_REAPER] = "the capture library's reaper thread",
	[PCL_FN_clGetKernelInfo] = "clGetKernelInfo",
	[PCL_FN_clGetKernelArgInfo] = "clGetKernelArgInfo",
	[PCL_FN_clGetImageInfo] = "clGetImageInfo",
};

const char *pcl_fn_name(uint32_t fn)
{
	return fn < PCL_FN__N && names[fn] ? names[fn] : "?";
}
