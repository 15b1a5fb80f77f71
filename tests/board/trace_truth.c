/* The board guests' trace windows against the full trace of the same static binary (issue 36,
 * scripts/board-accuracy.sh). Reads a native trace on stdin, recorded from a kernel's first
 * kernel_mark() (qemu-arm/qemu-aarch64 -plugin edag_tracer.so,out=/dev/fd/3,start=MARK), and
 * `collector edag --json` of the guest's stored windows (--windows FILE), both with the cache
 * model test_trace_accuracy uses (32K:8:64:4 + 1M:8:64:12, m 4, alpha0 100). The truth, as there:
 * W/i and lambda/i of the second repetition (the first warms the caches), Lambda*alpha0 of the
 * steady state cut into windows of the recorded length, caches kept and warmed by the first
 * repetition (tests/lib/trace_tiles.c). Prints one line per figure:
 *   FIGURE window W [lo LO] truth T flagged 0|1 ok 0|1
 * ok: within 10 % (or 0.001 per instruction; Lambda*alpha0 0.01) of the truth, or flagged (cold
 * misses over 10 % of W) with [the figure with its cold misses as hits, the figure] holding it.
 * Usage: trace_truth --mark ADDR --window N [--tiles K] --windows EDAG.json < TRACE */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "edag/edag.h"
#include "trace/native.h"
#include "trace_tiles.h"

#define M_SLOTS 4.0
#define ALPHA0 100.0
#define CACHE1 "32K:8:64:4"
#define CACHE2 "1M:8:64:12"
#define A0_ABS 0.01 /* Lambda*alpha0 (in [0, 1]): the absolute tolerance beside 10 % */

struct at_mark {
	uint64_t n, W, D, C;
};

static int die(const char *what, int rc)
{
	fprintf(stderr, "trace_truth: %s: %s\n", what, strerror(rc < 0 ? -rc : rc));
	return 1;
}

static void verdict(const char *fig, double win, double lo, double truth, bool flagged, double abs_tol)
{
	bool ok = tiles_verdict(win, lo, truth, flagged, abs_tol);
	printf("%s window %.6f lo %.6f truth %.6f (%+.1f%%) flagged %d ok %d\n", fig, win, lo, truth,
	       truth != 0 ? 100 * (win - truth) / truth : 0.0, flagged, ok);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, len = 0;
	char *s = malloc(cap);
	size_t got;
	while (s && (got = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			char *t = realloc(s, cap *= 2);
			if (!t)
				free(s);
			s = t;
		}
	}
	fclose(f);
	if (s)
		s[len] = 0;
	return s;
}

int main(int argc, char **argv)
{
	uint64_t mark = 0, len = 0;
	size_t max = 16;
	const char *wpath = NULL;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--mark") == 0)
			mark = strtoull(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--window") == 0)
			len = strtoull(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--tiles") == 0)
			max = (size_t)strtoul(argv[i + 1], NULL, 0);
		else if (strcmp(argv[i], "--windows") == 0)
			wpath = argv[i + 1];
	}
	if (!mark || !len || !wpath) {
		fprintf(stderr, "usage: trace_truth --mark ADDR --window N [--tiles K] --windows EDAG.json < TRACE\n");
		return 2;
	}
	struct edag_config cfg;
	edag_config_default(&cfg);
	cfg.m = M_SLOTS;
	cfg.nlevels = 2;
	if (edag_cache_level_parse(CACHE1, &cfg.level[0]) < 0 || edag_cache_level_parse(CACHE2, &cfg.level[1]) < 0)
		return die("cache levels", EINVAL);
	struct edag_state *st;
	struct tiles tl = {.len = len, .keep_cache = true, .max = max};
	int rc = edag_new(&cfg, &st);
	if (rc < 0 || (rc = edag_new(&cfg, &tl.st)) < 0)
		return die("edag_new", rc);
	size_t cap = 1 << 20, have = 0;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return die("malloc", ENOMEM);
	struct at_mark marks[3] = {{0}};
	unsigned nmark = 0;
	uint64_t n = 0;
	bool header = false;
	for (;;) {
		ssize_t got = read(0, buf + have, cap - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return die("read", errno);
		if (got == 0)
			break;
		have += (size_t)got;
		size_t off = 0;
		if (!header) {
			if (have < EDAG_BIN_HEADER)
				continue;
			unsigned arch;
			if ((rc = edag_bin_header_decode(buf, have, &arch)) < 0)
				return die("trace header", rc);
			header = true;
			off = EDAG_BIN_HEADER;
		}
		struct edag_insn in;
		int u;
		while ((u = edag_bin_decode(buf + off, have - off, &in)) > 0) {
			off += (size_t)u;
			if (in.pc == mark) {
				if (nmark < 3) {
					struct edag_metrics mt;
					edag_metrics_get(st, &mt);
					marks[nmark] = (struct at_mark){.n = n, .W = mt.W, .D = mt.D, .C = mt.cp_compute};
				}
				nmark++;
			}
			struct edag_vertex v;
			if (nmark <= 2 && (rc = edag_step(st, &in, &v)) < 0)
				return die("edag_step", rc);
			if ((rc = tiles_feed(&tl, &in, nmark)) < 0)
				return die("tiles", rc);
			n++;
		}
		if (u < 0)
			return die("trace record", u);
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	if (have || nmark < 3) {
		fprintf(stderr, "trace_truth: %zu bytes left, %u marks (3 needed: a kernel run with 2 repetitions or more)\n",
			have, nmark);
		return 1;
	}
	double dn = (double)(marks[2].n - marks[1].n), dW = (double)(marks[2].W - marks[1].W),
	       dD = (double)(marks[2].D - marks[1].D);
	double fW = dW / dn, flam = ((dW - dD) / M_SLOTS + dD) / dn;
	struct edag_approx ta;
	if ((rc = tiles_combine(&tl, M_SLOTS, ALPHA0, &ta)) < 0)
		return die("no tile of the recorded length in the steady state", rc);
	double tn = ta.represented_insns;
	double ta0 = tiles_share_a0(ta.lambda.value / tn, ta.cp_compute.value / tn, ALPHA0);
	printf("full trace %" PRIu64 " instructions, steady state %.0f: W/i %.5f lambda/i %.5f; %zu tiles of %" PRIu64
	       " caches warm: W/i %.5f lambda/i %.5f C/i %.4f Lambda*a0 %.4f\n",
	       n, dn, fW, flam, tl.n, len, ta.W.value / tn, ta.lambda.value / tn, ta.cp_compute.value / tn, ta0);

	char *js = slurp(wpath);
	if (!js)
		return die(wpath, errno);
	struct tiles_edag e;
	tiles_edag_read(js, &e);
	double wn = e.insns, nw = e.windows, W = e.W, lam = e.lambda, C = e.C, cold = e.cold, lam_lo = e.lambda_lo;
	bool flagged = e.bound;
	free(js);
	if (!(wn > 0) || isnan(W) || isnan(lam) || isnan(C)) {
		fprintf(stderr, "trace_truth: %s: no estimate of windows\n", wpath);
		return 1;
	}
	printf("windows %.0f, %.0f instructions, cold misses %.5f/i (%.0f%% of W)%s\n", nw, wn, cold,
	       W > 0 ? 100 * cold / W : 0.0, flagged ? ", flagged" : "");
	verdict("W/i", W, W - cold, fW, flagged, 0.001);
	verdict("lambda/i", lam, lam_lo, flam, flagged, 0.001);
	verdict("Lambda*a0", tiles_share_a0(lam, C, ALPHA0), tiles_share_a0(lam_lo, C, ALPHA0), ta0, flagged, A0_ABS);
	tiles_free(&tl);
	edag_free(st);
	free(buf);
	return 0;
}
