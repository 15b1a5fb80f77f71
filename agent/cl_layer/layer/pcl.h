/* Internals of the OpenCL capture library (libprofcl_layer.so as an ICD
 * loader layer, libprofcl_preload.so as an LD_PRELOAD shim). Both are built
 * from the same files; only the entry points differ (entry_layer.c,
 * entry_preload.c). Everything here runs inside the profiled app: it never
 * blocks the app's threads on the agent, and is quiet unless PROF_CL_DEBUG. */
#ifndef PCL_H
#define PCL_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_icd.h>
#include <stdbool.h>
#include <stdint.h>

#include "../cl_msg.h"

#define PCL_HIDDEN __attribute__((visibility("hidden")))
#define PCL_EXPORT __attribute__((visibility("default")))

/* Files call downwards only, never back up:
 *   entry_layer.c | entry_preload.c -> intercept.c -> tables.c, track.c
 *   track.c -> send.c -> ../cl_msg.c; every file -> base.c (which calls none). */

/* ---- shared state and helpers (base.c: calls nothing else in the layer) */
/* The next implementation: the loader's target dispatch (layer) or the
 * functions found with dlsym(RTLD_NEXT) (preload); filled by the entry file. */
extern PCL_HIDDEN cl_icd_dispatch pcl_next;
extern PCL_HIDDEN int pcl_mode; /* enum pcl_mode */
extern PCL_HIDDEN int pcl_debug;

void pcl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2))) PCL_HIDDEN;
uint64_t pcl_now_ns(void) PCL_HIDDEN;
/* Debug level from the environment, start time (from pcl_init). */
void pcl_base_init(void) PCL_HIDDEN;
/* Counters and start time from scratch (in a forked child). */
void pcl_base_after_fork(void) PCL_HIDDEN;
/* Commands dropped (never sent to the agent) and sent. */
uint64_t pcl_dropped(void) PCL_HIDDEN;
uint64_t pcl_sent(void) PCL_HIDDEN;
void pcl_count_dropped(uint64_t n) PCL_HIDDEN;
void pcl_count_sent(uint64_t n) PCL_HIDDEN;
uint64_t pcl_start_ns(void) PCL_HIDDEN;

/* ---- object tables (tables.c); all lookups take the table lock */
#define PCL_MAX_ARGS 64

struct pcl_arg {
	uint64_t mem_id; /* 0: not a buffer */
	uint8_t read, written;
};

struct pcl_queue_info {
	uint32_t id;
	bool in_order, forced_profiling;
	uint64_t last_cmd; /* last command enqueued (in-order queues) */
};

struct pcl_kernel_info {
	char name[PCL_MAX_NAME + 1];
	uint64_t program_hash;
	char options[PCL_MAX_OPTIONS + 1];
	uint32_t nargs;
	struct pcl_arg args[PCL_MAX_ARGS];
};

struct pcl_mem_info {
	uint64_t id;
	uint64_t size;
	cl_mem_flags flags;
};

void pcl_queue_created(cl_command_queue q, bool in_order, bool forced) PCL_HIDDEN;
/* Copies the queue's info and, for in-order queues, makes cmd the last command. */
bool pcl_queue_next(cl_command_queue q, uint64_t cmd, struct pcl_queue_info *out) PCL_HIDDEN;
void pcl_queue_released(cl_command_queue q) PCL_HIDDEN;

void pcl_program_created(cl_program p, uint64_t hash) PCL_HIDDEN;
void pcl_program_built(cl_program p, const char *options) PCL_HIDDEN;

void pcl_kernel_created(cl_kernel k) PCL_HIDDEN;
void pcl_kernel_set_arg(cl_kernel k, cl_uint idx, size_t size, const void *value) PCL_HIDDEN;
/* Copy name, program and buffer arguments of k for a launch. */
bool pcl_kernel_snapshot(cl_kernel k, struct pcl_kernel_info *out) PCL_HIDDEN;
void pcl_kernel_released(cl_kernel k) PCL_HIDDEN;

void pcl_mem_created(cl_mem m) PCL_HIDDEN;
bool pcl_mem_lookup(cl_mem m, struct pcl_mem_info *out) PCL_HIDDEN;
void pcl_mem_released(cl_mem m) PCL_HIDDEN;

void pcl_event_map(cl_event e, uint64_t cmd) PCL_HIDDEN;
uint64_t pcl_event_cmd(cl_event e) PCL_HIDDEN; /* 0 if unknown */

/* Mapped pointers, for the unmap's size and whether it writes the buffer back. */
void pcl_map_remember(void *ptr, cl_mem m, uint64_t bytes, bool write) PCL_HIDDEN;
bool pcl_map_forget(void *ptr, cl_mem *m, uint64_t *bytes, bool *write) PCL_HIDDEN;

uint64_t pcl_hash(uint64_t h, const void *p, size_t n) PCL_HIDDEN; /* FNV-1a 64; start with PCL_HASH_INIT */
#define PCL_HASH_INIT 0xcbf29ce484222325ull

/* ---- tracking of commands until they complete (track.c) */
struct pcl_pending {
	struct pcl_cmd cmd;
	cl_event ev;  /* our reference */
	cl_int status;
	struct pcl_pending *next;
};

/* Start tracking: called after a successful enqueue with the event (the
 * app's, retained here, or the layer's own). Takes ownership of p. */
void pcl_track(struct pcl_pending *p, cl_event ev, bool own_event) PCL_HIDDEN;
/* A new record (NULL when too many are outstanding: the command is counted as dropped). */
struct pcl_pending *pcl_pending_new(void) PCL_HIDDEN;
void pcl_pending_abandon(struct pcl_pending *p) PCL_HIDDEN; /* enqueue failed */
uint64_t pcl_next_cmd_id(void) PCL_HIDDEN;
/* Reads the environment once and sets up the fork handler (idempotent). */
void pcl_init(void) PCL_HIDDEN;
/* Nudge the sender (after clFinish / clWaitForEvents). */
void pcl_kick(void) PCL_HIDDEN;

/* ---- the intercepted functions (intercept.c), same signatures as the API */
cl_command_queue CL_API_CALL pcl_clCreateCommandQueue(cl_context, cl_device_id, cl_command_queue_properties,
						      cl_int *) PCL_HIDDEN;
cl_command_queue CL_API_CALL pcl_clCreateCommandQueueWithProperties(cl_context, cl_device_id,
								    const cl_queue_properties *, cl_int *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clReleaseCommandQueue(cl_command_queue) PCL_HIDDEN;
cl_program CL_API_CALL pcl_clCreateProgramWithSource(cl_context, cl_uint, const char **, const size_t *,
						     cl_int *) PCL_HIDDEN;
cl_program CL_API_CALL pcl_clCreateProgramWithBinary(cl_context, cl_uint, const cl_device_id *, const size_t *,
						     const unsigned char **, cl_int *, cl_int *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clBuildProgram(cl_program, cl_uint, const cl_device_id *, const char *,
				      void(CL_CALLBACK *)(cl_program, void *), void *) PCL_HIDDEN;
cl_kernel CL_API_CALL pcl_clCreateKernel(cl_program, const char *, cl_int *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clReleaseKernel(cl_kernel) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clSetKernelArg(cl_kernel, cl_uint, size_t, const void *) PCL_HIDDEN;
cl_mem CL_API_CALL pcl_clCreateBuffer(cl_context, cl_mem_flags, size_t, void *, cl_int *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clReleaseMemObject(cl_mem) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clEnqueueNDRangeKernel(cl_command_queue, cl_kernel, cl_uint, const size_t *,
					      const size_t *, const size_t *, cl_uint, const cl_event *,
					      cl_event *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clEnqueueReadBuffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
					   const cl_event *, cl_event *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clEnqueueWriteBuffer(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *,
					    cl_uint, const cl_event *, cl_event *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clEnqueueCopyBuffer(cl_command_queue, cl_mem, cl_mem, size_t, size_t, size_t, cl_uint,
					   const cl_event *, cl_event *) PCL_HIDDEN;
void *CL_API_CALL pcl_clEnqueueMapBuffer(cl_command_queue, cl_mem, cl_bool, cl_map_flags, size_t, size_t,
					 cl_uint, const cl_event *, cl_event *, cl_int *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clEnqueueUnmapMemObject(cl_command_queue, cl_mem, void *, cl_uint, const cl_event *,
					       cl_event *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clFinish(cl_command_queue) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clWaitForEvents(cl_uint, const cl_event *) PCL_HIDDEN;
cl_int CL_API_CALL pcl_clReleaseEvent(cl_event) PCL_HIDDEN;

#endif
