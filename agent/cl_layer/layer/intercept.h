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

/* An enqueue as intercept_enqueue.c tracks it (the other enqueue files use it too). */
struct enq {
	struct pcl_pending *p;
	cl_event own;
	cl_event *evp; /* what to pass to the runtime */
	bool queue_known;
};
/* Before the runtime's call: a record with the queue order, wait list and host time. */
void pcl_enq_begin(struct enq *e, cl_command_queue q, cl_uint type, cl_uint nwait, const cl_event *wait,
		   cl_event *app_ev) PCL_HIDDEN;
/* After it: track the command, or forget it when the enqueue failed. */
void pcl_enq_end(struct enq *e, cl_int rc, cl_command_queue q, cl_event *app_ev) PCL_HIDDEN;
/* A transfer's record: its bytes, the memory it reads and the one it writes (NULL: none). */
void pcl_enq_transfer(struct enq *e, uint64_t bytes, cl_mem rd, cl_mem wr) PCL_HIDDEN;
uint64_t pcl_enq_mem_id(cl_mem m) PCL_HIDDEN;

#endif
