/* Internals of the OpenCL capture library (libprofcl_layer.so as an ICD
 * loader layer, libprofcl_preload.so as an LD_PRELOAD shim). Both are built
 * from the same files; only the entry points differ (entry_layer.c,
 * entry_preload.c + dlopen.c). Everything here runs inside the profiled app:
 * it never blocks the app's threads on the agent, and is quiet unless
 * PROF_CL_DEBUG.
 *
 * The rule that keeps the app alive: the library never hands the runtime an
 * application value on its own account unless it knows the value is a handle
 * of that kind — because the library saw the runtime create it (and the app
 * has not released it since), or because the runtime just accepted it as one
 * in the app's own call. Kernel arguments are classified from the tables
 * (kernels.c); an 8-byte value the tables do not know is a scalar. Every call
 * the library makes into the runtime on its own account is in runtime.c. */
#ifndef PCL_H
#define PCL_H

#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#include <CL/cl.h>
#include <CL/cl_icd.h>
#include <stdbool.h>
#include <stdint.h>

#include "../cl_msg.h"
#include "../cl_state.h"

#define PCL_HIDDEN __attribute__((visibility("hidden")))
#define PCL_EXPORT __attribute__((visibility("default")))

/* Files call downwards only, never back up:
 *   entry_layer.c | entry_preload.c, dlopen.c -> intercept_*.c -> kernels.c -> tables.c
 *   intercept_*.c -> track.c -> send.c -> ../cl_msg.c
 *   kernels.c, tables.c, track.c -> runtime.c (the library's own runtime calls)
 *   every file -> state.c, base.c (which call nothing above them). */

/* ---- shared state and helpers (base.c: calls nothing else in the layer) */
/* The next implementation: the loader's target dispatch (layer) or the
 * functions found in the OpenCL library (preload); filled by the entry file. */
extern PCL_HIDDEN cl_icd_dispatch pcl_next;
extern PCL_HIDDEN int pcl_mode; /* enum pcl_mode */
extern PCL_HIDDEN int pcl_debug;

void pcl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2))) PCL_HIDDEN;
uint64_t pcl_now_ns(void) PCL_HIDDEN;
/* This process's pid (cached; a forked child gets its own). */
int32_t pcl_pid(void) PCL_HIDDEN;
/* Debug level from the environment, start time (from pcl_init). */
void pcl_base_init(void) PCL_HIDDEN;
/* Counters, pid and start time from scratch (in a forked child). */
void pcl_base_after_fork(void) PCL_HIDDEN;
/* Commands dropped (never sent to the agent) and sent. */
uint64_t pcl_dropped(void) PCL_HIDDEN;
uint64_t pcl_sent(void) PCL_HIDDEN;
void pcl_count_dropped(uint64_t n) PCL_HIDDEN;
void pcl_count_sent(uint64_t n) PCL_HIDDEN;
uint64_t pcl_start_ns(void) PCL_HIDDEN;
/* Add id to a command's dependency list of *n entries (once; at most PCL_MAX_DEPS). */
void pcl_add_id(uint64_t *list, uint32_t *n, uint64_t id) PCL_HIDDEN;

/* ---- where this thread is (state.c; the shared slots of ../cl_state.h) */
void pcl_state_init(void) PCL_HIDDEN;	    /* maps PROF_CL_STATE when set */
void pcl_state_after_fork(void) PCL_HIDDEN; /* the forking thread gets a new slot */
bool pcl_nested(void) PCL_HIDDEN;	    /* this thread is already inside the library */
void pcl_enter(uint32_t fn) PCL_HIDDEN;	    /* enum pcl_fn */
void pcl_state_claim(void) PCL_HIDDEN;	    /* this thread's slot now (else at its first pcl_enter) */
void pcl_leave(void) PCL_HIDDEN;
void pcl_own_begin(uint32_t fn) PCL_HIDDEN; /* the library calls the runtime on its own account */
void pcl_own_end(void) PCL_HIDDEN;

/* ---- the library's own calls into the runtime (runtime.c), each marked
 * as such in the thread's slot. Only ever with handles the library knows. */
/* CL_KERNEL_FUNCTION_NAME of a kernel the runtime created or accepted. */
bool pcl_rt_kernel_name(cl_kernel k, char *name, size_t cap) PCL_HIDDEN;
/* Address and type qualifier of argument idx (false when the runtime has no argument info). */
bool pcl_rt_arg_qualifiers(cl_kernel k, cl_uint idx, cl_kernel_arg_address_qualifier *addr,
			   cl_kernel_arg_type_qualifier *type) PCL_HIDDEN;
/* CL_QUEUE_PROPERTIES of a queue the runtime accepted. */
cl_command_queue_properties pcl_rt_queue_properties(cl_command_queue q) PCL_HIDDEN;
/* Events the runtime returned: a reference of the library's, its status, its times, its release. */
cl_int pcl_rt_retain_event(cl_event e) PCL_HIDDEN;
/* CL_EVENT_COMMAND_EXECUTION_STATUS: CL_QUEUED .. CL_COMPLETE, or a negative error (CL_COMPLETE if unknown). */
cl_int pcl_rt_event_status(cl_event e) PCL_HIDDEN;
void pcl_rt_profiling(cl_event e, uint64_t t[4]) PCL_HIDDEN; /* QUEUED, SUBMIT, START, END (0 if unknown) */
void pcl_rt_release_event(cl_event e) PCL_HIDDEN;
/* CL_IMAGE_ELEMENT_SIZE of an image the runtime just accepted (0 if unknown). */
uint64_t pcl_rt_image_element_size(cl_mem img) PCL_HIDDEN;
/* CL_EVENT_COMMAND_QUEUE of an event the runtime just accepted (NULL: none, or unknown). */
cl_command_queue pcl_rt_event_queue(cl_event e) PCL_HIDDEN;

/* ---- object tables (tables.c): what the runtime created for the app and
 * the app has not released. The app's own reference counts (create = 1,
 * clRetain* + 1, clRelease* - 1) decide when a handle is forgotten: the
 * runtime may keep an object alive longer (a pending command, a kernel
 * argument), but the app may not use its handle after its last release
 * (OpenCL 3.0, 5.5.1 "Retaining and Releasing Memory Objects"). */
enum pcl_obj { PCL_OBJ_QUEUE, PCL_OBJ_PROGRAM, PCL_OBJ_MEM, PCL_OBJ_SAMPLER, PCL_OBJ__N }; /* kernels: kernels.c */

enum pcl_mem_kind { PCL_MEM_BUFFER = 1, PCL_MEM_SUB_BUFFER, PCL_MEM_IMAGE, PCL_MEM_PIPE, PCL_MEM_SVM };

struct pcl_queue_info {
	uint32_t id;
	bool in_order, forced_profiling;
	/* clCreateCommandQueueWithProperties: the layer appended CL_QUEUE_PROPERTIES to the app's
	 * list (1) or made the list where the app passed NULL (2) */
	uint8_t props_added;
	uint64_t last_cmd; /* last command enqueued (in-order queues) */
};

struct pcl_mem_info {
	uint64_t id;   /* per-process; a sub-buffer has its parent's (dependencies stay conservative) */
	uint64_t size; /* bytes for buffers and SVM, 0 where not known */
	cl_mem_flags flags;
	uint8_t kind; /* enum pcl_mem_kind */
};

void pcl_tables_after_fork(void) PCL_HIDDEN;
/* The app took one more reference on a known handle (unknown handles: nothing). */
void pcl_retained(enum pcl_obj kind, const void *h) PCL_HIDDEN;
/* The app drops one; at its last the handle is forgotten. Call before the
 * runtime's release (after it, the address may already belong to a new object). */
void pcl_released(enum pcl_obj kind, const void *h) PCL_HIDDEN;

void pcl_queue_created(cl_command_queue q, bool in_order, bool forced) PCL_HIDDEN;
/* Copies the queue's info and, for in-order queues, makes cmd the last
 * command. False (nothing copied) when the layer does not know q. */
bool pcl_queue_next(cl_command_queue q, uint64_t cmd, struct pcl_queue_info *out) PCL_HIDDEN;
/* Whether any queue the app holds is one the layer made profiling (forced_profiling). */
bool pcl_queues_forced(void) PCL_HIDDEN;
/* Copies a known queue's info (nothing else). */
bool pcl_queue_lookup(cl_command_queue q, struct pcl_queue_info *out) PCL_HIDDEN;
/* A known queue's id (0: not known); no lock while this thread asks about the same queue and no
 * queue was made or forgotten since (a loop of clFinish on one queue). */
uint32_t pcl_queue_id(cl_command_queue q) PCL_HIDDEN;
/* The layer appended the CL_QUEUE_PROPERTIES pair to the app's property list of q (how: props_added). */
void pcl_queue_props_added(cl_command_queue q, uint8_t how) PCL_HIDDEN;
/* The same for a queue the runtime has just accepted in an enqueue (asks it). */
void pcl_queue_learn(cl_command_queue q, uint64_t cmd, struct pcl_queue_info *out) PCL_HIDDEN;

void pcl_program_created(cl_program p, uint64_t hash) PCL_HIDDEN;
void pcl_program_built(cl_program p, const char *options) PCL_HIDDEN;
/* Hash and build options of a known program. */
bool pcl_program_lookup(cl_program p, uint64_t *hash, char *options, size_t cap) PCL_HIDDEN;

/* parent: for sub-buffers (its id is taken), else NULL. */
void pcl_mem_created(cl_mem m, enum pcl_mem_kind kind, cl_mem_flags flags, uint64_t size, cl_mem parent) PCL_HIDDEN;
bool pcl_mem_lookup(cl_mem m, struct pcl_mem_info *out) PCL_HIDDEN;
void pcl_sampler_created(cl_sampler s) PCL_HIDDEN;
bool pcl_sampler_known(cl_sampler s) PCL_HIDDEN;
/* Shared virtual memory: allocations by address range. */
void pcl_svm_allocated(void *p, size_t size, cl_svm_mem_flags flags) PCL_HIDDEN;
void pcl_svm_freed(void *p) PCL_HIDDEN;
/* The allocation holding p (its id, size and flags in out). */
bool pcl_svm_lookup(const void *p, struct pcl_mem_info *out) PCL_HIDDEN;

/* Events the app got from an enqueue: the command each belongs to, while the app holds it. */
void pcl_event_map(cl_event e, uint64_t cmd, uint32_t queue_id) PCL_HIDDEN;
uint64_t pcl_event_cmd(cl_event e) PCL_HIDDEN;	    /* 0 if unknown */
uint32_t pcl_event_queue_id(cl_event e) PCL_HIDDEN; /* its command's queue id, 0 if unknown */
void pcl_event_retained(cl_event e) PCL_HIDDEN;
/* Whether the library still holds its own reference on an app's event (for
 * CL_EVENT_REFERENCE_COUNT): set by pcl_event_map, changed by the reaper
 * around its release. */
enum { PCL_EV_UNKNOWN, PCL_EV_HELD, PCL_EV_RELEASING, PCL_EV_RELEASED };
void pcl_event_layer_set(cl_event e, uint8_t state) PCL_HIDDEN;
uint8_t pcl_event_layer(cl_event e) PCL_HIDDEN;
void pcl_event_released(cl_event e) PCL_HIDDEN;

/* Mapped pointers, for the unmap's size and whether it writes the buffer back. */
void pcl_map_remember(void *ptr, cl_mem m, uint64_t bytes, bool write) PCL_HIDDEN;
bool pcl_map_forget(void *ptr, cl_mem *m, uint64_t *bytes, bool *write) PCL_HIDDEN;

uint64_t pcl_hash(uint64_t h, const void *p, size_t n) PCL_HIDDEN; /* FNV-1a 64; start with PCL_HASH_INIT */
#define PCL_HASH_INIT 0xcbf29ce484222325ull

/* ---- kernels (kernels.c): name, program, what each argument is */
#define PCL_MAX_ARGS 64

enum pcl_arg_kind { PCL_ARG_UNSET, PCL_ARG_SCALAR, PCL_ARG_LOCAL, PCL_ARG_MEM, PCL_ARG_SVM, PCL_ARG_SAMPLER };

/* A kernel the runtime created (name: the one asked for, or NULL to ask the runtime). */
void pcl_kernel_created(cl_kernel k, cl_program p, const char *name) PCL_HIDDEN;
void pcl_kernel_cloned(cl_kernel from, cl_kernel to) PCL_HIDDEN;
/* The app's references, as pcl_retained / pcl_released. */
void pcl_kernel_retained(cl_kernel k) PCL_HIDDEN;
void pcl_kernel_released(cl_kernel k) PCL_HIDDEN;
void pcl_kernels_after_fork(void) PCL_HIDDEN;
/* After the runtime accepted the argument (the call returned CL_SUCCESS). */
void pcl_kernel_set_arg(cl_kernel k, cl_uint idx, size_t size, const void *value) PCL_HIDDEN;
void pcl_kernel_set_arg_svm(cl_kernel k, cl_uint idx, const void *ptr) PCL_HIDDEN;
/* Kind of argument idx as the layer classified it (tests, debug). */
enum pcl_arg_kind pcl_kernel_arg_kind(cl_kernel k, cl_uint idx) PCL_HIDDEN;
/* A launch of k: its kernel declaration id and the buffers it reads and
 * writes into c. False when the layer does not know k. */
bool pcl_kernel_launch(cl_kernel k, struct pcl_cmd *c) PCL_HIDDEN;
/* A kernel the runtime has just accepted in a launch, never seen created. */
void pcl_kernel_learn(cl_kernel k) PCL_HIDDEN;
/* Kernel declarations: one per (name, program hash, build options). */
bool pcl_kdesc_get(uint32_t id, struct pcl_kdesc *out) PCL_HIDDEN;

/* ---- tracking of commands until they complete (track.c) */
struct pcl_pending { /* the reaper's fields first: on the command header's cache line, not 1.7 KiB on */
	cl_event ev;   /* our reference */
	struct pcl_pending *next;
	bool in_order; /* its queue's: completes after the one before it */
	struct pcl_cmd cmd;
};

/* Start tracking: called after a successful enqueue with the event (the
 * app's, retained here, or the layer's own). Takes ownership of p; the
 * reaper looks at it until the runtime says it completed. */
void pcl_track(struct pcl_pending *p, cl_event ev, bool own_event) PCL_HIDDEN;
/* A new record (NULL when too many are outstanding: the command is counted
 * as dropped). Only id, pid and the dependency counts are set. */
struct pcl_pending *pcl_pending_new(void) PCL_HIDDEN;
void pcl_pending_abandon(struct pcl_pending *p) PCL_HIDDEN; /* enqueue failed */
/* The app waited for its commands (clFinish, clWaitForEvents) on the queues
 * queue_ids[0..n) (n == 0: on any, or on queues the layer does not know).
 * With a ring, the waiting thread writes what completed on those queues into
 * it before the wait returns (the other queues' commands are the reaper's);
 * without one the reaper's next visit comes within REAP_AFTER_FINISH_NS
 * (woken now only from its longer sleep). No system call in a loop of such
 * waits closer together than that. */
#define PCL_KICK_QUEUES 4 /* more distinct queues in one wait: every queue is visited */
void pcl_track_kick(const uint32_t *queue_ids, unsigned n, bool finished) PCL_HIDDEN; /* finished: clFinish */
/* Tests only: called twice in each of the reaper's visits, while its mark in its state slot is in
 * effect (marked: the visit has something to do and is marked inside the library): once it took
 * the commands submitted since its last visit (end false; taken: how many), and at its end (end
 * true). NULL: none (the default, and all the libraries ever have). */
typedef void (*pcl_visit_hook)(bool end, bool marked, unsigned taken);
void pcl_track_set_visit_hook(pcl_visit_hook fn) PCL_HIDDEN;
/* Reads the environment once and sets up the fork handler (idempotent). */
void pcl_init(void) PCL_HIDDEN;

/* ---- the one-shot note to the agent (send.c): what the library found at start */
void pcl_send_note(uint32_t flags, const char *detail) PCL_HIDDEN;

/* ---- the intercepted functions (intercept_*.c), same signatures as the API */
#define PCL_DECLARE(f) extern __typeof__(f) pcl_##f PCL_HIDDEN;
PCL_FNS(PCL_DECLARE)
#undef PCL_DECLARE

#endif
