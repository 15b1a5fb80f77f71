#include "cldag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t cldag_weight(const struct cldag_cmd *c)
{
	return c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;
}

struct key {
	int32_t pid;
	uint64_t id;
	size_t idx; /* input index */
};

struct ctx {
	struct key *order; /* sorted by (pid, id) */
	size_t n;
};

static int cmp_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Position in order of (pid, id), or SIZE_MAX. */
static size_t find(const struct ctx *c, int32_t pid, uint64_t id)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct key *m = &c->order[mid];
		if (m->pid < pid || (m->pid == pid && m->id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->n && c->order[lo].pid == pid && c->order[lo].id == id)
		return lo;
	return SIZE_MAX;
}

/* Last writer of each (pid, buffer): open addressing, keys never removed. */
struct writers {
	struct {
		int32_t pid;
		uint64_t mem;
		size_t pos; /* SIZE_MAX: empty slot */
	} *slot;
	size_t cap;
};

static size_t wslot(const struct writers *w, int32_t pid, uint64_t mem)
{
	uint64_t h = (mem ^ ((uint64_t)(uint32_t)pid << 32)) * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (w->cap - 1);
	while (w->slot[i].pos != SIZE_MAX && (w->slot[i].pid != pid || w->slot[i].mem != mem))
		i = (i + 1) & (w->cap - 1);
	return i;
}

struct preds {
	size_t *pos;
	unsigned *kinds;
	size_t n, cap;
};

static int add_pred(struct preds *p, size_t pos, unsigned kind)
{
	for (size_t i = 0; i < p->n; i++) {
		if (p->pos[i] == pos) {
			p->kinds[i] |= kind;
			return 0;
		}
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		size_t *np = realloc(p->pos, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		p->pos = np;
		unsigned *nk = realloc(p->kinds, cap * sizeof(*nk));
		if (!nk)
			return -ENOMEM;
		p->kinds = nk;
		p->cap = cap;
	}
	p->pos[p->n] = pos;
	p->kinds[p->n++] = kind;
	return 0;
}

static int add_edge(struct cldag *d, size_t *cap, size_t from, size_t to, unsigned kinds)
{
	if (d->n_edges == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;
		struct cldag_edge *ne = realloc(d->edges, nc * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		d->edges = ne;
		*cap = nc;
	}
	d->edges[d->n_edges++] = (struct cldag_edge){.from = from, .to = to, .kinds = kinds};
	d->n_wait_edges += (kinds & CLDAG_EDGE_WAIT) != 0;
	d->n_order_edges += (kinds & CLDAG_EDGE_ORDER) != 0;
	d->n_raw_edges += (kinds & CLDAG_EDGE_RAW) != 0;
	return 0;
}

int cldag_build(const struct cldag_cmd *cmds, size_t n, struct cldag *out)
{
	memset(out, 0, sizeof(*out));
	if (n > 0 && !cmds)
		return -EINVAL;
	out->n_nodes = n;
	struct ctx c = {.n = n};
	struct writers w = {0};
	struct preds p = {0};
	uint64_t *dist = NULL;
	size_t *best = NULL, edge_cap = 0, nmem = 0;
	int rc = -ENOMEM;
	for (size_t i = 0; i < n; i++)
		nmem += cmds[i].n_written;
	w.cap = 16;
	while (w.cap < 2 * nmem + 16)
		w.cap *= 2;
	c.order = malloc((n ? n : 1) * sizeof(*c.order));
	w.slot = malloc(w.cap * sizeof(*w.slot));
	dist = calloc(n ? n : 1, sizeof(*dist));
	best = malloc((n ? n : 1) * sizeof(*best));
	out->critical = calloc(n ? n : 1, sizeof(*out->critical));
	if (!c.order || !w.slot || !dist || !best || !out->critical)
		goto fail;
	for (size_t i = 0; i < w.cap; i++)
		w.slot[i].pos = SIZE_MAX;
	for (size_t i = 0; i < n; i++)
		c.order[i] = (struct key){.pid = cmds[i].pid, .id = cmds[i].id, .idx = i};
	qsort(c.order, n, sizeof(*c.order), cmp_key);

	/* Enqueue order is a topological order: every dependency is an earlier command. */
	for (size_t k = 0; k < n; k++) {
		const struct cldag_cmd *cmd = &cmds[c.order[k].idx];
		p.n = 0;
		for (size_t i = 0; i < cmd->n_wait; i++) {
			size_t f = find(&c, cmd->pid, cmd->wait_ids[i]);
			if (f == SIZE_MAX || f >= k) {
				out->n_unresolved++;
				continue;
			}
			if (add_pred(&p, f, CLDAG_EDGE_WAIT) < 0)
				goto fail;
		}
		if (cmd->prev_in_queue) {
			size_t f = find(&c, cmd->pid, cmd->prev_in_queue);
			if (f == SIZE_MAX || f >= k)
				out->n_unresolved++;
			else if (add_pred(&p, f, CLDAG_EDGE_ORDER) < 0)
				goto fail;
		}
		for (size_t i = 0; i < cmd->n_read; i++) {
			size_t s = wslot(&w, cmd->pid, cmd->mem_read[i]);
			if (w.slot[s].pos != SIZE_MAX && add_pred(&p, w.slot[s].pos, CLDAG_EDGE_RAW) < 0)
				goto fail;
		}
		for (size_t i = 0; i < cmd->n_written; i++) {
			size_t s = wslot(&w, cmd->pid, cmd->mem_written[i]);
			w.slot[s].pid = cmd->pid;
			w.slot[s].mem = cmd->mem_written[i];
			w.slot[s].pos = k;
		}
		uint64_t in = 0;
		best[k] = SIZE_MAX;
		for (size_t i = 0; i < p.n; i++) {
			if (add_edge(out, &edge_cap, c.order[p.pos[i]].idx, c.order[k].idx, p.kinds[i]) < 0)
				goto fail;
			if (best[k] == SIZE_MAX || dist[p.pos[i]] > in) {
				in = dist[p.pos[i]];
				best[k] = p.pos[i];
			}
		}
		uint64_t wgt = cldag_weight(cmd);
		dist[k] = in + wgt;
		out->work_ns += wgt;
	}

	size_t end = SIZE_MAX;
	for (size_t k = 0; k < n; k++)
		if (end == SIZE_MAX || dist[k] > dist[end])
			end = k;
	if (end != SIZE_MAX) {
		out->span_ns = dist[end];
		for (size_t k = end; k != SIZE_MAX; k = best[k])
			out->path_len++;
		out->path = malloc(out->path_len * sizeof(*out->path));
		if (!out->path)
			goto fail;
		size_t i = out->path_len;
		for (size_t k = end; k != SIZE_MAX; k = best[k]) {
			out->path[--i] = c.order[k].idx;
			out->critical[c.order[k].idx] = true;
		}
	}
	out->parallelism = out->span_ns ? (double)out->work_ns / (double)out->span_ns : 0;
	rc = 0;
	goto done;
fail:
	cldag_free(out);
done:
	free(c.order);
	free(w.slot);
	free(dist);
	free(best);
	free(p.pos);
	free(p.kinds);
	return rc;
}

void cldag_free(struct cldag *d)
{
	free(d->edges);
	free(d->critical);
	free(d->path);
	memset(d, 0, sizeof(*d));
}
