/* Entry points of libprofcl_layer.so, an OpenCL ICD loader layer
 * (OPENCL_LAYERS=/path/libprofcl_layer.so). ocl-icd 2.3 looks up
 * clGetLayerInfo + clInitLayer; the Khronos loader uses
 * clInitLayerWithProperties and clDeinitLayer when present. All four are
 * exported. The layer's dispatch table is the next one with the
 * intercepted entries replaced. */
#include <string.h>

#include "pcl.h"

#include <CL/cl_layer.h>

static cl_icd_dispatch layer_dispatch;

#define LAYER_NAME "profcl: OpenCL command timing for the mali-board profiler"

PCL_EXPORT cl_int CL_API_CALL clGetLayerInfo(cl_layer_info name, size_t size, void *value, size_t *size_ret)
{
	const void *src;
	size_t n;
	static const cl_layer_api_version version = CL_LAYER_API_VERSION_100;
	switch (name) {
	case CL_LAYER_API_VERSION:
		src = &version;
		n = sizeof(version);
		break;
	case CL_LAYER_NAME:
		src = LAYER_NAME;
		n = sizeof(LAYER_NAME);
		break;
	default:
		return CL_INVALID_VALUE;
	}
	if (value && size < n)
		return CL_INVALID_VALUE;
	if (value)
		memcpy(value, src, n);
	if (size_ret)
		*size_ret = n;
	return CL_SUCCESS;
}

static cl_int init_layer(cl_uint num_entries, const cl_icd_dispatch *target, cl_uint *num_entries_ret,
			 const cl_icd_dispatch **layer_ret)
{
	if (!target || !num_entries_ret || !layer_ret)
		return CL_INVALID_VALUE;
	pcl_init();
	pcl_mode = PCL_MODE_LAYER;
	const size_t ours = sizeof(cl_icd_dispatch) / sizeof(void *);
	size_t n = num_entries < ours ? num_entries : ours;
	memset(&pcl_next, 0, sizeof(pcl_next));
	memcpy(&pcl_next, target, n * sizeof(void *));
	layer_dispatch = pcl_next;
	/* Every intercepted function the target has; the others stay the target's. */
#define HOOK(f)                                                                                            \
	if (pcl_next.f)                                                                                    \
		layer_dispatch.f = pcl_##f;
	PCL_FNS(HOOK)
#undef HOOK
	*num_entries_ret = (cl_uint)n;
	*layer_ret = &layer_dispatch;
	pcl_log("layer initialised (%u dispatch entries)", (unsigned)n);
	pcl_send_note(PCL_NOTE_LAYER_LOADED, NULL);
	return CL_SUCCESS;
}

PCL_EXPORT cl_int CL_API_CALL clInitLayer(cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
					  cl_uint *num_entries_ret, const cl_icd_dispatch **layer_dispatch_ret)
{
	return init_layer(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret);
}

/* Khronos ICD loader >= 2023: same, with a properties list (none defined yet). */
typedef cl_properties pcl_layer_properties;
PCL_EXPORT cl_int CL_API_CALL clInitLayerWithProperties(cl_uint num_entries, const cl_icd_dispatch *target_dispatch,
							cl_uint *num_entries_ret,
							const cl_icd_dispatch **layer_dispatch_ret,
							const pcl_layer_properties *properties)
{
	(void)properties;
	return init_layer(num_entries, target_dispatch, num_entries_ret, layer_dispatch_ret);
}

/* Called by the Khronos loader at its exit; the drain happens in our atexit handler. */
PCL_EXPORT cl_int CL_API_CALL clDeinitLayer(void)
{
	pcl_log("layer deinitialised");
	return CL_SUCCESS;
}
