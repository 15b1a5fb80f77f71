/* Object tables of the capture library: what the layer knows about the
 * app's queues, programs, kernels (name, buffer arguments), buffers (id,
 * size, flags), events (which command they belong to) and mapped pointers.
 * Keyed by the OpenCL handle. A create call replaces a stale entry of a
 * reused address; a release that drops the last reference removes it. One
 * lock; every operation is short. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcl.h"

#define NBUCKETS 1024u
#define EVENT_SLOTS 16384u

enum kind { K_QUEUE, K_PROGRAM, K_KERNEL, K_MEM, K_MAP, K__N };

struct node {
	const void *key;
	struct node *next;
	union {
		struct pcl_queue_info q;
		struct {
			uint64_t hash;
			char options[PCL_MAX_OPTIONS + 1];
		} prog;
		struct pcl_kernel_info *k;
		struct pcl_mem_info m;
		struct {
			cl_mem mem;
			uint64_t bytes;
			bool write;
		} map;
	} v;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *buckets[K__N][NBUCKETS];
static uint32_t next_queue_id = 1;
static uint64_t next_mem_id = 1;
static struct {
	const void *ev;
	uint64_t cmd;
} events[EVENT_SLOTS];

static size_t slot(const void *key, size_t n)
{
	uint64_t x = (uint64_t)(uintptr_t)key; /* 64-bit mixing on 32-bit boards too */
	x ^= x >> 17;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 40) % n;
}

static struct node *find(enum kind k, const void *key)
{
	for (struct node *n = buckets[k][slot(key, NBUCKETS)]; n; n = n->next)
		if (n->key == key)
			return n;
	return NULL;
}

static void drop(enum kind k, const void *key)
{
	struct node **pp = &buckets[k][slot(key, NBUCKETS)];
	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->key == key) {
			struct node *n = *pp;
			*pp = n->next;
			if (k == K_KERNEL)
				free(n->v.k);
			free(n);
			return;
		}
	}
}

/* A fresh node for key (a stale one is replaced); NULL when out of memory. */
static struct node *fresh(enum kind k, const void *key)
{
	drop(k, key);
	struct node *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->key = key;
	size_t b = slot(key, NBUCKETS);
	n->next = buckets[k][b];
	buckets[k][b] = n;
	return n;
}

uint64_t pcl_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ---------------------------------------------------------------- queues */
static void queue_insert(cl_command_queue q, bool in_order, bool forced)
{
	struct node *n = fresh(K_QUEUE, q);
	if (!n)
		return;
	n->v.q.id = next_queue_id++;
	n->v.q.in_order = in_order;
	n->v.q.forced_profiling = forced;
}

void pcl_queue_created(cl_command_queue q, bool in_order, bool forced)
{
	pthread_mutex_lock(&lock);
	queue_insert(q, in_order, forced);
	pthread_mutex_unlock(&lock);
}

bool pcl_queue_next(cl_command_queue q, uint64_t cmd, struct pcl_queue_info *out)
{
	pthread_mutex_lock(&lock);
	struct node *n = find(K_QUEUE, q);
	if (!n) {
		/* Created before the layer saw it: ask the queue. */
		cl_command_queue_properties props = 0;
		pcl_next.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL);
		queue_insert(q, !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), false);
		n = find(K_QUEUE, q);
	}
	bool ok = n != NULL;
	if (ok) {
		*out = n->v.q;
		if (n->v.q.in_order)
			n->v.q.last_cmd = cmd;
		else
			out->last_cmd = 0;
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

void pcl_queue_released(cl_command_queue q)
{
	pthread_mutex_lock(&lock);
	drop(K_QUEUE, q);
	pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- programs */
void pcl_program_created(cl_program p, uint64_t hash)
{
	pthread_mutex_lock(&lock);
	struct node *n = fresh(K_PROGRAM, p);
	if (n)
		n->v.prog.hash = hash;
	pthread_mutex_unlock(&lock);
}

void pcl_program_built(cl_program p, const char *options)
{
	pthread_mutex_lock(&lock);
	struct node *n = find(K_PROGRAM, p);
	if (!n && (n = fresh(K_PROGRAM, p)) != NULL)
		n->v.prog.hash = 0;
	if (n)
		snprintf(n->v.prog.options, sizeof(n->v.prog.options), "%s", options ? options : "");
	pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- kernels */
static struct pcl_kernel_info *kernel_get(cl_kernel k, bool replace)
{
	struct node *n = replace ? NULL : find(K_KERNEL, k);
	if (n)
		return n->v.k;
	struct pcl_kernel_info *ki = calloc(1, sizeof(*ki));
	if (!ki)
		return NULL;
	if (pcl_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof(ki->name), ki->name, NULL) != CL_SUCCESS)
		snprintf(ki->name, sizeof(ki->name), "kernel@%p", (void *)k);
	ki->name[PCL_MAX_NAME] = 0;
	cl_uint nargs = 0;
	pcl_next.clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(nargs), &nargs, NULL);
	ki->nargs = nargs > PCL_MAX_ARGS ? PCL_MAX_ARGS : nargs;
	cl_program prog = NULL;
	if (pcl_next.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof(prog), &prog, NULL) == CL_SUCCESS && prog) {
		struct node *pn = find(K_PROGRAM, prog);
		if (pn) {
			ki->program_hash = pn->v.prog.hash;
			memcpy(ki->options, pn->v.prog.options, sizeof(ki->options));
		}
	}
	n = fresh(K_KERNEL, k);
	if (!n) {
		free(ki);
		return NULL;
	}
	n->v.k = ki;
	return ki;
}

void pcl_kernel_created(cl_kernel k)
{
	pthread_mutex_lock(&lock);
	kernel_get(k, true);
	pthread_mutex_unlock(&lock);
}

/* Read, written or both: from the buffer's flags and, where the driver
 * tells, the argument's const qualifier. */
static void arg_access(cl_kernel k, cl_uint idx, const struct pcl_mem_info *m, struct pcl_arg *a)
{
	a->read = 1;
	a->written = 1;
	if (m->flags & CL_MEM_READ_ONLY) {
		a->written = 0;
		return;
	}
	if (m->flags & CL_MEM_WRITE_ONLY) {
		a->read = 0;
		return;
	}
	cl_kernel_arg_type_qualifier tq = 0;
	if (pcl_next.clGetKernelArgInfo &&
	    pcl_next.clGetKernelArgInfo(k, idx, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof(tq), &tq, NULL) == CL_SUCCESS &&
	    (tq & CL_KERNEL_ARG_TYPE_CONST))
		a->written = 0;
}

static bool mem_find(cl_mem m, struct pcl_mem_info *out);

void pcl_kernel_set_arg(cl_kernel k, cl_uint idx, size_t size, const void *value)
{
	pthread_mutex_lock(&lock);
	struct pcl_kernel_info *ki = kernel_get(k, false);
	if (ki && idx < PCL_MAX_ARGS) {
		struct pcl_arg *a = &ki->args[idx];
		memset(a, 0, sizeof(*a));
		struct pcl_mem_info mi;
		if (size == sizeof(cl_mem) && value && *(const cl_mem *)value &&
		    mem_find(*(const cl_mem *)value, &mi)) {
			a->mem_id = mi.id;
			arg_access(k, idx, &mi, a);
		}
		if (idx >= ki->nargs)
			ki->nargs = idx + 1;
	}
	pthread_mutex_unlock(&lock);
}

bool pcl_kernel_snapshot(cl_kernel k, struct pcl_kernel_info *out)
{
	pthread_mutex_lock(&lock);
	struct pcl_kernel_info *ki = kernel_get(k, false);
	if (ki)
		*out = *ki;
	pthread_mutex_unlock(&lock);
	return ki != NULL;
}

void pcl_kernel_released(cl_kernel k)
{
	pthread_mutex_lock(&lock);
	drop(K_KERNEL, k);
	pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- buffers */
static struct node *mem_insert(cl_mem m)
{
	struct node *n = fresh(K_MEM, m);
	if (!n)
		return NULL;
	n->v.m.id = next_mem_id++;
	size_t size = 0;
	pcl_next.clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof(size), &size, NULL);
	n->v.m.size = size;
	pcl_next.clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof(n->v.m.flags), &n->v.m.flags, NULL);
	return n;
}

/* Lock held. Buffers the layer did not see created are learned on first use. */
static bool mem_find(cl_mem m, struct pcl_mem_info *out)
{
	struct node *n = find(K_MEM, m);
	if (!n) {
		cl_mem_object_type t = 0;
		if (pcl_next.clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof(t), &t, NULL) != CL_SUCCESS ||
		    t != CL_MEM_OBJECT_BUFFER)
			return false; /* an image, a sampler or not a cl_mem at all */
		n = mem_insert(m);
	}
	if (n)
		*out = n->v.m;
	return n != NULL;
}

void pcl_mem_created(cl_mem m)
{
	pthread_mutex_lock(&lock);
	mem_insert(m);
	pthread_mutex_unlock(&lock);
}

bool pcl_mem_lookup(cl_mem m, struct pcl_mem_info *out)
{
	pthread_mutex_lock(&lock);
	bool ok = m && mem_find(m, out);
	pthread_mutex_unlock(&lock);
	return ok;
}

void pcl_mem_released(cl_mem m)
{
	pthread_mutex_lock(&lock);
	drop(K_MEM, m);
	pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- mapped pointers */
void pcl_map_remember(void *ptr, cl_mem m, uint64_t bytes, bool write)
{
	pthread_mutex_lock(&lock);
	struct node *n = fresh(K_MAP, ptr);
	if (n) {
		n->v.map.mem = m;
		n->v.map.bytes = bytes;
		n->v.map.write = write;
	}
	pthread_mutex_unlock(&lock);
}

bool pcl_map_forget(void *ptr, cl_mem *m, uint64_t *bytes, bool *write)
{
	pthread_mutex_lock(&lock);
	struct node *n = find(K_MAP, ptr);
	bool ok = n != NULL;
	if (ok) {
		*m = n->v.map.mem;
		*bytes = n->v.map.bytes;
		*write = n->v.map.write;
		drop(K_MAP, ptr);
	}
	pthread_mutex_unlock(&lock);
	return ok;
}

/* ---------------------------------------------------------------- events
 * Direct-mapped: an event handle maps to the command that created it. An
 * entry is only ever overwritten by a newer event (a reused address, or a
 * collision, which loses one dependency edge at worst). */
void pcl_event_map(cl_event e, uint64_t cmd)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	events[i].ev = e;
	events[i].cmd = cmd;
	pthread_mutex_unlock(&lock);
}

uint64_t pcl_event_cmd(cl_event e)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	uint64_t cmd = events[i].ev == e ? events[i].cmd : 0;
	pthread_mutex_unlock(&lock);
	return cmd;
}
