/* stack_set: interned strings (FNV-1a, open addressing), frames, stacks and
 * the CPU-over-time points that the views read. */
#include "stacks.h"
#include "sat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void stack_set_init(struct stack_set *s)
{
	memset(s, 0, sizeof(*s));
}

void stack_set_free(struct stack_set *s)
{
	for (size_t i = 0; i < s->nstrs; i++)
		free(s->strs[i]);
	free(s->strs);
	free(s->hash);
	free(s->frames);
	free(s->stacks);
	free(s->points);
	memset(s, 0, sizeof(*s));
}

static uint32_t fnv(const char *p)
{
	uint32_t h = 2166136261u;
	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 64;
	while (nc < need)
		nc *= 2;
	void *nv = realloc(*v, nc * elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

static int rehash(struct stack_set *s, size_t cap)
{
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t i = 1; i < s->nstrs; i++) {
		size_t j = fnv(s->strs[i]) & (cap - 1);
		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = (uint32_t)i;
	}
	free(s->hash);
	s->hash = h;
	s->caphash = cap;
	return 0;
}

int64_t stack_set_intern(struct stack_set *s, const char *str)
{
	if (s->nstrs == 0) {
		if (grow((void **)&s->strs, &s->capstrs, 1, sizeof(char *)) < 0 || !(s->strs[0] = strdup("")))
			return -ENOMEM;
		s->nstrs = 1;
	}
	if (!str || !*str)
		return 0;
	if (s->caphash < 2 * (s->nstrs + 1) && rehash(s, s->caphash ? s->caphash * 2 : 256) < 0)
		return -ENOMEM;
	size_t j = fnv(str) & (s->caphash - 1);
	for (; s->hash[j]; j = (j + 1) & (s->caphash - 1))
		if (strcmp(s->strs[s->hash[j]], str) == 0)
			return s->hash[j];
	if (s->nstrs >= UINT32_MAX || grow((void **)&s->strs, &s->capstrs, s->nstrs + 1, sizeof(char *)) < 0)
		return -ENOMEM;
	char *c = strdup(str);
	if (!c)
		return -ENOMEM;
	s->strs[s->nstrs] = c;
	s->hash[j] = (uint32_t)s->nstrs;
	return (int64_t)s->nstrs++;
}

static int add_stack(struct stack_set *s, size_t first, size_t n, uint64_t count, const struct stack_keys *k)
{
	if (grow((void **)&s->stacks, &s->capstacks, s->nstacks + 1, sizeof(*s->stacks)) < 0)
		return -ENOMEM;
	struct vstack *v = &s->stacks[s->nstacks];
	memset(v, 0, sizeof(*v));
	v->first = first;
	v->n = (uint32_t)n;
	v->count = count;
	if (k) {
		int64_t c = stack_set_intern(s, k->comm), t = stack_set_intern(s, k->thread),
			a = stack_set_intern(s, k->agent);
		if (c < 0 || t < 0 || a < 0)
			return -ENOMEM;
		v->comm = (uint32_t)c;
		v->thread = (uint32_t)t;
		v->agent = (uint32_t)a;
		v->pid = k->pid;
		v->tid = k->tid;
	}
	s->nstacks++;
	sat_inc_u64(&s->total, count);
	return 0;
}

int stack_set_add(struct stack_set *s, const struct sym_frame *leaf_first, size_t n, uint64_t count,
		  const struct stack_keys *k)
{
	if (n == 0 || n > STACKS_MAX_FRAMES)
		return -EINVAL;
	if (grow((void **)&s->frames, &s->capframes, s->nframes + n, sizeof(*s->frames)) < 0)
		return -ENOMEM;
	size_t first = s->nframes;
	for (size_t i = 0; i < n; i++) {
		const struct sym_frame *f = &leaf_first[n - 1 - i];
		int64_t name = stack_set_intern(s, f->name), raw = stack_set_intern(s, f->raw),
			mod = stack_set_intern(s, f->module), path = stack_set_intern(s, f->path),
			bid = stack_set_intern(s, f->build_id), src = stack_set_intern(s, f->src_file);
		if (name < 0 || raw < 0 || mod < 0 || path < 0 || bid < 0 || src < 0)
			return -ENOMEM;
		s->frames[first + i] = (struct vframe){.name = (uint32_t)name, .raw = (uint32_t)raw,
						       .module = (uint32_t)mod, .path = (uint32_t)path,
						       .build_id = (uint32_t)bid, .src_file = (uint32_t)src,
						       .src_line = f->src_line, .ip = f->ip, .file_off = f->file_off,
						       .resolved = f->resolved != 0,
						       .kernel = f->module && strcmp(f->module, "[kernel]") == 0};
	}
	s->nframes += n;
	return add_stack(s, first, n, count, k);
}

int stack_set_add_names(struct stack_set *s, const char *const *root_first, size_t n, uint64_t count,
			const struct stack_keys *k)
{
	if (n == 0 || n > STACKS_MAX_FRAMES)
		return -EINVAL;
	struct sym_frame fr[STACKS_MAX_FRAMES];
	for (size_t i = 0; i < n; i++)
		fr[n - 1 - i] = (struct sym_frame){.name = root_first[i], .module = "[unknown]", .resolved = 1};
	return stack_set_add(s, fr, n, count, k);
}

int stack_set_add_point(struct stack_set *s, int64_t t_ns, int64_t dur_ns, uint64_t count, const char *track)
{
	int64_t t = stack_set_intern(s, track);
	if (t < 0 || grow((void **)&s->points, &s->cappoints, s->npoints + 1, sizeof(*s->points)) < 0)
		return -ENOMEM;
	s->points[s->npoints++] = (struct vpoint){t_ns, dur_ns, count, (uint32_t)t};
	return 0;
}
