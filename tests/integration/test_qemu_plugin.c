/* QEMU TCG plugin (tools/qemu-plugin/edag_tracer.c) end to end: the sample
 * kernels, cross-compiled static for aarch64, riscv64 (and arm), run under
 * qemu-user with the plugin; the trace's loads and stores to each kernel's
 * arrays equal the kernel's analytic counts, the whole trace's counts exceed
 * them only by the C library's and the loops' own accesses; and windows cut out
 * of a full trace the way the ptrace tracer samples (N instructions every P)
 * give an approximate-eDAG lambda within 10% of the full trace's for the
 * pointer chase and the triad. Skips (with the reason) where qemu-user, the
 * plugin or a cross-compiled kernel is missing. */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "testproc.h"

struct trace {
	struct edag_insn *ins;
	size_t n, cap;
	uint64_t lo, hi; /* the kernel's data range */
};

static char tmpdir[256];

static int setup(void **state)
{
	return tp_tmpdir(tmpdir, sizeof(tmpdir), "qemu-plugin");
}

static int teardown(void **state)
{
	if (!getenv("PROF_KEEP_TMP"))
		tp_rm_rf(tmpdir);
	return 0;
}

/* Paths of qemu-ARCH, the plugin and the kernel; false (and why) when one is missing. */
static bool have(const char *arch, const char *kernel, char *qemu, char *so, char *bin, size_t len)
{
	snprintf(qemu, len, "/usr/bin/qemu-%s", arch);
	tp_bin("qemu-plugin/edag_tracer.so", so, len);
	char rel[128];
	snprintf(rel, sizeof(rel), "xkernels/%s/%s", arch, kernel);
	tp_bin(rel, bin, len);
	const char *miss = access(qemu, X_OK) ? qemu : access(so, R_OK) ? so : access(bin, X_OK) ? bin : NULL;
	if (miss)
		fprintf(stderr, "skipping %s/%s: %s is missing (make deps; a cross compiler for %s)\n", arch, kernel,
			miss, arch);
	return !miss;
}

/* Run the kernel under qemu with the plugin; read the trace into t. false if skipped. */
static bool run_traced(const char *arch, const char *kernel, const char *a1, const char *a2, struct trace *t)
{
	char qemu[512], so[512], bin[512], plugin[1200], out[300], log[300];
	memset(t, 0, sizeof(*t));
	if (!have(arch, kernel, qemu, so, bin, sizeof(qemu)))
		return false;
	snprintf(out, sizeof(out), "%s/%s-%s.bin", tmpdir, arch, kernel);
	snprintf(log, sizeof(log), "%s/%s-%s.log", tmpdir, arch, kernel);
	snprintf(plugin, sizeof(plugin), "%s,out=%s", so, out);
	unlink(log);
	char *argv[] = {qemu, "-plugin", plugin, bin, (char *)a1, (char *)a2, NULL};
	pid_t pid = tp_spawn(argv, log);
	int status;
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	char *text = tp_slurp(log);
	assert_non_null(text);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("qemu-%s %s: status 0x%x\n%s", arch, kernel, status, text);
	char *p = strstr(text, " data=");
	assert_non_null(p);
	assert_int_equal(sscanf(p, " data=%" SCNx64 "-%" SCNx64, &t->lo, &t->hi), 2);
	free(text);

	FILE *f = fopen(out, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)size);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	unsigned a;
	assert_int_equal(edag_bin_header_decode(buf, (size_t)size, &a), 0);
	assert_int_equal(a, (unsigned)edag_arch_parse(arch));
	size_t off = EDAG_BIN_HEADER;
	while (off < (size_t)size) {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 65536;
			t->ins = realloc(t->ins, t->cap * sizeof(*t->ins));
			assert_non_null(t->ins);
		}
		int used = edag_bin_decode(buf + off, (size_t)size - off, &t->ins[t->n]);
		assert_true(used > 0);
		off += (size_t)used;
		t->n++;
	}
	free(buf);
	unlink(out);
	return true;
}

struct counts {
	uint64_t loads, stores, data_loads, data_stores;
};

static struct counts count(const struct trace *t)
{
	struct counts c = {0};
	for (size_t i = 0; i < t->n; i++) {
		const struct edag_insn *in = &t->ins[i];
		bool data = in->mem && in->addr >= t->lo && in->addr < t->hi;
		if (in->mem & EDAG_MEM_READ) {
			c.loads++;
			c.data_loads += data;
		}
		if (in->mem & EDAG_MEM_WRITE) {
			c.stores++;
			c.data_stores += data;
		}
	}
	return c;
}

struct kernel_case {
	const char *name, *a1, *a2;
	uint64_t loads, stores; /* analytic, to the kernel's arrays */
};

static void check_counts(const char *arch)
{
	/* triad n r: loads 2nr + n, stores 2n + nr; gemm n: loads 2n^3 + 2n^2, stores 4n^2;
	 * lu n: loads n^2 (copy) + sum_i [sum_{j<i}(2j+2) + (n-i)(2i+1)] + n^2, stores 3n^2;
	 * chase n s: loads 2(n-1) + s, stores n + 2(n-1). */
	const uint64_t tn = 2048, tr = 4, gn = 24, ln = 32, cn = 4096, cs = 32768;
	uint64_t lu_loads = 2 * ln * ln;
	for (uint64_t i = 0; i < ln; i++) {
		for (uint64_t j = 0; j < i; j++)
			lu_loads += 2 * j + 2;
		lu_loads += (ln - i) * (2 * i + 1);
	}
	const struct kernel_case cases[] = {
		{"triad", "2048", "4", 2 * tn * tr + tn, 2 * tn + tn * tr},
		{"gemm", "24", NULL, 2 * gn * gn * gn + 2 * gn * gn, 4 * gn * gn},
		{"lu", "32", NULL, lu_loads, 3 * ln * ln},
		{"chase", "4096", "32768", 2 * (cn - 1) + cs, cn + 2 * (cn - 1)},
	};
	int ran = 0;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct kernel_case *kc = &cases[k];
		struct trace t;
		if (!run_traced(arch, kc->name, kc->a1, kc->a2, &t))
			continue;
		ran++;
		struct counts c = count(&t);
		fprintf(stderr,
			"# %s %s: %zu instructions; to the arrays: loads %" PRIu64 " (analytic %" PRIu64 "), stores %" PRIu64
			" (analytic %" PRIu64 "); whole trace: loads %" PRIu64 ", stores %" PRIu64 "\n",
			arch, kc->name, t.n, c.data_loads, kc->loads, c.data_stores, kc->stores, c.loads, c.stores);
		assert_int_equal(c.data_loads, kc->loads);
		assert_int_equal(c.data_stores, kc->stores);
		/* the rest: start-up, printf, exit and the loops' spills: bounded */
		assert_true(c.loads >= kc->loads && c.loads <= kc->loads + 20000 + kc->loads / 5);
		assert_true(c.stores >= kc->stores && c.stores <= kc->stores + 20000 + kc->stores / 5);
		free(t.ins);
	}
	if (!ran)
		skip();
}

static void test_qemu_plugin_counts_aarch64(void **state)
{
	check_counts("aarch64");
}

static void test_qemu_plugin_counts_riscv64(void **state)
{
	check_counts("riscv64");
}

static void test_qemu_plugin_counts_arm(void **state)
{
	check_counts("arm");
}

/* Full-trace lambda vs the approximate eDAG of windows of N instructions every P. */
static void check_sampled(const char *arch, const char *kernel, const char *a1, const char *a2)
{
	struct trace t;
	if (!run_traced(arch, kernel, a1, a2, &t))
		skip();
	struct edag_config cfg;
	edag_config_default(&cfg);
	cfg.m = 4;
	struct edag_metrics full;
	assert_int_equal(edag_build_window(&cfg, t.ins, t.n, &full), 0);
	struct edag_bounds fb;
	edag_bounds(&full, cfg.m, cfg.alpha, cfg.alpha0, &fb);

	const size_t N = 2000, nwin = 40, P = t.n / nwin;
	assert_true(P > N);
	struct edag_window_result *w = calloc(nwin, sizeof(*w));
	assert_non_null(w);
	for (size_t k = 0; k < nwin; k++) {
		assert_int_equal(edag_build_window(&cfg, t.ins + k * P, N, &w[k].mt), 0);
		w[k].n_insns = N;
		w[k].info.index = (uint32_t)k;
		w[k].info.share = (double)N / (double)P;
		w[k].info.represented_insns = k + 1 < nwin ? P : t.n - k * P;
	}
	struct edag_approx ap;
	assert_int_equal(edag_approx_combine(w, nwin, cfg.m, cfg.alpha0, &ap), 0);
	double err = (ap.lambda.value - fb.lambda) / fb.lambda;
	fprintf(stderr,
		"# %s %s: full trace %zu instructions, W %" PRIu64 " D %" PRIu64 " lambda %.1f; %zu windows of %zu every %zu"
		" (coverage %.3f): W %.1f D %.1f lambda %.1f [%.1f, %.1f] (%+.1f%%)\n",
		arch, kernel, t.n, full.W, full.D, fb.lambda, nwin, N, P, ap.coverage, ap.W.value, ap.D.value,
		ap.lambda.value, ap.lambda.lo, ap.lambda.hi, 100 * err);
	assert_true(err > -0.10 && err < 0.10);
	free(w);
	free(t.ins);
}

static void test_qemu_plugin_sampled_lambda_chase_aarch64(void **state)
{
	check_sampled("aarch64", "chase", "2048", "131072");
}

static void test_qemu_plugin_sampled_lambda_chase_riscv64(void **state)
{
	check_sampled("riscv64", "chase", "2048", "131072");
}

static void test_qemu_plugin_sampled_lambda_triad_aarch64(void **state)
{
	check_sampled("aarch64", "triad", "4096", "16");
}

static void test_qemu_plugin_sampled_lambda_triad_riscv64(void **state)
{
	check_sampled("riscv64", "triad", "4096", "16");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_qemu_plugin_counts_aarch64),
		cmocka_unit_test(test_qemu_plugin_counts_riscv64),
		cmocka_unit_test(test_qemu_plugin_counts_arm),
		cmocka_unit_test(test_qemu_plugin_sampled_lambda_chase_aarch64),
		cmocka_unit_test(test_qemu_plugin_sampled_lambda_chase_riscv64),
		cmocka_unit_test(test_qemu_plugin_sampled_lambda_triad_aarch64),
		cmocka_unit_test(test_qemu_plugin_sampled_lambda_triad_riscv64),
	};
	return cmocka_run_group_tests_name("qemu_plugin", tests, setup, teardown);
}
