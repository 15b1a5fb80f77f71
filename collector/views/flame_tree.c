/* flame_tree: merge stacks into a call tree keyed by (parent, name). */
#include "flame_tree.h"
#include "sat.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t key_hash(int32_t parent, const char *name)
{
	uint32_t h = 2166136261u ^ (uint32_t)parent * 0x9e3779b1u;
	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return h;
}

static int rehash(struct flame_tree *t, size_t cap)
{
	int32_t *h = malloc(cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		h[i] = -1;
	for (size_t i = 1; i < t->n; i++) {
		size_t j = key_hash(t->nodes[i].parent, t->nodes[i].name) & (cap - 1);
		while (h[j] >= 0)
			j = (j + 1) & (cap - 1);
		h[j] = (int32_t)i;
	}
	free(t->hash);
	t->hash = h;
	t->caphash = cap;
	return 0;
}

int flame_tree_init(struct flame_tree *t)
{
	memset(t, 0, sizeof(*t));
	t->cap = 256;
	t->nodes = calloc(t->cap, sizeof(*t->nodes));
	if (!t->nodes)
		return -ENOMEM;
	t->nodes[0] = (struct flame_node){.name = "all", .module = "", .parent = -1, .child = -1, .next = -1};
	t->n = 1;
	if (rehash(t, 1024) < 0) {
		free(t->nodes);
		return -ENOMEM;
	}
	return 0;
}

void flame_tree_free(struct flame_tree *t)
{
	free(t->nodes);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

/* The child of parent named name (created if new); -1 at the node limit, -ENOMEM. */
static int32_t child_of(struct flame_tree *t, int32_t parent, const char *name, const char *module)
{
	size_t j = key_hash(parent, name) & (t->caphash - 1);
	for (; t->hash[j] >= 0; j = (j + 1) & (t->caphash - 1)) {
		const struct flame_node *c = &t->nodes[t->hash[j]];
		if (c->parent == parent && strcmp(c->name, name) == 0)
			return t->hash[j];
	}
	if (t->n >= FLAME_MAX_NODES) {
		t->truncated = true;
		return -1;
	}
	if (t->n == t->cap) {
		struct flame_node *nn = realloc(t->nodes, t->cap * 2 * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		t->nodes = nn;
		t->cap *= 2;
	}
	int32_t id = (int32_t)t->n++;
	t->nodes[id] = (struct flame_node){.name = name, .module = module, .parent = parent,
					   .child = -1, .next = t->nodes[parent].child};
	t->nodes[parent].child = id;
	t->hash[j] = id;
	if (t->caphash < 2 * t->n && rehash(t, t->caphash * 2) < 0)
		return -ENOMEM;
	return id;
}

int flame_tree_add(struct flame_tree *t, const struct stack_set *s, int side, const struct flame_opts *o)
{
	side = side ? 1 : 0;
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct vstack *v = &s->stacks[i];
		int32_t cur = 0;
		sat_inc_u64(&t->nodes[0].total[side], v->count);
		sat_inc_u64(&t->total[side], v->count);
		if (o && o->process_level) {
			const char *comm = v->comm ? stack_set_str(s, v->comm) : "[unknown process]";
			int32_t c = child_of(t, cur, comm, "");
			if (c == -ENOMEM)
				return -ENOMEM;
			if (c < 0)
				goto self;
			cur = c;
			sat_inc_u64(&t->nodes[cur].total[side], v->count);
		}
		for (uint32_t k = 0; k < v->n; k++) {
			const struct vframe *f = &s->frames[v->first + k];
			int32_t c = child_of(t, cur, stack_set_str(s, f->name), stack_set_str(s, f->module));
			if (c == -ENOMEM)
				return -ENOMEM;
			if (c < 0)
				break;
			cur = c;
			sat_inc_u64(&t->nodes[cur].total[side], v->count);
		}
	self:
		sat_inc_u64(&t->nodes[cur].self[side], v->count);
	}
	return 0;
}

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct flame_tree *t = ctx;
	return strcmp(t->nodes[*(const int32_t *)a].name, t->nodes[*(const int32_t *)b].name);
}

int flame_tree_children(const struct flame_tree *t, int32_t i, int32_t **out)
{
	size_t n = 0;
	for (int32_t c = t->nodes[i].child; c >= 0; c = t->nodes[c].next)
		n++;
	*out = malloc((n ? n : 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	n = 0;
	for (int32_t c = t->nodes[i].child; c >= 0; c = t->nodes[c].next)
		(*out)[n++] = c;
	qsort_r(*out, n, sizeof(**out), by_name, (void *)t);
	return (int)n;
}
