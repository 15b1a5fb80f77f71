/* The overview's sensitivity per function (overview_sensf.h). */
#include "overview_sensf.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "query/query_pcsym.h"

#define PC_CACHE 1024

struct sensf {
	struct query_pcsym *ps;
	bool any_resolved;
	struct edag_func_acc win; /* the piece being read */
	struct fname {
		char name[SENS_NAME_MAX], module[SENS_NAME_MAX];
	} *names;
	size_t nnames;
	struct {
		uint64_t pc;
		int32_t pid;
		uint32_t fid; /* + 1; 0 empty */
	} cache[PC_CACHE];
};

int sensf_open(struct store *st, int64_t sid, const char *symfs, struct sensf **out)
{
	struct sensf *sf = calloc(1, sizeof(*sf));
	if (!sf)
		return -ENOMEM;
	int rc = query_pcsym_open(st, sid, symfs, &sf->ps);
	if (rc < 0) {
		free(sf);
		return rc;
	}
	*out = sf;
	return 0;
}

void sensf_free(struct sensf *sf)
{
	if (!sf)
		return;
	query_pcsym_free(sf->ps);
	edag_func_free(&sf->win);
	free(sf->names);
	free(sf);
}

void sensf_window_start(struct sensf *sf)
{
	sf->win.n = 0;
	edag_func_window(&sf->win);
}

static int fid_of(struct sensf *sf, int32_t pid, uint64_t pc, uint32_t *fid)
{
	size_t h = (size_t)((pc ^ (pc >> 12) ^ (uint64_t)(uint32_t)pid) % PC_CACHE);
	if (sf->cache[h].fid && sf->cache[h].pc == pc && sf->cache[h].pid == pid) {
		*fid = sf->cache[h].fid - 1;
		return 0;
	}
	int resolved = 0;
	const char *name = query_pcsym_name(sf->ps, pid, pc, &resolved);
	const char *module = query_pcsym_module(sf->ps);
	sf->any_resolved |= resolved != 0;
	size_t i = 0;
	while (i < sf->nnames && (strncmp(sf->names[i].name, name, SENS_NAME_MAX - 1) != 0 ||
				  strncmp(sf->names[i].module, module, SENS_NAME_MAX - 1) != 0))
		i++;
	if (i == sf->nnames) {
		struct fname *nn = realloc(sf->names, (sf->nnames + 1) * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		sf->names = nn;
		snprintf(nn[i].name, SENS_NAME_MAX, "%s", name);
		snprintf(nn[i].module, SENS_NAME_MAX, "%s", module);
		sf->nnames++;
	}
	sf->cache[h].pc = pc;
	sf->cache[h].pid = pid;
	sf->cache[h].fid = (uint32_t)i + 1;
	*fid = (uint32_t)i;
	return 0;
}

int sensf_step(struct sensf *sf, int32_t pid, uint64_t pc, const struct edag_vertex *v)
{
	uint32_t fid;
	int rc = fid_of(sf, pid, pc, &fid);
	return rc < 0 ? rc : edag_func_add(&sf->win, fid, v);
}

int sensf_piece_end(struct sensf *sf, bool vote, struct edag_func_acc *tot)
{
	int rc = vote ? edag_func_merge(tot, &sf->win) : 0;
	sf->win.n = 0; /* the running depth stays: the next piece continues the window */
	return rc;
}

void sensf_put_row(struct overview *ov, const struct sens_func_row *row)
{
	size_t n = ov->nsensf;
	if (n == OV_MAX_SENSF) {
		if (row->mem_share <= ov->sensf[n - 1].mem_share)
			return;
		n--;
	}
	size_t i = n;
	while (i > 0 && ov->sensf[i - 1].mem_share < row->mem_share) {
		ov->sensf[i] = ov->sensf[i - 1];
		i--;
	}
	ov->sensf[i] = *row;
	ov->nsensf = n + 1;
}

int sensf_rows(struct sensf *sf, const struct edag_func_acc *tot, const struct sens_row *r,
	       struct sens_func_row **rows, size_t *nrows)
{
	*rows = NULL;
	*nrows = 0;
	if (!sf->any_resolved || tot->n == 0)
		return 0;
	struct sens_func_row *out = calloc(tot->n, sizeof(*out));
	if (!out)
		return -ENOMEM;
	double lam = 0, W = 0;
	for (size_t i = 0; i < tot->n; i++) {
		lam += edag_func_lambda(&tot->f[i], r->m);
		W += (double)tot->f[i].W;
	}
	for (size_t i = 0; i < tot->n; i++) {
		const struct edag_func_fig *f = &tot->f[i];
		double lf = edag_func_lambda(f, r->m), share = lam > 0 ? lf / lam : 0;
		struct sens_func_row *row = &out[i];
		/* a row is flagged by its own cold misses (a stream's cold lines do not make a chase
		 * beside it an upper bound, nor the other way round) */
		bool ub = edag_func_cold_bound(f); /* W_cold is 0 without a cache model */
		*row = (struct sens_func_row){.insns = f->insns, .upper_bound = ub, .lambda = lf, .split = share};
		snprintf(row->name, sizeof(row->name), "%s", sf->names[f->fid].name);
		snprintf(row->module, sizeof(row->module), "%s", sf->names[f->fid].module);
		snprintf(row->thread, sizeof(row->thread), "%s", r->name);
		row->W_share = W > 0 ? (double)f->W / W : 0;
		row->lambda_per_insn = f->insns ? lf / (double)f->insns : 0;
		row->mem_share = r->mem_share * share;
		row->mem_lo = r->Lambda_lo * r->alpha0 * share;
		row->mem_hi = r->Lambda_hi * r->alpha0 * share;
		row->lambda_lo_per_insn = row->lambda_per_insn;
		if (r->upper_bound && lam > 0) {
			/* the other functions' cold misses as hits make the thread's baseline lambda*a0 + C
			 * shorter and f's share of it larger: the high end over the thread's baseline with
			 * every cold miss a hit but f's own (lambda_cold_hits + f's part of lambda that its
			 * cold misses make), whichever function's misses would have been warm */
			double own = fmax(0, lf - edag_func_lambda_cold_hits(f, r->m)) / lam * r->lambda;
			double d = r->lambda * r->alpha0 + r->C, dch = (r->lambda_cold_hits + own) * r->alpha0 + r->C;
			if (dch > 0 && d > dch)
				row->mem_hi = fmin(1, row->mem_hi * d / dch);
		}
		if (ub && lf > 0) {
			/* the low end with f's cold misses as hits, over the thread's baseline less what
			 * they add to it (the other functions' cold misses kept as misses: the longest the
			 * baseline can be then), so at most the true end: f's lambda in the thread's units
			 * (the split of its lambda), lo_t of it with its cold misses as hits */
			double lo = edag_func_lambda_cold_hits(f, r->m);
			row->lambda_lo_per_insn = f->insns ? lo / (double)f->insns : 0;
			double lf_t = r->lambda * share, lo_t = lf_t * lo / lf;
			double den = (r->lambda - (lf_t - lo_t)) * r->alpha0 + r->C;
			row->mem_lo = fmin(row->mem_lo, den > 0 ? lo_t * r->alpha0 / den : 0);
		}
	}
	*rows = out;
	*nrows = tot->n;
	return 0;
}
