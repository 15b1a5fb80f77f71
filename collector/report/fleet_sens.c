/* collector report --sensitivity over a query: latency sensitivity per
 * function across sessions and agents (issue #36). The sessions the filters
 * select (agents, boards, sessions, the program's name), each one's
 * sensitivity rows from its trace windows in the time range and pids
 * (overview_load_sensitivity: its own eDAG settings and symbols), combined by
 * report/sens_fleet.c; rendered by fleet_sens_render.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_sens.h"
#include "log.h"
#include "overview.h"
#include "program_name.h"

struct fs_sess {
	int64_t id;
	char agent[SENS_NAME_MAX];
};

struct fs_name {
	char name[SENS_NAME_MAX], module[SENS_NAME_MAX];
};

struct fs_load {
	const struct query_opts *qo;
	struct fs_sess *ss;
	size_t nss, capss;
	struct sens_fleet_group *g;
	size_t *g_sess; /* the session (index into ss) of each group */
	size_t ng, capg, capgs;
	struct sens_fleet_part *p;
	struct fs_name *pn; /* the parts' names (p's pointers are set once loading is done) */
	size_t np, capp, cappn;
	size_t cur; /* the session being loaded */
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 16;
	while (nc < n)
		nc *= 2;
	void *nv = realloc(*v, nc * size);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

static bool in_list(const char *const *l, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(l[i], s) == 0)
			return true;
	return false;
}

static bool in_ids(const int64_t *l, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (l[i] == id)
			return true;
	return false;
}

static int session_cb(const struct store_session_row *r, void *arg)
{
	struct fs_load *L = arg;
	const struct query_filter *f = &L->qo->f;
	if ((f->nsessions && !in_ids(f->sessions, f->nsessions, r->id)) ||
	    (f->nagents && !in_list(f->agents, f->nagents, r->agent_id)) ||
	    (f->nboards && !in_list(f->boards, f->nboards, r->board)))
		return 0;
	if (f->ncomms) { /* the traced program's name (what `agent profile -- PROG` ran) */
		char prog[SENS_NAME_MAX];
		program_of_target(r->target, prog, sizeof(prog));
		if (!in_list(f->comms, f->ncomms, prog))
			return 0;
	}
	/* the time range is the windows' own (the agent's clock): every session is read */
	if (grow((void **)&L->ss, &L->capss, L->nss + 1, sizeof(*L->ss)) < 0)
		return -ENOMEM;
	struct fs_sess *s = &L->ss[L->nss++];
	s->id = r->id;
	snprintf(s->agent, sizeof(s->agent), "%s", r->agent_id);
	return 0;
}

/* A cold-miss upper bound's low end: the figure with every cold miss a hit, where that is lower. */
static double low_end(const struct sens_row *t, double lo)
{
	return t->upper_bound ? fmin(lo, t->Lambda_cold_hits * t->alpha0) : lo;
}

static int sink(void *arg, const struct sens_row *t, const struct sens_func_row *rows, size_t n)
{
	struct fs_load *L = arg;
	if (grow((void **)&L->g, &L->capg, L->ng + 1, sizeof(*L->g)) < 0 ||
	    grow((void **)&L->g_sess, &L->capgs, L->ng + 1, sizeof(*L->g_sess)) < 0)
		return -ENOMEM;
	size_t gi = L->ng++;
	L->g_sess[gi] = L->cur;
	L->g[gi] = (struct sens_fleet_group){.session = L->ss[L->cur].id,
					     .windows = t->windows,
					     .insns = t->insns,
					     .mem_share = t->mem_share,
					     .mem_lo = low_end(t, t->Lambda_lo * t->alpha0),
					     .mem_hi = t->Lambda_hi * t->alpha0,
					     .upper_bound = t->upper_bound,
					     .discarded_short = t->windows_short,
					     .discarded_cut = t->windows_cut};
	enum query_group by = L->qo->by;
	for (size_t i = 0; i < n; i++) {
		const struct sens_func_row *r = &rows[i];
		if (grow((void **)&L->p, &L->capp, L->np + 1, sizeof(*L->p)) < 0 ||
		    grow((void **)&L->pn, &L->cappn, L->np + 1, sizeof(*L->pn)) < 0)
			return -ENOMEM;
		struct fs_name *nm = &L->pn[L->np];
		if (by == QUERY_BY_MODULE) {
			snprintf(nm->name, sizeof(nm->name), "%s", r->module[0] ? r->module : "[unknown]");
			nm->module[0] = '\0';
		} else {
			snprintf(nm->name, sizeof(nm->name), "%s", r->name);
			snprintf(nm->module, sizeof(nm->module), "%s", r->module);
		}
		L->p[L->np++] = (struct sens_fleet_part){
		    .group = gi,
		    .insns = r->insns,
		    .lambda = r->lambda,
		    /* the session report's row as sensf_rows makes it: its own flag and interval */
		    .mem_share = r->mem_share,
		    .mem_lo = r->mem_lo,
		    .mem_hi = r->mem_hi,
		    .upper_bound = r->upper_bound,
		};
	}
	return 0;
}

static void fs_load_free(struct fs_load *L)
{
	free(L->ss);
	free(L->g);
	free(L->g_sess);
	free(L->p);
	free(L->pn);
}

int fleet_sens_load(struct store *st, const struct query_opts *qo, const char *machine,
		    const _Atomic uint64_t *deadline_ns, struct fleet_sens *out)
{
	memset(out, 0, sizeof(*out));
	out->by = qo->by;
	struct fs_load L = {.qo = qo};
	int rc = store_list_sessions(st, session_cb, &L);
	struct overview *ov = rc >= 0 ? calloc(1, sizeof(*ov)) : NULL;
	if (rc >= 0 && !ov)
		rc = -ENOMEM;
	for (size_t i = 0; rc >= 0 && i < L.nss; i++) {
		L.cur = i;
		struct overview_opts oo = {.machine = machine,
					   .symfs = qo->symfs,
					   .since_ns = qo->f.since_ns,
					   .until_ns = qo->f.until_ns,
					   .pids = qo->f.pids,
					   .npids = qo->f.npids,
					   .sens_sink = sink,
					   .sens_sink_arg = &L,
					   .deadline_ns = deadline_ns};
		size_t ng0 = L.ng, np0 = L.np;
		int lr = overview_load_sensitivity(st, L.ss[i].id, &oo, ov);
		if (lr == -ENOMEM || lr == -ETIMEDOUT) { /* out of memory or of time: the view fails */
			rc = lr;
		} else if (lr < 0) { /* one session that cannot be read does not fail the others' */
			L.ng = ng0;
			L.np = np0;
			out->skipped++;
			log_warn("report: session %lld of agent %s left out of the sensitivity: %s", (long long)L.ss[i].id,
				 L.ss[i].agent, strerror(-lr));
		} else {
			out->sessions_searched++;
			out->windows_out_of_range += ov->sens_windows_out_of_range;
			out->windows_without_row += ov->sens_windows_no_row;
			out->without_row_short += ov->sens_no_row_short;
			out->without_row_cut += ov->sens_no_row_cut;
		}
		overview_free(ov);
	}
	free(ov);
	for (size_t i = 0; i < L.ng; i++)
		L.g[i].agent_id = L.ss[L.g_sess[i]].agent;
	for (size_t i = 0; i < L.np; i++) {
		L.p[i].name = L.pn[i].name;
		L.p[i].module = L.pn[i].module;
	}
	if (rc >= 0)
		rc = sens_fleet_combine(L.g, L.ng, L.p, L.np, &out->r);
	fs_load_free(&L);
	return rc < 0 ? rc : 0;
}

void fleet_sens_free(struct fleet_sens *fs)
{
	sens_fleet_result_free(&fs->r);
}
