/* Shared by the intercepted functions (intercept_objects.c,
 * intercept_enqueue.c): how each one starts. A function the next library
 * does not have (the preload shim over an older library) answers
 * CL_INVALID_OPERATION as the runtime would for an unsupported call; a call
 * the runtime makes into the API from inside one of ours (preload mode)
 * passes straight through; otherwise the thread's state slot says which
 * function it is in until pcl_leave(). */
#ifndef PCL_INTERCEPT_H
#define PCL_INTERCEPT_H

#include "pcl.h"

/* For functions returning cl_int. */
#define PCL_BEGIN(f, passthrough)                                                                          \
	do {                                                                                               \
		if (!pcl_next.f)                                                                           \
			return CL_INVALID_OPERATION;                                                       \
		if (pcl_nested())                                                                          \
			return passthrough;                                                                \
		pcl_enter(PCL_FN_##f);                                                                     \
	} while (0)

/* For functions returning a handle, with an error code out-parameter (may be NULL). */
#define PCL_BEGIN_ERR(f, err, passthrough)                                                                 \
	do {                                                                                               \
		if (!pcl_next.f) {                                                                         \
			if (err)                                                                           \
				*(err) = CL_INVALID_OPERATION;                                             \
			return NULL;                                                                       \
		}                                                                                          \
		if (pcl_nested())                                                                          \
			return passthrough;                                                                \
		pcl_enter(PCL_FN_##f);                                                                     \
	} while (0)

#endif
