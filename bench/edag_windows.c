/* Approximate eDAG from windows cut out of a full trace, against the full
 * trace itself (issue 26): for each window placement the same instructions
 * are analysed three ways, as the collector would see them:
 *   cold      the window alone (every window starts with an empty cache: what
 *             single-stepped ptrace windows give)
 *   summary   the U instructions before it summarised as distinct 64-byte lines
 *             in last-access order (common/trace/warm.h: what the agent's replay
 *             windows send) and replayed into the cache model first
 *   warm      the U instructions before it through the engine first (the exact
 *             warm-up the summary stands for)
 * and D two ways: windows in series (sum of the windows' D, per instruction)
 * and the growth over each window's second half (edag_approx_combine's
 * steady-state estimate). The reference is the full trace, or with --ref
 * SHORT the steady state: (LONG - SHORT) / (its instructions), SHORT being the
 * same program with fewer repetitions (the same prefix).
 *
 *   edag_windows TRACE [--ref SHORT] [-m M] [--cache S:A:L:T]... [--windows K]
 *                [--warm U] [--n N] [--skip S]
 *
 * Prints one markdown row per analysis. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"
#include "trace/warm.h"

struct reader {
	FILE *f;
	uint8_t buf[1 << 16];
	size_t len, off;
};

static int rd_open(struct reader *r, const char *path)
{
	memset(r, 0, sizeof(*r));
	r->f = fopen(path, "rb");
	if (!r->f)
		return -errno;
	uint8_t h[EDAG_BIN_HEADER];
	unsigned arch;
	if (fread(h, 1, sizeof(h), r->f) != sizeof(h) || edag_bin_header_decode(h, sizeof(h), &arch) < 0)
		return -EINVAL;
	return 0;
}

/* 1 and *in, 0 at the end, < 0 on a bad record. */
static int rd_next(struct reader *r, struct edag_insn *in)
{
	for (;;) {
		int used = edag_bin_decode(r->buf + r->off, r->len - r->off, in);
		if (used > 0) {
			r->off += (size_t)used;
			return 1;
		}
		if (used < 0)
			return used;
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
		size_t got = fread(r->buf + r->len, 1, sizeof(r->buf) - r->len, r->f);
		if (got == 0)
			return 0;
		r->len += got;
	}
}

struct full {
	uint64_t n;
	struct edag_metrics mt;
};

static int run_full(const char *path, const struct edag_config *cfg, struct full *out)
{
	struct reader r;
	if (rd_open(&r, path) < 0)
		return -EINVAL;
	struct edag_state *st;
	if (edag_new(cfg, &st) < 0)
		return -ENOMEM;
	struct edag_insn batch[4096];
	size_t nb = 0;
	out->n = 0;
	int rc;
	while ((rc = rd_next(&r, &batch[nb])) > 0) {
		out->n++;
		if (++nb == 4096) {
			edag_step_batch(st, batch, nb);
			nb = 0;
		}
	}
	edag_step_batch(st, batch, nb);
	edag_metrics_get(st, &out->mt);
	edag_free(st);
	fclose(r.f);
	return rc;
}

enum { COLD, SUMMARY, WARM, NKIND };
static const char *const kind_name[NKIND] = {"cold", "summary", "warm"};

struct acc {
	double W, Wc, Dser, Dslope, n;
	double sq_W, sq_lam; /* for the spread between windows */
	size_t k;
};

int main(int argc, char **argv)
{
	const char *trace = NULL, *ref = NULL;
	struct edag_config cfg;
	edag_config_default(&cfg);
	cfg.m = 4;
	size_t K = 20, U = 1000000, N = 100000, skip = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--ref") && i + 1 < argc)
			ref = argv[++i];
		else if (!strcmp(argv[i], "-m") && i + 1 < argc)
			cfg.m = atof(argv[++i]);
		else if (!strcmp(argv[i], "--cache") && i + 1 < argc) {
			if (cfg.nlevels == EDAG_MAX_LEVELS || edag_cache_level_parse(argv[++i], &cfg.level[cfg.nlevels]) < 0) {
				fprintf(stderr, "edag_windows: bad --cache %s\n", argv[i]);
				return 2;
			}
			snprintf(cfg.level[cfg.nlevels].name, sizeof(cfg.level[0].name), "L%u", cfg.nlevels + 1);
			cfg.nlevels++;
		} else if (!strcmp(argv[i], "--windows") && i + 1 < argc)
			K = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--warm") && i + 1 < argc)
			U = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			N = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--skip") && i + 1 < argc)
			skip = strtoull(argv[++i], NULL, 10);
		else if (argv[i][0] != '-' && !trace)
			trace = argv[i];
		else {
			fprintf(stderr, "usage: edag_windows TRACE [--ref SHORT] [-m M] [--cache S:A:L:T]... [--windows K] "
					"[--warm U] [--n N] [--skip S]\n");
			return 2;
		}
	}
	if (!trace || K == 0 || N < 2) {
		fprintf(stderr, "edag_windows: give a trace (and windows, n >= 2)\n");
		return 2;
	}
	struct full full, sh = {0};
	if (run_full(trace, &cfg, &full) < 0 || (ref && run_full(ref, &cfg, &sh) < 0)) {
		fprintf(stderr, "edag_windows: cannot read the trace(s)\n");
		return 1;
	}
	double fn = (double)(full.n - sh.n), fW = (double)full.mt.W - (double)sh.mt.W,
	       fD = (double)full.mt.D - (double)sh.mt.D;
	double flam = (fW - fD) / cfg.m + fD;
	if (skip + U + N > full.n) {
		fprintf(stderr, "edag_windows: the trace (%llu instructions) is shorter than skip + warm + n\n",
			(unsigned long long)full.n);
		return 1;
	}
	size_t P = (full.n - skip - U) / K;
	if (P < N) {
		K = (full.n - skip - U) / N;
		P = N;
	}
	struct edag_state *st[NKIND];
	for (int k = 0; k < NKIND; k++)
		if (edag_new(&cfg, &st[k]) < 0)
			return 1;
	struct trace_warm tw;
	trace_warm_init(&tw, 64, (size_t)1 << 16); /* as the agent's replay windows (agent/trace/replay.h) */
	struct acc acc[NKIND];
	memset(acc, 0, sizeof(acc));
	struct reader r;
	rd_open(&r, trace);
	struct edag_insn in;
	uint64_t pos = 0;
	size_t win = 0;
	uint64_t wstart = skip + U;
	while (win < K && rd_next(&r, &in) > 0) {
		uint64_t p = pos++;
		if (p + U < wstart)
			continue;
		if (p < wstart) { /* warm-up part */
			if (p + U == wstart) {
				trace_warm_clear(&tw);
				edag_reset(st[WARM]);
			}
			if (in.mem)
				trace_warm_add(&tw, in.addr, in.size, in.mem);
			edag_step(st[WARM], &in, NULL);
			continue;
		}
		if (p == wstart) {
			edag_reset(st[COLD]);
			edag_reset(st[SUMMARY]);
			uint64_t *lines;
			size_t nl;
			trace_warm_lines(&tw, &lines, &nl);
			for (size_t i = 0; i < nl; i++)
				edag_cache_warm(st[SUMMARY], (lines[i] >> 2) << 6, 64, (lines[i] & 3) == TRACE_WARM_WRITE);
			free(lines);
			edag_reset_keep_cache(st[SUMMARY]);
			edag_reset_keep_cache(st[WARM]);
		}
		for (int k = 0; k < NKIND; k++)
			edag_step(st[k], &in, NULL);
		if (p + 1 == wstart + N) {
			for (int k = 0; k < NKIND; k++) {
				struct edag_metrics mt;
				edag_metrics_get(st[k], &mt);
				double slope = edag_depth_rate(&mt);
				struct acc *a = &acc[k];
				a->W += (double)mt.W;
				a->Wc += (double)mt.W_cold;
				a->Dser += (double)mt.D;
				a->Dslope += slope * (double)N;
				a->n += (double)N;
				double wr = (double)mt.W / (double)N, lr = wr / cfg.m + slope * (1 - 1 / cfg.m);
				a->sq_W += wr * wr;
				a->sq_lam += lr * lr;
				a->k++;
			}
			win++;
			wstart += P;
		}
	}
	fclose(r.f);
	char cm[64] = "none";
	if (cfg.nlevels) {
		int o = 0;
		for (unsigned i = 0; i < cfg.nlevels; i++)
			o += snprintf(cm + o, sizeof(cm) - (size_t)o, "%s%lluK", i ? "+" : "",
				      (unsigned long long)(cfg.level[i].size >> 10));
	}
	printf("| %s | %s | full%s: %.0f insns | W/i %.5f | | D/i %.6f | | lambda/i %.5f | |\n", trace, cm,
	       ref ? " (steady state)" : "", fn, fW / fn, fD / fn, flam / fn);
	for (int k = 0; k < NKIND; k++) {
		struct acc *a = &acc[k];
		if (!a->k)
			continue;
		double W = a->W / a->n, Wc = a->Wc / a->n, Ds = a->Dser / a->n, Dl = a->Dslope / a->n;
		double lam_ser = W / cfg.m + Ds * (1 - 1 / cfg.m), lam = W / cfg.m + Dl * (1 - 1 / cfg.m);
		double sdW = sqrt(fmax(0, a->sq_W / (double)a->k - W * W)) / sqrt((double)a->k);
		printf("| | | %s %zu x (%zu+%zu) | W/i %.5f (%+.1f%%, +-%.5f) | cold %.5f | D/i series %.6f, slope %.6f | "
		       "lambda/i series %.5f (%+.1f%%) | slope %.5f (%+.1f%%) |\n",
		       kind_name[k], a->k, k == COLD ? (size_t)0 : U, N, W, 100 * (W - fW / fn) / (fW / fn), sdW, Wc, Ds,
		       Dl, lam_ser, 100 * (lam_ser - flam / fn) / (flam / fn), lam, 100 * (lam - flam / fn) / (flam / fn));
	}
	for (int k = 0; k < NKIND; k++)
		edag_free(st[k]);
	trace_warm_free(&tw);
	return 0;
}
