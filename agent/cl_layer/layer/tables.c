/* Object tables of the capture library: the app's queues, programs, memory
 * objects (buffers, sub-buffers, images, pipes), samplers, SVM allocations,
 * events (which command each belongs to) and mapped pointers, as the runtime
 * created them for the app. Keyed by the handle (SVM by address range). An
 * entry lives from the create call to the app's last release, counted with
 * the app's own clRetain* / clRelease* calls; a create that returns an
 * address still in the table (the runtime reused it) replaces the entry.
 * Nothing here calls the runtime except pcl_queue_learn (runtime.c). One
 * lock; every operation is short. The hash table itself (pcl_table_*) is
 * shared with kernels.c. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcl.h"
#include "table.h"

#define EVENT_SLOTS 16384u
#define SVM_MAX 4096u

static size_t slot(const void *key, size_t n)
{
	uint64_t x = (uint64_t)(uintptr_t)key; /* 64-bit mixing on 32-bit boards too */
	x ^= x >> 17;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 40) % n;
}

/* ---------------------------------------------------------------- the hash table */
struct pcl_node *pcl_table_find(struct pcl_table *t, const void *key)
{
	for (struct pcl_node *n = t->b[slot(key, PCL_TABLE_BUCKETS)]; n; n = n->next)
		if (n->key == key)
			return n;
	return NULL;
}

struct pcl_node *pcl_table_take(struct pcl_table *t, const void *key)
{
	for (struct pcl_node **pp = &t->b[slot(key, PCL_TABLE_BUCKETS)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->key == key) {
			struct pcl_node *n = *pp;
			*pp = n->next;
			return n;
		}
	}
	return NULL;
}

void pcl_table_put(struct pcl_table *t, struct pcl_node *n, const void *key)
{
	n->key = key;
	n->refs = 1;
	size_t b = slot(key, PCL_TABLE_BUCKETS);
	n->next = t->b[b];
	t->b[b] = n;
}

/* ---------------------------------------------------------------- tables */
struct queue_node {
	struct pcl_node n;
	struct pcl_queue_info q;
};

struct program_node {
	struct pcl_node n;
	uint64_t hash;
	char options[PCL_MAX_OPTIONS + 1];
};

struct mem_node {
	struct pcl_node n;
	struct pcl_mem_info m;
};

struct map_node {
	struct pcl_node n;
	cl_mem mem;
	uint64_t bytes;
	bool write;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pcl_table tables[PCL_OBJ__N], maps;
static uint32_t next_queue_id = 1;
static _Atomic uint32_t forced_queues; /* known queues the layer made profiling */
static _Atomic uint64_t queues_gen = 1; /* changes whenever a queue enters or leaves the table */
static __thread const void *id_queue;	/* this thread's last pcl_queue_id: the handle, */
static __thread uint32_t id_id;		/* its id, */
static __thread uint64_t id_gen;	/* and queues_gen then */
static uint64_t next_mem_id = 1;
static struct {
	const void *ev;
	uint64_t cmd;
	uint32_t refs;	   /* the app's references */
	uint32_t queue_id; /* its command's queue (0: not known) */
	uint8_t layer;	   /* PCL_EV_*: the library's own reference */
} events[EVENT_SLOTS];
static struct {
	uintptr_t lo, hi; /* [lo, hi) */
	struct pcl_mem_info m;
} svm[SVM_MAX];
static size_t nsvm;

void pcl_tables_after_fork(void)
{
	pthread_mutex_init(&lock, NULL); /* another thread may have held it at fork() */
}

/* A node leaves its table (lock held). */
static void forget(enum pcl_obj kind, struct pcl_node *n)
{
	if (n && kind == PCL_OBJ_QUEUE && ((struct queue_node *)n)->q.forced_profiling)
		atomic_fetch_sub(&forced_queues, 1);
	if (n && kind == PCL_OBJ_QUEUE)
		atomic_fetch_add(&queues_gen, 1);
	free(n);
}

/* A fresh zeroed node of size bytes for key (a stale entry of a reused address is dropped). */
static void *fresh(enum pcl_obj kind, const void *key, size_t size)
{
	forget(kind, pcl_table_take(&tables[kind], key));
	struct pcl_node *n = calloc(1, size);
	if (n)
		pcl_table_put(&tables[kind], n, key);
	return n;
}

void pcl_retained(enum pcl_obj kind, const void *h)
{
	pthread_mutex_lock(&lock);
	struct pcl_node *n = h ? pcl_table_find(&tables[kind], h) : NULL;
	if (n)
		n->refs++;
	pthread_mutex_unlock(&lock);
}

void pcl_released(enum pcl_obj kind, const void *h)
{
	pthread_mutex_lock(&lock);
	struct pcl_node *n = h ? pcl_table_find(&tables[kind], h) : NULL;
	if (n && --n->refs == 0)
		forget(kind, pcl_table_take(&tables[kind], h));
	pthread_mutex_unlock(&lock);
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
	struct queue_node *n = fresh(PCL_OBJ_QUEUE, q, sizeof(*n));
	if (!n)
		return;
	n->q.id = next_queue_id++;
	atomic_fetch_add(&queues_gen, 1);
	n->q.in_order = in_order;
	n->q.forced_profiling = forced;
	if (forced)
		atomic_fetch_add(&forced_queues, 1);
}

bool pcl_queues_forced(void)
{
	return atomic_load_explicit(&forced_queues, memory_order_relaxed) != 0;
}

void pcl_queue_created(cl_command_queue q, bool in_order, bool forced)
{
	pthread_mutex_lock(&lock);
	queue_insert(q, in_order, forced);
	pthread_mutex_unlock(&lock);
}

/* Lock held. */
static bool queue_next(cl_command_queue q, uint64_t cmd, struct pcl_queue_info *out)
{
	struct queue_node *n = (struct queue_node *)pcl_table_find(&tables[PCL_OBJ_QUEUE], q);
	if (!n)
		return false;
	*out = n->q;
	if (n->q.in_order)
		n->q.last_cmd = cmd;
	else
		out->last_cmd = 0;
	return true;
}

bool pcl_queue_lookup(cl_command_queue q, struct pcl_queue_info *out)
{
	pthread_mutex_lock(&lock);
	struct queue_node *n = (struct queue_node *)pcl_table_find(&tables[PCL_OBJ_QUEUE], q);
	if (n)
		*out = n->q;
	pthread_mutex_unlock(&lock);
	return n != NULL;
}

uint32_t pcl_queue_id(cl_command_queue q)
{
	/* The generation is read before the look-up: a queue that comes or goes after it makes the
	 * next call look again. */
	uint64_t gen = atomic_load(&queues_gen);
	if (q && q == id_queue && gen == id_gen)
		return id_id;
	struct pcl_queue_info qi;
	uint32_t id = pcl_queue_lookup(q, &qi) ? qi.id : 0;
	id_queue = q;
	id_id = id;
	id_gen = gen;
	return id;
}

void pcl_queue_props_added(cl_command_queue q, uint8_t how)
{
	pthread_mutex_lock(&lock);
	struct queue_node *n = (struct queue_node *)pcl_table_find(&tables[PCL_OBJ_QUEUE], q);
	if (n)
		n->q.props_added = how;
	pthread_mutex_unlock(&lock);
}

bool pcl_queue_next(cl_command_queue q, uint64_t cmd, struct pcl_queue_info *out)
{
	pthread_mutex_lock(&lock);
	bool ok = queue_next(q, cmd, out);
	pthread_mutex_unlock(&lock);
	return ok;
}

void pcl_queue_learn(cl_command_queue q, uint64_t cmd, struct pcl_queue_info *out)
{
	/* The runtime has just accepted q in an enqueue: it is a queue, and may be asked. */
	cl_command_queue_properties props = pcl_rt_queue_properties(q);
	pthread_mutex_lock(&lock);
	if (!pcl_table_find(&tables[PCL_OBJ_QUEUE], q))
		queue_insert(q, !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), false);
	if (!queue_next(q, cmd, out))
		memset(out, 0, sizeof(*out));
	pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- programs */
void pcl_program_created(cl_program p, uint64_t hash)
{
	pthread_mutex_lock(&lock);
	struct program_node *n = fresh(PCL_OBJ_PROGRAM, p, sizeof(*n));
	if (n)
		n->hash = hash;
	pthread_mutex_unlock(&lock);
}

void pcl_program_built(cl_program p, const char *options)
{
	pthread_mutex_lock(&lock);
	struct program_node *n = (struct program_node *)pcl_table_find(&tables[PCL_OBJ_PROGRAM], p);
	if (n)
		snprintf(n->options, sizeof(n->options), "%s", options ? options : "");
	pthread_mutex_unlock(&lock);
}

bool pcl_program_lookup(cl_program p, uint64_t *hash, char *options, size_t cap)
{
	pthread_mutex_lock(&lock);
	struct program_node *n = (struct program_node *)pcl_table_find(&tables[PCL_OBJ_PROGRAM], p);
	if (n) {
		*hash = n->hash;
		snprintf(options, cap, "%s", n->options);
	}
	pthread_mutex_unlock(&lock);
	return n != NULL;
}

/* ---------------------------------------------------------------- memory objects, samplers */
void pcl_mem_created(cl_mem m, enum pcl_mem_kind kind, cl_mem_flags flags, uint64_t size, cl_mem parent)
{
	pthread_mutex_lock(&lock);
	struct mem_node *pn = parent ? (struct mem_node *)pcl_table_find(&tables[PCL_OBJ_MEM], parent) : NULL;
	struct mem_node *n = fresh(PCL_OBJ_MEM, m, sizeof(*n));
	if (n) {
		n->m.id = pn ? pn->m.id : next_mem_id++;
		n->m.size = size;
		n->m.flags = flags;
		n->m.kind = (uint8_t)kind;
	}
	pthread_mutex_unlock(&lock);
}

bool pcl_mem_lookup(cl_mem m, struct pcl_mem_info *out)
{
	pthread_mutex_lock(&lock);
	struct mem_node *n = m ? (struct mem_node *)pcl_table_find(&tables[PCL_OBJ_MEM], m) : NULL;
	if (n)
		*out = n->m;
	pthread_mutex_unlock(&lock);
	return n != NULL;
}

void pcl_sampler_created(cl_sampler s)
{
	pthread_mutex_lock(&lock);
	fresh(PCL_OBJ_SAMPLER, s, sizeof(struct pcl_node));
	pthread_mutex_unlock(&lock);
}

bool pcl_sampler_known(cl_sampler s)
{
	pthread_mutex_lock(&lock);
	bool ok = s && pcl_table_find(&tables[PCL_OBJ_SAMPLER], s) != NULL;
	pthread_mutex_unlock(&lock);
	return ok;
}

/* ---------------------------------------------------------------- shared virtual memory */
void pcl_svm_allocated(void *p, size_t size, cl_svm_mem_flags flags)
{
	pthread_mutex_lock(&lock);
	if (nsvm < SVM_MAX) {
		svm[nsvm].lo = (uintptr_t)p;
		svm[nsvm].hi = (uintptr_t)p + size;
		svm[nsvm].m = (struct pcl_mem_info){.id = next_mem_id++, .size = size, .flags = flags,
						     .kind = PCL_MEM_SVM};
		nsvm++;
	}
	pthread_mutex_unlock(&lock);
}

void pcl_svm_freed(void *p)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nsvm; i++)
		if (svm[i].lo == (uintptr_t)p) {
			svm[i] = svm[--nsvm];
			break;
		}
	pthread_mutex_unlock(&lock);
}

bool pcl_svm_lookup(const void *p, struct pcl_mem_info *out)
{
	uintptr_t a = (uintptr_t)p;
	bool ok = false;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nsvm && !ok; i++)
		if (a >= svm[i].lo && a < svm[i].hi) {
			*out = svm[i].m;
			ok = true;
		}
	pthread_mutex_unlock(&lock);
	return ok;
}

/* ---------------------------------------------------------------- mapped pointers */
void pcl_map_remember(void *ptr, cl_mem m, uint64_t bytes, bool write)
{
	pthread_mutex_lock(&lock);
	free(pcl_table_take(&maps, ptr));
	struct map_node *n = calloc(1, sizeof(*n));
	if (n) {
		pcl_table_put(&maps, &n->n, ptr);
		n->mem = m;
		n->bytes = bytes;
		n->write = write;
	}
	pthread_mutex_unlock(&lock);
}

bool pcl_map_forget(void *ptr, cl_mem *m, uint64_t *bytes, bool *write)
{
	pthread_mutex_lock(&lock);
	struct map_node *n = (struct map_node *)pcl_table_take(&maps, ptr);
	if (n) {
		*m = n->mem;
		*bytes = n->bytes;
		*write = n->write;
		free(n);
	}
	pthread_mutex_unlock(&lock);
	return n != NULL;
}

/* ---------------------------------------------------------------- events
 * Direct-mapped: an event the app got from an enqueue maps to its command
 * while the app holds a reference. A collision overwrites the older entry
 * (one dependency edge lost at worst). */
void pcl_event_map(cl_event e, uint64_t cmd, uint32_t queue_id)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	events[i].ev = e;
	events[i].cmd = cmd;
	events[i].queue_id = queue_id;
	events[i].refs = 1;
	events[i].layer = PCL_EV_HELD; /* pcl_track takes the library's reference next, before the app has e */
	pthread_mutex_unlock(&lock);
}

void pcl_event_layer_set(cl_event e, uint8_t state)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	if (e && events[i].ev == e)
		events[i].layer = state;
	pthread_mutex_unlock(&lock);
}

uint8_t pcl_event_layer(cl_event e)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	uint8_t st = e && events[i].ev == e ? events[i].layer : PCL_EV_UNKNOWN;
	pthread_mutex_unlock(&lock);
	return st;
}

uint64_t pcl_event_cmd(cl_event e)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	uint64_t cmd = e && events[i].ev == e ? events[i].cmd : 0;
	pthread_mutex_unlock(&lock);
	return cmd;
}

uint32_t pcl_event_queue_id(cl_event e)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	uint32_t id = e && events[i].ev == e ? events[i].queue_id : 0;
	pthread_mutex_unlock(&lock);
	return id;
}

void pcl_event_retained(cl_event e)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	if (e && events[i].ev == e)
		events[i].refs++;
	pthread_mutex_unlock(&lock);
}

void pcl_event_released(cl_event e)
{
	size_t i = slot(e, EVENT_SLOTS);
	pthread_mutex_lock(&lock);
	if (e && events[i].ev == e && --events[i].refs == 0)
		events[i].ev = NULL;
	pthread_mutex_unlock(&lock);
}
