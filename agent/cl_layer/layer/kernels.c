/* Kernels as the capture library knows them: a declaration (name, program
 * hash, build options: what the report groups by) and what each argument
 * is. An argument is classified only from what the library saw the runtime
 * create and the app not yet release (tables.c): a value equal to a live
 * buffer, sub-buffer, image or pipe handle is that memory object, one equal
 * to a live sampler is a sampler, a NULL value with a size is __local
 * memory, clSetKernelArgSVMPointer gives SVM; any other value, whatever its
 * size, is a scalar, and is never handed to the runtime. Where the runtime
 * has argument information (clGetKernelArgInfo: the program was built with
 * -cl-kernel-arg-info, or the runtime keeps it anyway), a private (by-value)
 * argument is a scalar even when its bytes happen to equal a live handle, and
 * a const pointer is only read. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcl.h"
#include "table.h"

#define MAX_KDESC 65536u

enum qual_state { QUAL_UNKNOWN, QUAL_KNOWN, QUAL_NONE };

struct arg {
	uint8_t kind; /* enum pcl_arg_kind */
	uint8_t read, written;
	uint8_t qual; /* enum qual_state */
	uint8_t is_private, is_const;
	uint64_t mem_id;
};

struct kernel_node {
	struct pcl_node n;
	uint32_t kdesc;
	struct arg args[PCL_MAX_ARGS];
};

struct kdesc {
	struct pcl_kdesc d;
	uint64_t key; /* hash of all three fields, compared first */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct pcl_table kernels;
static struct kdesc *kdescs; /* [id - 1] */
static size_t nkdesc, capkdesc;

void pcl_kernels_after_fork(void)
{
	pthread_mutex_init(&lock, NULL);
}

/* Lock held. The declaration id of (name, hash, options); 0 when out of room. */
static uint32_t kdesc_intern(const char *name, uint64_t hash, const char *options)
{
	uint64_t key = pcl_hash(pcl_hash(PCL_HASH_INIT ^ hash, name, strlen(name) + 1), options, strlen(options));
	for (size_t i = 0; i < nkdesc; i++) {
		const struct kdesc *d = &kdescs[i];
		if (d->key == key && d->d.program_hash == hash && strcmp(d->d.name, name) == 0 &&
		    strcmp(d->d.options, options) == 0)
			return (uint32_t)(i + 1);
	}
	if (nkdesc == MAX_KDESC)
		return 0;
	if (nkdesc == capkdesc) {
		size_t cap = capkdesc ? capkdesc * 2 : 64;
		struct kdesc *nd = realloc(kdescs, cap * sizeof(*nd));
		if (!nd)
			return 0;
		kdescs = nd;
		capkdesc = cap;
	}
	struct kdesc *d = &kdescs[nkdesc++];
	memset(d, 0, sizeof(*d));
	d->key = key;
	d->d.id = (uint32_t)nkdesc;
	d->d.program_hash = hash;
	snprintf(d->d.name, sizeof(d->d.name), "%s", name);
	snprintf(d->d.options, sizeof(d->d.options), "%s", options);
	return d->d.id;
}

bool pcl_kdesc_get(uint32_t id, struct pcl_kdesc *out)
{
	pthread_mutex_lock(&lock);
	bool ok = id >= 1 && id <= nkdesc;
	if (ok)
		*out = kdescs[id - 1].d;
	pthread_mutex_unlock(&lock);
	return ok;
}

static void insert(cl_kernel k, const char *name, uint64_t hash, const char *options)
{
	struct kernel_node *n = calloc(1, sizeof(*n));
	pthread_mutex_lock(&lock);
	struct pcl_node *old = pcl_table_take(&kernels, k); /* a reused address */
	if (n) {
		pcl_table_put(&kernels, &n->n, k);
		n->kdesc = kdesc_intern(name, hash, options);
	}
	pthread_mutex_unlock(&lock);
	free(old);
}

void pcl_kernel_created(cl_kernel k, cl_program p, const char *name)
{
	char asked[PCL_MAX_NAME + 1], options[PCL_MAX_OPTIONS + 1] = "";
	uint64_t hash = 0;
	if (!name) /* clCreateKernelsInProgram: the runtime names the kernels it made */
		name = pcl_rt_kernel_name(k, asked, sizeof(asked)) ? asked : "?";
	pcl_program_lookup(p, &hash, options, sizeof(options));
	insert(k, name, hash, options);
}

void pcl_kernel_learn(cl_kernel k)
{
	char name[PCL_MAX_NAME + 1];
	if (!pcl_rt_kernel_name(k, name, sizeof(name)))
		snprintf(name, sizeof(name), "?");
	insert(k, name, 0, "");
}

void pcl_kernel_cloned(cl_kernel from, cl_kernel to)
{
	struct kernel_node *n = malloc(sizeof(*n));
	pthread_mutex_lock(&lock);
	struct kernel_node *src = (struct kernel_node *)pcl_table_find(&kernels, from);
	struct pcl_node *old = pcl_table_take(&kernels, to);
	if (n && src) {
		*n = *src; /* arguments are copied by clCloneKernel too */
		pcl_table_put(&kernels, &n->n, to);
		n = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(old);
	free(n);
}

void pcl_kernel_retained(cl_kernel k)
{
	pthread_mutex_lock(&lock);
	struct pcl_node *n = k ? pcl_table_find(&kernels, k) : NULL;
	if (n)
		n->refs++;
	pthread_mutex_unlock(&lock);
}

void pcl_kernel_released(cl_kernel k)
{
	struct pcl_node *gone = NULL;
	pthread_mutex_lock(&lock);
	struct pcl_node *n = k ? pcl_table_find(&kernels, k) : NULL;
	if (n && --n->refs == 0)
		gone = pcl_table_take(&kernels, k);
	pthread_mutex_unlock(&lock);
	free(gone);
}

/* The qualifiers of argument idx, asked once per kernel and argument. The
 * runtime has just accepted k and idx in the app's clSetKernelArg. */
static void qualifiers(cl_kernel k, cl_uint idx, struct arg *a)
{
	pthread_mutex_lock(&lock);
	struct kernel_node *n = (struct kernel_node *)pcl_table_find(&kernels, k);
	bool cached = n && n->args[idx].qual != QUAL_UNKNOWN;
	if (cached) {
		a->qual = n->args[idx].qual;
		a->is_private = n->args[idx].is_private;
		a->is_const = n->args[idx].is_const;
	}
	pthread_mutex_unlock(&lock);
	if (cached)
		return;
	cl_kernel_arg_address_qualifier aq;
	cl_kernel_arg_type_qualifier tq;
	if (pcl_rt_arg_qualifiers(k, idx, &aq, &tq)) {
		a->qual = QUAL_KNOWN;
		a->is_private = aq == CL_KERNEL_ARG_ADDRESS_PRIVATE;
		a->is_const = (tq & CL_KERNEL_ARG_TYPE_CONST) != 0 || aq == CL_KERNEL_ARG_ADDRESS_CONSTANT;
	} else {
		a->qual = QUAL_NONE;
	}
}

/* Read, written or both: from the memory's flags and, where the runtime tells, a const pointer. */
static void access_of(const struct pcl_mem_info *m, struct arg *a)
{
	a->read = 1;
	a->written = 1;
	if (m->flags & CL_MEM_READ_ONLY)
		a->written = 0;
	else if (m->flags & CL_MEM_WRITE_ONLY)
		a->read = 0;
	else if (a->qual == QUAL_KNOWN && a->is_const)
		a->written = 0;
}

static void store_arg(cl_kernel k, cl_uint idx, const struct arg *a)
{
	pthread_mutex_lock(&lock);
	struct kernel_node *n = (struct kernel_node *)pcl_table_find(&kernels, k);
	if (n)
		n->args[idx] = *a;
	pthread_mutex_unlock(&lock);
}

/* The kernel must be known to hold its arguments: learn it (the runtime accepted it). */
static void ensure_known(cl_kernel k)
{
	pthread_mutex_lock(&lock);
	bool known = pcl_table_find(&kernels, k) != NULL;
	pthread_mutex_unlock(&lock);
	if (!known)
		pcl_kernel_learn(k);
}

void pcl_kernel_set_arg(cl_kernel k, cl_uint idx, size_t size, const void *value)
{
	if (idx >= PCL_MAX_ARGS)
		return;
	ensure_known(k);
	struct arg a = {.kind = PCL_ARG_SCALAR};
	uintptr_t h = 0;
	if (!value)
		a.kind = size ? PCL_ARG_LOCAL : PCL_ARG_SCALAR; /* __local memory (or a NULL buffer) */
	else if (size == sizeof(cl_mem))
		memcpy(&h, value, sizeof(cl_mem)); /* the bytes the runtime read; maybe a handle */
	struct pcl_mem_info mi;
	if (h && pcl_mem_lookup((cl_mem)h, &mi)) {
		qualifiers(k, idx, &a);
		if (a.qual == QUAL_KNOWN && a.is_private) {
			a.kind = PCL_ARG_SCALAR; /* a by-value argument whose bytes equal a live handle */
		} else {
			a.kind = PCL_ARG_MEM;
			a.mem_id = mi.id;
			access_of(&mi, &a);
		}
	} else if (h && pcl_sampler_known((cl_sampler)h)) {
		a.kind = PCL_ARG_SAMPLER;
	}
	store_arg(k, idx, &a);
}

void pcl_kernel_set_arg_svm(cl_kernel k, cl_uint idx, const void *ptr)
{
	if (idx >= PCL_MAX_ARGS)
		return;
	ensure_known(k);
	struct arg a = {.kind = PCL_ARG_SVM};
	struct pcl_mem_info mi;
	if (ptr && pcl_svm_lookup(ptr, &mi)) {
		qualifiers(k, idx, &a);
		a.mem_id = mi.id;
		access_of(&mi, &a);
	}
	store_arg(k, idx, &a);
}

enum pcl_arg_kind pcl_kernel_arg_kind(cl_kernel k, cl_uint idx)
{
	enum pcl_arg_kind kind = PCL_ARG_UNSET;
	pthread_mutex_lock(&lock);
	struct kernel_node *n = (struct kernel_node *)pcl_table_find(&kernels, k);
	if (n && idx < PCL_MAX_ARGS)
		kind = n->args[idx].kind;
	pthread_mutex_unlock(&lock);
	return kind;
}

bool pcl_kernel_launch(cl_kernel k, struct pcl_cmd *c)
{
	pthread_mutex_lock(&lock);
	struct kernel_node *n = (struct kernel_node *)pcl_table_find(&kernels, k);
	if (n) {
		c->kernel = n->kdesc;
		for (uint32_t i = 0; i < PCL_MAX_ARGS; i++) {
			const struct arg *a = &n->args[i];
			if (!a->mem_id)
				continue;
			if (a->read)
				pcl_add_id(c->read, &c->n_read, a->mem_id);
			if (a->written)
				pcl_add_id(c->written, &c->n_written, a->mem_id);
		}
	}
	pthread_mutex_unlock(&lock);
	return n != NULL;
}
