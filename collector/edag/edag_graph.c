/* The materialised eDAG (on request, bounded): vertices and unique incoming
 * edges, found by the streaming engine's edge observer; its metrics are
 * recomputed by dynamic programming over the stored graph. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"

static int graph_edge(void *arg, uint64_t from, uint64_t to, enum edag_dep kind)
{
	struct edag_graph *g = arg;
	struct edag_gvertex *v = &g->v[to];
	for (uint32_t i = 0; i < v->nedges; i++)
		if (g->e[v->first_edge + i].from == from)
			return 0; /* one edge per (from, to): the first kind found */
	if (g->ne == g->cape) {
		size_t ncap = g->cape ? g->cape * 2 : 256;
		struct edag_gedge *ne = realloc(g->e, ncap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		g->e = ne;
		g->cape = ncap;
	}
	g->e[g->ne].from = from;
	g->e[g->ne].kind = (uint8_t)kind;
	g->ne++;
	v->nedges++;
	return 0;
}

int edag_graph_new(const struct edag_config *cfg, size_t max_vertices, struct edag_graph **out)
{
	*out = NULL;
	struct edag_graph *g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	g->max_vertices = max_vertices ? max_vertices : EDAG_GRAPH_MAX_DEFAULT;
	int rc = edag_new(cfg, &g->st);
	if (rc < 0) {
		free(g);
		return rc;
	}
	edag_set_edge_cb(g->st, graph_edge, g);
	*out = g;
	return 0;
}

void edag_graph_free(struct edag_graph *g)
{
	if (!g)
		return;
	edag_free(g->st);
	free(g->v);
	free(g->e);
	free(g);
}

int edag_graph_add(struct edag_graph *g, const struct edag_insn *in)
{
	if (g->nv >= g->max_vertices)
		return -E2BIG;
	if (g->nv == g->capv) {
		size_t ncap = g->capv ? g->capv * 2 : 256;
		if (ncap > g->max_vertices)
			ncap = g->max_vertices;
		struct edag_gvertex *nv = realloc(g->v, ncap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		g->v = nv;
		g->capv = ncap;
	}
	struct edag_gvertex *v = &g->v[g->nv];
	memset(v, 0, sizeof(*v));
	v->first_edge = (uint32_t)g->ne;
	struct edag_vertex vx;
	size_t ne0 = g->ne;
	int rc = edag_step(g->st, in, &vx);
	if (rc < 0) {
		g->ne = ne0;
		return rc == -ECANCELED ? -ENOMEM : rc;
	}
	v->pc = in->pc;
	v->addr = in->mem ? in->addr : 0;
	v->size = in->mem ? in->size : 0;
	v->cls = in->cls;
	v->memory = vx.memory;
	v->hit_level = (int8_t)vx.hit_level;
	v->cost = vx.cost;
	g->nv++;
	return 0;
}

void edag_graph_metrics(const struct edag_graph *g, struct edag_metrics *out)
{
	edag_metrics_get(g->st, out); /* cache counters, histogram widths; the rest is recomputed */
	uint64_t slice = out->by_time.width;
	uint64_t lmiss[EDAG_MAX_LEVELS], lhit[EDAG_MAX_LEVELS];
	memcpy(lmiss, out->level_miss, sizeof(lmiss));
	memcpy(lhit, out->level_hit, sizeof(lhit));
	memset(out, 0, sizeof(*out));
	memcpy(out->level_miss, lmiss, sizeof(lmiss));
	memcpy(out->level_hit, lhit, sizeof(lhit));
	out->by_depth.width = 1;
	out->by_time.width = slice;
	(void)slice;
	uint64_t *depth = calloc(g->nv + 1, sizeof(uint64_t)), *path = calloc(g->nv + 1, sizeof(uint64_t));
	uint64_t *fin = calloc(g->nv + 1, sizeof(uint64_t)), *comp = calloc(g->nv + 1, sizeof(uint64_t));
	if (!depth || !path || !fin || !comp)
		goto out;
	const struct edag_config *cfg = edag_state_config(g->st);
	for (size_t i = 0; i < g->nv; i++) {
		const struct edag_gvertex *v = &g->v[i];
		uint64_t d = 0, p = 0, f = 0, c = 0;
		for (uint32_t k = 0; k < v->nedges; k++) {
			const struct edag_gedge *e = &g->e[v->first_edge + k];
			uint64_t u = e->from;
			if (depth[u] > d)
				d = depth[u];
			if (path[u] > p)
				p = path[u];
			if (fin[u] > f || (fin[u] == f && comp[u] > c)) {
				f = fin[u];
				c = comp[u];
			}
			if (e->kind == EDAG_DEP_RAW_REG)
				out->edges_reg++;
			else if (e->kind == EDAG_DEP_RAW_MEM)
				out->edges_mem++;
			else
				out->edges_false++;
		}
		depth[i] = d + v->memory;
		path[i] = p + 1;
		fin[i] = f + v->cost;
		comp[i] = c + (v->memory ? 0 : v->cost);
		out->vertices++;
		out->accesses += v->size != 0;
		if (v->memory) {
			out->W++;
			/* same layering as the engine, recomputed from this graph's times */
			struct edag_histogram *hs[2] = {&out->by_depth, &out->by_time};
			uint64_t xs[2] = {depth[i] - 1, fin[i] - v->cost};
			for (int h = 0; h < 2; h++) {
				struct edag_histogram *H = hs[h];
				uint64_t b = xs[h] / H->width;
				while (b >= EDAG_LAYER_BINS) {
					for (unsigned k = 0; k < EDAG_LAYER_BINS / 2; k++) {
						H->count[k] = H->count[2 * k] + H->count[2 * k + 1];
						H->bytes[k] = H->bytes[2 * k] + H->bytes[2 * k + 1];
					}
					memset(&H->count[EDAG_LAYER_BINS / 2], 0, sizeof(H->count) / 2);
					memset(&H->bytes[EDAG_LAYER_BINS / 2], 0, sizeof(H->bytes) / 2);
					H->nbins = (H->nbins + 1) / 2;
					H->width *= 2;
					b = xs[h] / H->width;
				}
				H->count[b]++;
				H->bytes[b] += v->size;
				if (b + 1 > H->nbins)
					H->nbins = (uint32_t)b + 1;
			}
		}
		if (depth[i] > out->D)
			out->D = depth[i];
		if (path[i] > out->cp_vertices)
			out->cp_vertices = path[i];
		if (fin[i] > out->cp_cost || (fin[i] == out->cp_cost && comp[i] > out->cp_compute)) {
			out->cp_cost = fin[i];
			out->cp_compute = comp[i];
		}
	}
	out->parallelism = out->cp_vertices ? (double)out->vertices / (double)out->cp_vertices : 0;
	out->cp_memory = (out->cp_cost - out->cp_compute) / cfg->alpha0;
out:
	free(depth);
	free(path);
	free(fin);
	free(comp);
}
