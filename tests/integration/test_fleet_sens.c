/* collector report --sensitivity across sessions and agents (issue #36), the
 * real collector on a store of two agents: agent fsA's two sessions and agent
 * fsB's one, each a thread whose stored trace windows run a pointer chase in
 * one function and register adds in another (the PCs in this test's own
 * executable, its mapping stored as the agent sends it, as test_report_sensf
 * does). fsA's chase cycles 16 lines through one cache set (misses of a full
 * set: not cold), fsB's walks new lines (cold misses: an upper bound with the
 * 32K+1M model). The oracle is the per-session report of the same collector
 * (report --session N --format json, tested by test_report_sensf and
 * test_trace_accuracy_mix): the fleet row of a function is the sessions'
 * function rows weighed by their threads' instructions; the chase's
 * lambda/insn is 1 (every load a miss on one chain), the adds' 0; fsB's part
 * makes the chase row an upper bound; --agent, --since/--until select windows;
 * the live page /profile?sens=1 shows the same rows. Each row is flagged by
 * its function's own cold misses, as the session report's rows (the register
 * adds beside fsB's cold chase are no bound), with the sessions' row intervals
 * weighed. Windows that give no vote (shorter than EDAG_WINDOW_MIN_INSNS, cut
 * by the stop-time limit) are counted per row and never make one: a function
 * that ran only in those (fsens_short_fn) has no row, even in a thread with rows.
 * Work is bounded: 14 windows of at most 400 instructions. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "frame.h"
#include "profile_fixture.h"
#include "report/overview.h"
#include "report_fixture.h"
#include "store/store.h"
#include "testproc.h"

#define MAP_START 0x555500000000ull
#define MAX_SLOTS 4
enum { PER = 400, SHORT = EDAG_WINDOW_MIN_INSNS - 56 };

__attribute__((noinline, used)) int fsens_chase_fn(const int *p)
{
	return p[0];
}
__attribute__((noinline, used)) int fsens_dense_fn(int x)
{
	return x * 3 + 1;
}
__attribute__((noinline, used)) int fsens_short_fn(int x)
{
	return x * 5 + 2;
}

struct sess_spec {
	const char *agent;
	int64_t age_s;	  /* realtime_ns = now - age_s */
	unsigned nwin;	  /* windows */
	unsigned nchase;  /* chase loads of each window (the rest: adds) */
	bool cold;	  /* new lines (cold misses) instead of 16 lines of one set */
	unsigned nshort;  /* then windows of SHORT instructions (half chase, half fsens_short_fn): no vote */
	unsigned ncut;	  /* then windows of PER chase loads cut by the stop-time limit: no vote */
};

static const struct sess_spec specs[] = {
	{"fsA", 60, 3, 200, false, 1, 1},
	{"fsA", 60, 2, 100, false, 0, 0},
	{"fsB", 7200, 4, 300, true, 1, 0},
	{"fsA", 60, 0, 0, false, 2, 0}, /* a thread whose windows all are short: no row */
};
#define NSESS (sizeof(specs) / sizeof(specs[0]))

struct env {
	struct tp_env t;
	char mach[400];
	int64_t sid[NSESS];
};

static int put(struct store *st, int64_t sid, Prof__Envelope *e)
{
	int rc = store_put_record(st, sid, e, 100);
	return rc < 0 ? rc : store_commit(st);
}

static int put_session(struct store *st, const struct sess_spec *sp, unsigned k, const char *bin, const uint64_t off[3],
		       int64_t *sid)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)sp->agent;
	h.boot_id = 1 + k;
	h.board = "host";
	h.target = "cmd ./fsens";
	h.realtime_ns = (uint64_t)(now.tv_sec - sp->age_s) * 1000000000ull;
	uint64_t max_seq;
	int rc = store_session_open(st, &h, "test", sid, &max_seq, NULL);
	if (rc < 0)
		return rc;
	const int32_t pid = 300 + (int32_t)k;
	if ((rc = rf_add_mapping(st, *sid, 1, pid, MAP_START, MAP_START + 0x10000000ull, bin)) < 0)
		return rc;
	struct edag_insn ins[PER];
	for (unsigned w = 0; w < sp->nwin + sp->nshort + sp->ncut && rc >= 0; w++) {
		bool is_short = w >= sp->nwin && w < sp->nwin + sp->nshort, cut = w >= sp->nwin + sp->nshort;
		unsigned n = is_short ? SHORT : PER, nchase = is_short ? SHORT / 2 : cut ? PER : sp->nchase;
		memset(ins, 0, sizeof(ins));
		for (unsigned i = 0; i < n; i++) {
			struct edag_insn *in = &ins[i];
			if (i < nchase) { /* r1 = [r1] */
				in->pc = MAP_START + off[0] + i % 4;
				in->cls = EDAG_LOAD;
				in->mem = EDAG_MEM_READ;
				/* 16 lines 128 KiB apart share a set of both levels (8 ways): after the
				 * first 8 every access misses a full set; or new lines 8 KiB apart */
				in->addr = sp->cold ? 0x10000000ull + ((uint64_t)w * PER + i) * 8192
						    : 0x10000000ull + (uint64_t)(i % 16) * 131072;
				in->size = 8;
				in->nread = in->nwrite = 1;
				in->rd[0] = in->wr[0] = 1;
			} else {
				in->pc = MAP_START + off[is_short ? 2 : 1] + i % 4;
				in->cls = EDAG_INT; /* r1 += r3: on the chase's chain (C of its path) */
				in->nread = 2;
				in->rd[0] = 1;
				in->rd[1] = 3;
				in->nwrite = 1;
				in->wr[0] = 1;
			}
		}
		Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
		if ((rc = edag_window_encode(ins, n, &tw)) < 0)
			break;
		tw.arch = EDAG_ARCH_X86_64;
		tw.pid = pid;
		tw.tid = pid + 1;
		tw.window_index = w;
		tw.sampled_share = 1;
		tw.represented_insns = n;
		tw.capture = 2; /* replay windows: those of full length vote */
		tw.end_reason = cut ? EDAG_END_TIME : 0;
		tw.t_ns = 1000000000ull * w;
		Prof__Envelope we = PROF__ENVELOPE__INIT;
		we.seq = 2 + w;
		we.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
		we.trace_window = &tw;
		rc = put(st, *sid, &we);
		edag_window_encode_free(&tw);
	}
	return rc;
}

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "fsens", false) < 0)
		return -1;
	struct env *e = *state;
	char bin[PATH_MAX];
	ssize_t bl = readlink("/proc/self/exe", bin, sizeof(bin) - 1);
	if (bl <= 0)
		return -1;
	bin[bl] = '\0';
	uint64_t off[3];
	if (pf_sym_file_off(bin, "fsens_chase_fn", &off[0]) < 0 || pf_sym_file_off(bin, "fsens_dense_fn", &off[1]) < 0 ||
	    pf_sym_file_off(bin, "fsens_short_fn", &off[2]) < 0)
		return -1;
	struct store *st;
	if (store_open(e->t.db, 0, &st) < 0)
		return -1;
	for (unsigned k = 0; k < NSESS; k++)
		if (put_session(st, &specs[k], k, bin, off, &e->sid[k]) < 0) {
			store_close(st);
			return -1;
		}
	store_close(st);
	tp_env_path(&e->t, "machine.json", e->mach, sizeof(e->mach));
	FILE *f = fopen(e->mach, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"name\": \"fleet\", \"m\": %d, \"alpha0\": 4, \"caches\": [{\"name\": \"L1d\", \"size\": \"32K\", \"assoc\": 8, "
		   "\"line\": 64, \"latency\": 4}, {\"name\": \"L2\", \"size\": \"1M\", \"assoc\": 8, \"line\": 64, "
		   "\"latency\": 12}]}\n",
		MAX_SLOTS);
	return fclose(f) == 0 ? 0 : -1;
}

/* collector ARGS... --machine MACH: its stdout (malloc'd), exit status 0 asserted. */
static char *collector(struct env *e, const char *a0, ...)
{
	char cbin[512], out[400];
	tp_bin("collector", cbin, sizeof(cbin));
	tp_env_path(&e->t, "out.txt", out, sizeof(out));
	char *argv[24] = {cbin};
	size_t n = 1;
	va_list ap;
	va_start(ap, a0);
	for (const char *a = a0; a && n < 20; a = va_arg(ap, const char *))
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n++] = "--machine";
	argv[n++] = e->mach;
	argv[n] = NULL;
	unlink(out);
	int st = tp_run(argv, out, 60000);
	char *s = tp_slurp(out);
	if (st != 0 && s)
		fprintf(stderr, "collector exited %d:\n%s\n", st, s);
	assert_int_equal(st, 0);
	assert_non_null(s);
	return s;
}

/* The number after key in the first object after `from` (NAN if none). */
static double num_after(const char *s, const char *from, const char *key)
{
	const char *p = from ? strstr(s, from) : s;
	if (!p)
		return NAN;
	const char *k = strstr(p, key);
	return k ? strtod(k + strlen(key), NULL) : NAN;
}

/* The row object of function name in a JSON text: its start (NULL if none). */
static const char *row_of(const char *js, const char *list, const char *name)
{
	const char *l = strstr(js, list);
	if (!l)
		return NULL;
	char key[128];
	snprintf(key, sizeof(key), "{\"name\":\"%s\"", name);
	return strstr(l, key);
}

static bool flag_after(const char *row, const char *key)
{
	const char *k = strstr(row, key);
	return k && strncmp(k + strlen(key), "true", 4) == 0;
}

/* The per-session oracle: sum over sessions k in sel of (thread insns x function's Lambda*a0) and
 * the thread instructions (one thread each), from the session report (overview_load, as `report
 * --session N --machine FILE` makes it: test_report_sensf, test_trace_accuracy_mix). */
struct want {
	double num, lo, hi, den; /* sums of thread insns x the row's Lambda*a0, its low and high end; insns */
	bool upper;		 /* some session's row of it is flagged (by its own cold misses) */
	size_t upper_windows;	 /* those sessions' voting windows */
	size_t dshort, dcut;	 /* the discarded windows of its threads */
};

static void oracle(struct env *e, const bool *sel, const char *fn, struct want *w)
{
	memset(w, 0, sizeof(*w));
	struct store *st;
	assert_int_equal(store_open(e->t.db, 0, &st), 0);
	struct overview *ov = calloc(1, sizeof(*ov));
	assert_non_null(ov);
	for (unsigned k = 0; k < NSESS; k++) {
		if (!sel[k])
			continue;
		struct overview_opts oo = {.machine = e->mach, .limit = 20};
		assert_int_equal(overview_load(st, e->sid[k], &oo, ov), 0);
		assert_int_equal(ov->nsens, 1);
		const struct sens_func_row *r = NULL;
		for (size_t i = 0; i < ov->nsensf; i++)
			if (strcmp(ov->sensf[i].name, fn) == 0)
				r = &ov->sensf[i];
		assert_non_null(r);
		double n = (double)ov->sens[0].insns;
		w->num += n * r->mem_share;
		w->lo += n * r->mem_lo;
		w->hi += n * r->mem_hi;
		w->den += n;
		w->upper |= r->upper_bound;
		w->upper_windows += r->upper_bound ? ov->sens[0].windows : 0;
		w->dshort += ov->sens[0].windows_short;
		w->dcut += ov->sens[0].windows_cut;
		/* a flagged session row holds its figure; an unflagged one's interval too */
		assert_true(r->mem_lo <= r->mem_share + 1e-12 && r->mem_share <= r->mem_hi + 1e-12);
		overview_free(ov);
	}
	free(ov);
	store_close(st);
}

static void near_or_fail(const char *fn, const char *what, double got, double want)
{
	if (!(fabs(got - want) <= 1e-6 * fmax(1, fabs(want))))
		fail_msg("%s: %s %.9g, the sessions' rows weighed give %.9g", fn, what, got, want);
}

/* The fleet row of fn against the sessions' report rows (w): figure, interval, flag, counts. */
static void check_row(const char *js, const char *fn, const struct want *w, double windows, double sessions,
		      double agents)
{
	const char *row = row_of(js, "\"rows\":[", fn);
	assert_non_null(row);
	double got = num_after(row, NULL, "\"Lambda_alpha0\":");
	near_or_fail(fn, "Lambda*a0", got, w->num / w->den);
	near_or_fail(fn, "its low end", num_after(row, NULL, "\"Lambda_alpha0_lo\":"), w->lo / w->den);
	near_or_fail(fn, "its high end", num_after(row, NULL, "\"Lambda_alpha0_hi\":"), w->hi / w->den);
	assert_true(num_after(row, NULL, "\"Lambda_alpha0_lo\":") <= got + 1e-12);
	assert_true(num_after(row, NULL, "\"Lambda_alpha0_hi\":") >= got - 1e-12);
	assert_int_equal(flag_after(row, "\"upper_bound\":"), w->upper);
	assert_true(num_after(row, NULL, "\"upper_windows\":") == (double)w->upper_windows);
	assert_true(num_after(row, NULL, "\"discarded_short\":") == (double)w->dshort);
	assert_true(num_after(row, NULL, "\"discarded_cut\":") == (double)w->dcut);
	assert_true(num_after(row, NULL, "\"windows\":") == windows);
	assert_true(num_after(row, NULL, "\"sessions\":") == sessions);
	assert_true(num_after(row, NULL, "\"agents\":") == agents);
}

static void test_fleet_sens_two_agents_by_function(void **state)
{
	struct env *e = *state;
	char *js = collector(e, "report", "--store", e->t.db, "--sensitivity", "--json", NULL);
	const bool all[NSESS] = {true, true, true, false}; /* session 3 has no row */
	struct want chase, dense;
	oracle(e, all, "fsens_chase_fn", &chase);
	oracle(e, all, "fsens_dense_fn", &dense);
	assert_true(chase.upper); /* fsB's chase: cold misses of its own, its row an upper bound */
	assert_int_equal(chase.upper_windows, 4);
	assert_false(dense.upper); /* beside it, in the same flagged thread, the adds have none */
	assert_int_equal(chase.dshort, 2); /* sessions 0 and 2 */
	assert_int_equal(chase.dcut, 1);
	/* fsB's part: its low end is its figure with its cold misses as hits, below the figure */
	assert_true(chase.lo < chase.num - 1e-6 * chase.den);
	assert_true(num_after(js, NULL, "\"insns\":") == chase.den);
	assert_true(num_after(js, NULL, "\"windows\":") == 9);
	assert_true(num_after(js, NULL, "\"sessions\":") == 3);
	assert_true(num_after(js, NULL, "\"agents\":") == 2);
	assert_true(num_after(js, NULL, "\"discarded_short\":") == 2);
	assert_true(num_after(js, NULL, "\"discarded_cut\":") == 1);
	assert_true(num_after(js, NULL, "\"windows_without_row\":") == 2);
	assert_true(num_after(js, NULL, "\"without_row_short\":") == 2);
	assert_true(num_after(js, NULL, "\"window_min_insns\":") == EDAG_WINDOW_MIN_INSNS);
	check_row(js, "fsens_chase_fn", &chase, 9, 3, 2);
	check_row(js, "fsens_dense_fn", &dense, 9, 3, 2);
	/* a function that ran only in windows shorter than the minimum has no row */
	assert_null(row_of(js, "\"rows\":[", "fsens_short_fn"));
	/* every chase load a miss on one chain */
	assert_true(fabs(num_after(row_of(js, "\"rows\":[", "fsens_chase_fn"), NULL, "\"lambda_per_insn\":") - 1) < 1e-9);
	assert_true(strstr(js, "\"rows\":[{\"name\":\"fsens_chase_fn\"") != NULL); /* the largest first */
	free(js);

	/* the text names both and says what the rows rest on and what was discarded, and why */
	char *txt = collector(e, "report", "--store", e->t.db, "--sensitivity", NULL);
	assert_non_null(strstr(txt, "latency sensitivity by function"));
	assert_non_null(strstr(txt, "9 windows"));
	assert_non_null(strstr(txt, "3 sessions of 2 agents"));
	assert_non_null(strstr(txt, "fsens_chase_fn"));
	assert_null(strstr(txt, "fsens_short_fn"));
	assert_non_null(strstr(txt, "<="));
	char line[160];
	snprintf(line, sizeof(line), "2 windows shorter than %u instructions, 1 cut by the stop-time limit",
		 EDAG_WINDOW_MIN_INSNS);
	assert_non_null(strstr(txt, line));
	assert_non_null(strstr(txt, "2 windows of threads whose windows all were discarded (2 short, 0 cut)"));
	free(txt);
}

static void test_fleet_sens_filters_select_windows(void **state)
{
	struct env *e = *state;
	const bool a_only[NSESS] = {true, true, false, false};
	struct want w;
	oracle(e, a_only, "fsens_chase_fn", &w);
	assert_false(w.upper); /* misses of a full set: not cold */
	char *js = collector(e, "report", "--store", e->t.db, "--sensitivity", "--json", "--agent", "fsA", NULL);
	check_row(js, "fsens_chase_fn", &w, 5, 2, 1);
	assert_true(num_after(js, NULL, "\"windows_out_of_range\":") == 0);
	free(js);
	/* fsB's windows are two hours old: --since 1h keeps fsA's alone, --until 1h fsB's */
	js = collector(e, "report", "--store", e->t.db, "--sensitivity", "--json", "--since", "1h", NULL);
	check_row(js, "fsens_chase_fn", &w, 5, 2, 1);
	assert_true(num_after(js, NULL, "\"windows_out_of_range\":") == 5);
	free(js);
	js = collector(e, "report", "--store", e->t.db, "--sensitivity", "--json", "--until", "1h", "--by", "module",
		       NULL);
	const char *row = strstr(js, "\"rows\":[{\"name\":\"test_fleet_sens\"");
	assert_non_null(row); /* one module: this executable */
	assert_true(num_after(row, NULL, "\"windows\":") == 4);
	assert_true(num_after(row, NULL, "\"sessions\":") == 1);
	assert_true(flag_after(row, "\"upper_bound\":"));
	free(js);
	/* the live page: /profile?sens=1 over the last 3 hours, every agent */
	int port;
	assert_int_equal(tp_env_start_collector_http(&e->t, &port), 0);
	char *body = NULL;
	assert_int_equal(tp_http_get(port, "/profile?since=3h&sens=1", &body), 200);
	assert_non_null(body);
	const char *sum = strstr(body, "id=\"sens-summary\" data-windows=\"9\" data-sessions=\"3\" data-agents=\"2\"");
	if (!sum)
		fail_msg("no sensitivity summary of 9 windows in the page:\n%.3000s", body);
	const char *tab = strstr(body, "id=\"sens-rows\"");
	assert_non_null(tab);
	assert_non_null(strstr(tab, "fsens_chase_fn"));
	free(body);
	/* a grouping the view does not have */
	char cbin[512], out[400];
	tp_bin("collector", cbin, sizeof(cbin));
	tp_env_path(&e->t, "bad.txt", out, sizeof(out));
	char *argv[] = {cbin, "report", "--store", e->t.db, "--sensitivity", "--by", "stack", NULL};
	assert_int_equal(tp_run(argv, out, 60000), 2);
	assert_int_equal(tp_file_count(out, "groups by function or module"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet_sens_two_agents_by_function),
		cmocka_unit_test(test_fleet_sens_filters_select_windows),
	};
	return cmocka_run_group_tests(tests, setup, tp_env_free);
}
