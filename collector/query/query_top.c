/* query_top(): a result's stacks grouped into top rows with self and total
 * counts (query.h). A row's key: function = (function, module, process),
 * module, process (comm), thread = (process, thread name, tid), agent, stack
 * = the folded call chain. self counts the stacks whose leaf is in the row,
 * total the stacks that have the row anywhere (once per stack). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query.h"
#include "query_pool.h"
#include "sat.h"

/* Samples per process / agent of a row: the largest one names the row. */
struct share {
	const char *name;
	int32_t pid;
	uint64_t count;
};

struct row_acc {
	struct query_top_row row;
	struct share *procs, *agents;
	size_t nprocs, nagents;
	bool multi_pid;
};

struct top_priv {
	struct str_pool pool;
};

static int add_share(struct share **arr, size_t *n, const char *name, int32_t pid, uint64_t count)
{
	for (size_t i = 0; i < *n; i++)
		if ((*arr)[i].name == name) { /* pooled: same pointer, same string */
			sat_inc_u64(&(*arr)[i].count, count);
			return 0;
		}
	struct share *na = realloc(*arr, (*n + 1) * sizeof(**arr));
	if (!na)
		return -ENOMEM;
	*arr = na;
	na[(*n)++] = (struct share){.name = name, .pid = pid, .count = count};
	return 0;
}

static const char *largest(const struct share *a, size_t n)
{
	size_t best = 0;
	for (size_t i = 1; i < n; i++)
		if (a[i].count > a[best].count)
			best = i;
	return n ? a[best].name : "";
}

/* The key of stack k's frame j (or of the whole stack) for grouping by. */
static int row_key(const struct query_result *r, const struct query_stack *k, size_t j, enum query_group by,
		   struct str_pool *pool, char *key, size_t klen, const char **name, const char **module)
{
	char buf[4096];
	*module = "";
	switch (by) {
	case QUERY_BY_FUNCTION: {
		const struct query_frame *f = &r->frames[k->frames[j]];
		snprintf(key, klen, "%s%c%s%c%s", f->function, 1, f->module, 1, k->comm);
		*name = f->function;
		*module = f->module;
		return 0;
	}
	case QUERY_BY_MODULE:
		*name = r->frames[k->frames[j]].module;
		snprintf(key, klen, "%s", *name);
		return 0;
	case QUERY_BY_PROCESS:
		if (k->comm[0]) {
			*name = k->comm;
		} else {
			snprintf(buf, sizeof(buf), "pid %d", k->pid);
			*name = str_pool_intern(pool, buf);
		}
		snprintf(key, klen, "%s", *name ? *name : "");
		break;
	case QUERY_BY_THREAD:
		snprintf(buf, sizeof(buf), "%s (%d)", k->thread[0] ? k->thread : "tid", k->tid);
		*name = str_pool_intern(pool, buf);
		snprintf(key, klen, "%s%c%s", k->comm, 1, buf);
		break;
	case QUERY_BY_AGENT:
		*name = k->agent_id;
		snprintf(key, klen, "%s", *name);
		break;
	case QUERY_BY_STACK:
		query_stack_folded(r, k, buf, sizeof(buf));
		*name = str_pool_intern(pool, buf);
		snprintf(key, klen, "%s", buf);
		break;
	default: return -EINVAL;
	}
	return *name ? 0 : -ENOMEM;
}

static int row_cmp(const void *a, const void *b)
{
	const struct query_top_row *x = a, *y = b;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

int query_top(const struct query_result *r, enum query_group by, struct query_top *out)
{
	memset(out, 0, sizeof(*out));
	struct top_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	struct key_map rows_of = {0};
	struct row_acc *acc = NULL;
	size_t nacc = 0, capacc = 0;
	uint32_t *seen = NULL; /* rows already counted in this stack's total */
	size_t capseen = 0;
	int rc = 0;
	bool per_frame = by == QUERY_BY_FUNCTION || by == QUERY_BY_MODULE;
	for (size_t i = 0; rc == 0 && i < r->nstacks; i++) {
		const struct query_stack *k = &r->stacks[i];
		size_t nkeys = per_frame ? k->nframes : 1, nseen = 0;
		if (nkeys > capseen) {
			uint32_t *ns = realloc(seen, nkeys * sizeof(*ns));
			if (!ns) {
				rc = -ENOMEM;
				break;
			}
			seen = ns;
			capseen = nkeys;
		}
		const char *comm = str_pool_intern(&p->pool, k->comm[0] ? k->comm : "");
		const char *agent = str_pool_intern(&p->pool, k->agent_id);
		if (!comm || !agent) {
			rc = -ENOMEM;
			break;
		}
		for (size_t j = 0; rc == 0 && j < nkeys; j++) {
			char key[4200];
			const char *name, *module;
			rc = row_key(r, k, j, by, &p->pool, key, sizeof(key), &name, &module);
			if (rc < 0)
				break;
			uint32_t idx;
			if (!key_map_get(&rows_of, key, strlen(key), &idx)) {
				if (nacc == capacc) {
					size_t nc = capacc ? capacc * 2 : 64;
					struct row_acc *na = realloc(acc, nc * sizeof(*na));
					if (!na) {
						rc = -ENOMEM;
						break;
					}
					acc = na;
					capacc = nc;
				}
				memset(&acc[nacc], 0, sizeof(acc[nacc]));
				acc[nacc].row.name = str_pool_intern(&p->pool, name);
				acc[nacc].row.module = str_pool_intern(&p->pool, module);
				acc[nacc].row.pid = k->pid;
				if (!acc[nacc].row.name || !acc[nacc].row.module ||
				    key_map_put(&rows_of, key, strlen(key), (uint32_t)nacc) < 0) {
					rc = -ENOMEM;
					break;
				}
				idx = (uint32_t)nacc++;
			}
			bool dup = false;
			for (size_t q = 0; q < nseen; q++)
				dup |= seen[q] == idx;
			if (dup)
				continue;
			seen[nseen++] = idx;
			struct row_acc *a = &acc[idx];
			if (j == 0)
				sat_inc_u64(&a->row.self, k->count);
			sat_inc_u64(&a->row.total, k->count);
			if (a->row.pid != k->pid)
				a->multi_pid = true;
			rc = add_share(&a->procs, &a->nprocs, comm, k->pid, k->count);
			if (rc == 0)
				rc = add_share(&a->agents, &a->nagents, agent, 0, k->count);
		}
	}
	free(seen);
	key_map_free(&rows_of);
	if (rc == 0 && nacc) {
		out->rows = calloc(nacc, sizeof(*out->rows));
		if (!out->rows)
			rc = -ENOMEM;
	}
	for (size_t i = 0; i < nacc; i++) {
		if (rc == 0) {
			struct query_top_row *row = &out->rows[i];
			*row = acc[i].row;
			row->process = largest(acc[i].procs, acc[i].nprocs);
			row->agent_id = largest(acc[i].agents, acc[i].nagents);
			if (acc[i].multi_pid)
				row->pid = 0;
		}
		free(acc[i].procs);
		free(acc[i].agents);
	}
	free(acc);
	if (rc < 0) {
		free(out->rows);
		out->rows = NULL;
		str_pool_free(&p->pool);
		free(p);
		return rc;
	}
	out->nrows = nacc;
	out->samples = r->total;
	out->priv = p;
	if (out->nrows > 1)
		qsort(out->rows, out->nrows, sizeof(*out->rows), row_cmp);
	return 0;
}

void query_top_free(struct query_top *t)
{
	struct top_priv *p = t->priv;
	if (p) {
		str_pool_free(&p->pool);
		free(p);
	}
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
