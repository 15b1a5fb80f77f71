/* OpenCL programs nobody in this project wrote, from Debian packages
 * (scripts/deps.sh installs them), on PoCL, each run three times: plainly,
 * under `agent run --mode layer` and under `agent run --mode preload`. The
 * programs' own exit status and output are the assertion: both profiled runs
 * must exit as the plain one did and print the same, once the fields that
 * genuinely vary from run to run are masked (timings, speeds, dates, free
 * memory; each program's masks are listed with it). Then the kernels the
 * program launches must be in `collector report --opencl --format json` with
 * their counts (and, for CLBlast's tuners, one row per tuned variant).
 *
 * Caches: PoCL compiles kernels on first use and hashcat keeps compiled
 * kernels in $XDG_CACHE_HOME; both live in $PROF_BIN_DIR/opencl-corpus (HOME
 * and the XDG directories point there too), so only the first run on a
 * machine compiles. A plain run gets PLAIN_TIMEOUT_S (a cold compile on a
 * loaded machine), a profiled one RUN_TIMEOUT_S. A program that is not
 * installed, or whose plain run fails or times out, is skipped with the
 * reason: that is the machine, not the profiler. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "json_read.h"
#include "net.h"
#include "testproc.h"

#define PLAIN_TIMEOUT_S 300
#define RUN_TIMEOUT_S 120
#define MAX_KERNELS 8

struct expect {
	const char *name;
	long launches; /* exact; negative: at least -launches */
	long rows;     /* exact rows (kernel declaration x NDRange shape); 0: any */
};

struct prog {
	const char *id;
	const char *package;
	const char *argv[16];
	/* masks of what varies between runs */
	const char *drop[4];   /* lines starting so are left out */
	const char *digits[4]; /* lines starting so have every digit masked */
	bool timings;	       /* decimal numbers and "N ms", "N us" are masked everywhere, runs of blanks kept as one */
	struct expect kernels[MAX_KERNELS];
};

/* hashcat's benchmark on MD5 (the original crash: 8-byte arguments): the speed line and the start
 * and stop dates vary, and so does the free memory in the device line. */
static const struct prog hashcat = {
	.id = "hashcat",
	.package = "hashcat",
	.argv = {"/usr/bin/hashcat", "-b", "-m", "0", "-D", "1,2", "--force", NULL},
	.drop = {"Speed.#", "Started:", "Stopped:"},
	.digits = {"* Device #"},
	.kernels = {{"m00000_s04", -10, 0}, {"l_markov", -1, 0}, {"r_markov", -10, 0}},
};

/* CLBlast's AXPY tuner in double precision (the other reported crash): 96 configurations and
 * the reference, each its own program (the tuned parameters are in the source), each launched
 * twice with -runs 1: 97 rows, 194 launches. Compile and run times, bandwidths and the best
 * configuration (chosen by time) vary. */
static const struct prog clblast_fp64 = {
	.id = "clblast-xaxpy-fp64",
	.package = "clblast-utils",
	.argv = {"/usr/bin/clblast_tuner_xaxpy", "-precision", "64", "-runs", "1", "-n", "262144", NULL},
	.drop = {"* Best parameters"},
	.timings = true,
	.kernels = {{"XaxpyFastest", 194, 97}},
};

/* CLBlast's DOT tuner in single precision: 6 configurations and the reference, two kernels each. */
static const struct prog clblast_fp32 = {
	.id = "clblast-xdot-fp32",
	.package = "clblast-utils",
	.argv = {"/usr/bin/clblast_tuner_xdot", "-precision", "32", "-runs", "1", "-n", "65536", NULL},
	.drop = {"* Best parameters"},
	.timings = true,
	.kernels = {{"Xdot", 14, 7}, {"XdotEpilogue", 14, 7}},
};

/* clpeak's launch-latency test: 20002 launches of one kernel (its loop), a launch-heavy program
 * for the batching; the latency it prints varies. */
static const struct prog clpeak = {
	.id = "clpeak-latency",
	.package = "clpeak",
	.argv = {"/usr/bin/clpeak", "--kernel-latency", NULL},
	.timings = true,
	.kernels = {{"global_bandwidth_v1_local_offset", 20002, 1}},
};

/* Every kind of argument through pyopencl (tests/workloads/cl_args.py): nothing varies. */
static const struct prog pyopencl = {
	.id = "pyopencl-args",
	.package = "python3-pyopencl",
	.argv = {"/usr/bin/python3", "@SRC@/tests/workloads/cl_args.py", NULL},
	.kernels = {{"scalars", 3, 1},
		    {"vectors", 2, 1},
		    {"structs", 2, 1},
		    {"locals", 2, 1},
		    {"scale", 3, 2},
		    {"handle_bytes", 1, 1},
		    {"image_read", 1, 1},
		    {"svm_add", 2, 1}},
};

static const char *no_opencl; /* why the suite is skipped, NULL if it runs */
static char cache_dir[512];

struct env {
	struct tp_env t;
};

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct env), "clcorpus", !no_opencl);
}

static void mkdir_p(const char *path)
{
	char tmp[700];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0755);
			*p = '/';
		}
	mkdir(tmp, 0755);
}

static int group_setup(void **state)
{
	char edge[512];
	tp_bin("cl-workloads/cl_edge", edge, sizeof(edge));
	if (access(edge, X_OK) != 0) {
		no_opencl = "cl-workloads not built (CONFIG_AGENT_OPENCL off?)";
		return 0;
	}
	char *argv[] = {edge, "noprof", NULL};
	pid_t p = tp_spawn(argv, "/dev/null");
	int status = -1;
	if (p < 0 || tp_wait(p, 60000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		no_opencl = "no working OpenCL device (cl_edge fails without the profiler): install pocl-opencl-icd";
	/* The programs' caches, kept between runs of the suite (HOME: hashcat's session files). */
	tp_bin("opencl-corpus", cache_dir, sizeof(cache_dir));
	static const char *const sub[][2] = {{"HOME", "home"},
					     {"XDG_CACHE_HOME", "home/.cache"},
					     {"XDG_DATA_HOME", "home/.local/share"},
					     {"XDG_CONFIG_HOME", "home/.config"},
					     {"POCL_CACHE_DIR", "pocl"}};
	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		char d[600];
		snprintf(d, sizeof(d), "%s/%s", cache_dir, sub[i][1]);
		mkdir_p(d);
		setenv(sub[i][0], d, 1);
	}
	(void)state;
	return 0;
}

/* Mask one line in place (see struct prog); false: leave it out. */
static bool mask_line(const struct prog *p, char *line)
{
	for (size_t i = 0; i < 4 && p->drop[i]; i++)
		if (strncmp(line, p->drop[i], strlen(p->drop[i])) == 0)
			return false;
	for (size_t i = 0; i < 4 && p->digits[i]; i++)
		if (strncmp(line, p->digits[i], strlen(p->digits[i])) == 0)
			for (char *c = line; *c; c++)
				if (*c >= '0' && *c <= '9')
					*c = '#';
	if (!p->timings)
		return true;
	char out[4096];
	size_t o = 0;
	for (const char *c = line; *c && o + 4 < sizeof(out);) {
		if (*c >= '0' && *c <= '9' && (c == line || !((c[-1] >= 'A' && c[-1] <= 'Z') || (c[-1] >= 'a' && c[-1] <= 'z') ||
								   c[-1] == '_' || c[-1] == '#'))) {
			const char *e = c;
			while ((*e >= '0' && *e <= '9') || *e == '.')
				e++;
			bool decimal = memchr(c, '.', (size_t)(e - c)) != NULL;
			bool ms = strncmp(e, " ms", 3) == 0 || strncmp(e, " us", 3) == 0;
			if (decimal || ms) {
				out[o++] = '#';
				c = e;
				continue;
			}
			while (c < e && o + 4 < sizeof(out))
				out[o++] = *c++;
			continue;
		}
		if (*c == ' ' && o > 0 && out[o - 1] == ' ') { /* a masked number's column width varies */
			c++;
			continue;
		}
		out[o++] = *c++;
	}
	out[o] = 0;
	strcpy(line, out);
	return true;
}

#define OUT_MAX (512 * 1024)

/* The masked output of a run, a line each, into out (OUT_MAX bytes; longer output is cut). */
static void masked(const struct prog *p, const char *path, char *out)
{
	char *raw = tp_slurp(path);
	size_t len = 0;
	out[0] = 0;
	for (char *save = NULL, *l = raw ? strtok_r(raw, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		char line[4096];
		snprintf(line, sizeof(line), "%s", l);
		if (!mask_line(p, line))
			continue;
		size_t n = strlen(line);
		if (len + n + 2 > OUT_MAX)
			break;
		memcpy(out + len, line, n);
		len += n;
		out[len++] = '\n';
		out[len] = 0;
	}
	free(raw);
}

/* Run the program (mode NULL: plainly; else under agent run --mode MODE --agent-id ID) with its
 * output (stdout and stderr) in OUT. Returns 0 and the program's wait status, or -ETIMEDOUT. */
static int run(struct env *e, const struct prog *p, const char *mode, const char *id, const char *out,
	       int timeout_s, int *status)
{
	static char agent[512], src[4096];
	tp_bin("agent", agent, sizeof(agent));
	if (!realpath(getenv("PROF_SRC_DIR") ? getenv("PROF_SRC_DIR") : ".", src))
		snprintf(src, sizeof(src), ".");
	char script[1200];
	/* in the test's directory: the tuners write their results (clblast_*.json) where they run */
	snprintf(script, sizeof(script), "cd '%s' && exec \"$@\" >'%s' 2>&1", e->t.dir, out);
	char *argv[48];
	size_t n = 0;
	if (mode) {
		const char *pre[] = {agent, "run", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", id,
				     "--mode", mode, "--"};
		for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
			argv[n++] = (char *)pre[i];
	}
	argv[n++] = "/bin/sh";
	argv[n++] = "-c";
	argv[n++] = script;
	argv[n++] = "sh";
	static char args[16][4200];
	for (size_t i = 0; p->argv[i] && n < 46; i++) {
		const char *a = p->argv[i];
		if (strncmp(a, "@SRC@", 5) == 0)
			snprintf(args[i], sizeof(args[i]), "%s%s", src, a + 5);
		else
			snprintf(args[i], sizeof(args[i]), "%s", a);
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	uint64_t t0 = clock_mono_ns();
	pid_t pid = tp_spawn(argv, e->t.alog);
	assert_true(pid > 0);
	int rc = tp_wait(pid, timeout_s * 1000, status);
	if (rc == -ETIMEDOUT)
		*status = tp_stop(pid, 3000);
	fprintf(stderr, "%s %s: %s in %.1f s\n", p->id, mode ? mode : "plain",
		rc == -ETIMEDOUT ? "timed out" : "ended", (double)(clock_mono_ns() - t0) / 1e9);
	return rc;
}

/* ---------------------------------------------------------------- the report's groups */
struct tally {
	char name[256];
	long count, rows;
};

struct groups {
	struct tally t[64];
	size_t n;
	char cur_name[256];
	double cur_count;
};

static int group_key(struct json_rd *r, const char *key, void *arg)
{
	struct groups *g = arg;
	if (strcmp(key, "name") == 0)
		return json_rd_string(r, g->cur_name, sizeof(g->cur_name));
	if (strcmp(key, "count") == 0)
		return json_rd_number(r, &g->cur_count);
	return json_rd_skip(r);
}

static int group_elem(struct json_rd *r, size_t i, void *arg)
{
	struct groups *g = arg;
	g->cur_name[0] = 0;
	g->cur_count = 0;
	int rc = json_rd_object(r, group_key, g);
	if (rc < 0)
		return rc;
	size_t k = 0;
	while (k < g->n && strcmp(g->t[k].name, g->cur_name) != 0)
		k++;
	if (k == g->n && g->n < 64)
		snprintf(g->t[g->n++].name, sizeof(g->t[0].name), "%s", g->cur_name);
	if (k < g->n) {
		g->t[k].count += (long)g->cur_count;
		g->t[k].rows++;
	}
	return 0;
}

static int opencl_key(struct json_rd *r, const char *key, void *arg)
{
	return strcmp(key, "groups") == 0 ? json_rd_array(r, group_elem, arg) : json_rd_skip(r);
}

static int top_key(struct json_rd *r, const char *key, void *arg)
{
	return strcmp(key, "opencl") == 0 ? json_rd_object(r, opencl_key, arg) : json_rd_skip(r);
}

/* The kernels of the session of agent id, per name: launches and rows. */
static void report_groups(struct env *e, const char *id, struct groups *g)
{
	int64_t sid = tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='%s'", id);
	assert_true(sid > 0);
	char coll[512], out[400], cmd[2048];
	tp_bin("collector", coll, sizeof(coll));
	snprintf(out, sizeof(out), "%s/report-%s.json", e->t.dir, id);
	snprintf(cmd, sizeof(cmd), "%s report --store %s --session %lld --opencl --format json > %s 2>&1", coll,
		 e->t.db, (long long)sid, out);
	assert_int_equal(system(cmd), 0);
	char *json = tp_slurp(out);
	assert_non_null(json);
	memset(g, 0, sizeof(*g));
	struct json_rd r;
	char err[256];
	json_rd_init(&r, json, strlen(json), "report", err, sizeof(err));
	int rc = json_rd_object(&r, top_key, g);
	if (rc < 0)
		fprintf(stderr, "%s\n%s\n", err, json);
	free(json);
	assert_int_equal(rc, 0);
}

static void check_kernels(struct env *e, const struct prog *p, const char *id)
{
	static struct groups g;
	report_groups(e, id, &g);
	for (size_t i = 0; i < MAX_KERNELS && p->kernels[i].name; i++) {
		const struct expect *x = &p->kernels[i];
		const struct tally *t = NULL;
		for (size_t k = 0; k < g.n; k++)
			if (strcmp(g.t[k].name, x->name) == 0)
				t = &g.t[k];
		fprintf(stderr, "  %s: %ld launches in %ld rows (want %s%ld, %ld rows)\n", x->name, t ? t->count : 0,
			t ? t->rows : 0, x->launches < 0 ? ">= " : "", x->launches < 0 ? -x->launches : x->launches,
			x->rows);
		assert_non_null(t);
		if (x->launches >= 0)
			assert_int_equal(t->count, x->launches);
		else
			assert_true(t->count >= -x->launches);
		if (x->rows)
			assert_int_equal(t->rows, x->rows);
	}
}

/* The first lines where two different masked outputs differ, printed. */
static void print_difference(const char *what, const char *plain, const char *prof)
{
	int line = 1;
	const char *a = plain, *b = prof;
	while (*a && *a == *b) {
		if (*a == '\n') {
			line++;
			plain = a + 1;
			prof = b + 1;
		}
		a++, b++;
	}
	fprintf(stderr, "%s: output differs from the plain run (masked) at line %d:\n  plain:    %.*s\n  profiled: %.*s\n",
		what, line, (int)strcspn(plain, "\n"), plain, (int)strcspn(prof, "\n"), prof);
}

static void run_corpus(struct env *e, const struct prog *p)
{
	if (no_opencl) {
		fprintf(stderr, "skipped: %s\n", no_opencl);
		skip();
	}
	if (access(p->argv[0], X_OK) != 0) {
		fprintf(stderr, "skipped: %s is not installed (scripts/deps.sh installs %s)\n", p->argv[0], p->package);
		skip();
	}
	char plain_out[400];
	snprintf(plain_out, sizeof(plain_out), "%s/%s-plain.out", e->t.dir, p->id);
	int st_plain = -1;
	if (run(e, p, NULL, NULL, plain_out, PLAIN_TIMEOUT_S, &st_plain) < 0 || !WIFEXITED(st_plain)) {
		tp_dump_file(plain_out);
		fprintf(stderr, "skipped: %s does not run to completion here without the profiler\n", p->id);
		skip();
	}
	static char want[OUT_MAX], got[OUT_MAX];
	masked(p, plain_out, want);
	static const char *const modes[] = {"layer", "preload"};
	for (size_t m = 0; m < 2; m++) {
		char out[400], id[128];
		snprintf(out, sizeof(out), "%s/%s-%s.out", e->t.dir, p->id, modes[m]);
		snprintf(id, sizeof(id), "corpus-%s-%s", p->id, modes[m]);
		int st = -1;
		int rc = run(e, p, modes[m], id, out, RUN_TIMEOUT_S, &st);
		if (rc < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != WEXITSTATUS(st_plain)) {
			tp_dump_file(e->t.alog);
			tp_dump_file(out);
		}
		assert_int_equal(rc, 0);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), WEXITSTATUS(st_plain)); /* the program's own exit status */
		masked(p, out, got);
		if (strcmp(want, got) != 0) {
			print_difference(id, want, got);
			fail(); /* the program's own output */
		}
		check_kernels(e, p, id);
	}
}

static void test_opencl_corpus_hashcat_benchmark(void **state)
{
	run_corpus(*state, &hashcat);
}

static void test_opencl_corpus_clblast_tuner_fp64(void **state)
{
	run_corpus(*state, &clblast_fp64);
}

static void test_opencl_corpus_clblast_tuner_fp32(void **state)
{
	run_corpus(*state, &clblast_fp32);
}

static void test_opencl_corpus_clpeak_kernel_latency(void **state)
{
	run_corpus(*state, &clpeak);
}

static void test_opencl_corpus_pyopencl_every_argument_kind(void **state)
{
	run_corpus(*state, &pyopencl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_opencl_corpus_pyopencl_every_argument_kind, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_opencl_corpus_clblast_tuner_fp64, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_opencl_corpus_clblast_tuner_fp32, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_opencl_corpus_clpeak_kernel_latency, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_opencl_corpus_hashcat_benchmark, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
