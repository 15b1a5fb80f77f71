/* Unit tests of the report overview (collector/report/overview*.c) on a
 * fixture session: the JSON schema against a reviewed golden file, the text
 * sections and the self-contained HTML page.
 * PROF_UPDATE_GOLDEN=1 rewrites tests/data/report_overview.golden.json. */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "report/overview.h"
#include "report/program_name.h"
#include "report_fixture.h"
#include "store/store.h"
#include "store/store_calib.h"
#include "frame.h"
#include "testproc.h"

#define GOLDEN "tests/data/report_overview.golden.json"

struct fx {
	struct store *st;
	int64_t sid;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || store_open(":memory:", 0, &f->st) < 0 || rf_make_session(f->st, &f->sid) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	store_close(f->st);
	free(f);
	return 0;
}

static char *render(struct fx *f, int (*fn)(const struct overview *, FILE *), bool json)
{
	struct overview_opts oo = {.sections = true, .json = json, .limit = 20};
	struct overview ov;
	assert_int_equal(overview_load(f->st, f->sid, &oo, &ov), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(fn(&ov, m), 0);
	assert_int_equal(fclose(m), 0);
	overview_free(&ov);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 20);
	size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
	(void)n;
	fclose(f);
	return buf;
}

static void test_report_json_matches_golden(void **state)
{
	struct fx *f = *state;
	char *json = render(f, overview_json, true);
	const char *src = getenv("PROF_SRC_DIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", GOLDEN);
	const char *upd = getenv("PROF_UPDATE_GOLDEN");
	if (upd && strcmp(upd, "1") == 0) {
		FILE *g = fopen(path, "w");
		assert_non_null(g);
		fputs(json, g);
		fclose(g);
		print_message("wrote %s: review it before committing\n", path);
	}
	char *golden = slurp(path);
	if (!golden)
		fail_msg("%s is missing: run with PROF_UPDATE_GOLDEN=1 and review it", path);
	if (strcmp(json, golden) != 0) {
		print_message("got:\n%s\n", json);
		fail_msg("the JSON report differs from %s (schema change? update and review the golden file)", path);
	}
	free(golden);
	free(json);
}

static void test_report_json_sections(void **state)
{
	struct fx *f = *state;
	char *json = render(f, overview_json, true);
	static const char *const keys[] = {"\"schema\":\"prof-report/1\"", "\"board\":{", "\"top\":", "\"opencl\":",
					   "\"roofline\":{", "\"sensitivity\":{", "\"calibration\":{",
					   "\"ridge_flops_per_byte\":10"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strstr(json, keys[i]))
			fail_msg("no %s in %s", keys[i], json);
	free(json);
}

static void test_report_text_sections(void **state)
{
	struct fx *f = *state;
	char *txt = render(f, overview_text, false);
	static const char *const want[] = {
		"session 1: cmd ./fixture on testhost (host), kernel 6.1.0-test",
		"pi = 100 GFLOP/s, beta = 10 GB/s, ridge point pi/beta = 10 FLOP/byte",
		"no counters in this session",
		"latency sensitivity (eDAG, alpha0 = 100 cycles, m = 2)",
		"fixture tid 101",
		"calibration: this session's calibration records (9 parameters)",
		"ceilings from: this session's calibration records",
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(txt, want[i]))
			fail_msg("no '%s' in:\n%s", want[i], txt);
	free(txt);
}

static void test_report_html_self_contained(void **state)
{
	struct fx *f = *state;
	char *html = render(f, overview_html, false);
	assert_non_null(strstr(html, "<!DOCTYPE html>"));
	assert_non_null(strstr(html, "class=\"plot roofline-gpu\""));
	assert_non_null(strstr(html, "class=\"plot sensitivity\""));
	/* inline SVG charts, and nothing fetched from elsewhere */
	size_t nsvg = 0;
	for (const char *p = strstr(html, "<svg "); p; p = strstr(p + 1, "<svg "))
		nsvg++;
	assert_true(nsvg >= 3); /* GPU roof, CPU roof, one sensitivity chart */
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "<link"));
	assert_null(strstr(html, "href=\"http"));
	free(html);
}

static void test_report_missing_session(void **state)
{
	struct fx *f = *state;
	struct overview_opts oo = {0};
	struct overview ov;
	assert_int_equal(overview_load(f->st, 99, &oo, &ov), -ENOENT);
}

/* A session of agent id / board: its Hello, optionally one Calibration record. */
static int64_t profile_session(struct store *st, const char *agent, const char *board, uint64_t boot, double peak)
{
	Prof__Hello h;
	prof__hello__init(&h);
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)agent;
	h.boot_id = boot;
	h.board = (char *)board;
	h.machine = "x86_64";
	h.target = "cmd ./x";
	h.clock_id = 1;
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(st, &h, "test", &sid, &max_seq, NULL), 0);
	if (peak > 0) {
		Prof__CalibParam p[2], *pp[2];
		const char *names[2] = {"peak_gflops", "peak_gbps"};
		for (int i = 0; i < 2; i++) {
			prof__calib_param__init(&p[i]);
			p[i].name = (char *)names[i];
			p[i].unit = i ? "GB/s" : "GFLOP/s";
			p[i].value = i ? peak / 10 : peak;
			p[i].method = "test";
			p[i].confidence = 1;
			pp[i] = &p[i];
		}
		Prof__Calibration cal = PROF__CALIBRATION__INIT;
		cal.device = "G";
		cal.benchmark = "peak";
		cal.n_params = 2;
		cal.params = pp;
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		env.seq = 1;
		env.body_case = PROF__ENVELOPE__BODY_CALIBRATION;
		env.calibration = &cal;
		assert_int_equal(store_put_record(st, sid, &env, 100), 1);
	}
	assert_int_equal(store_commit(st), 0);
	return sid;
}

static int64_t calib_source_session(struct store *st, int64_t sid, char *src, size_t len)
{
	struct overview_opts oo = {.limit = 5};
	struct overview ov;
	assert_int_equal(overview_load(st, sid, &oo, &ov), 0);
	snprintf(src, len, "%s", ov.calib_source);
	int64_t cs = ov.calib_session;
	overview_free(&ov);
	return cs;
}

/* A profile (agent id + board + machine): the latest calibration before a session
 * applies to it, a later one when there is none before; other agents' never. */
static void test_report_profile_calibration_applies_to_later_sessions(void **state)
{
	(void)state;
	struct store *st;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	int64_t c1 = profile_session(st, "board-a", "host", 1, 100);
	int64_t p2 = profile_session(st, "board-a", "host", 2, 0);
	int64_t c3 = profile_session(st, "board-a", "host", 3, 200);
	int64_t p4 = profile_session(st, "board-a", "host", 4, 0);
	int64_t o5 = profile_session(st, "board-b", "host", 5, 0);	 /* another agent: no calibration */
	int64_t q6 = profile_session(st, "board-c", "host", 6, 0);	 /* profiled before... */
	int64_t c7 = profile_session(st, "board-c", "host", 7, 300); /* ...its board was calibrated */
	char src[OV_NOTE_MAX];
	assert_int_equal(calib_source_session(st, c1, src, sizeof(src)), c1);
	assert_non_null(strstr(src, "this session's calibration records"));
	assert_int_equal(calib_source_session(st, p2, src, sizeof(src)), c1);
	assert_int_equal(calib_source_session(st, p4, src, sizeof(src)), c3);
	assert_non_null(strstr(src, "the latest calibration of this board"));
	assert_int_equal(calib_source_session(st, o5, src, sizeof(src)), 0);
	assert_int_equal(calib_source_session(st, q6, src, sizeof(src)), c7);
	assert_non_null(strstr(src, "made after this session"));
	/* the same choice for the session list */
	int64_t calib_sid = 0;
	bool later = false;
	assert_int_equal(store_calib_for_session(st, p4, &calib_sid, &later), 1);
	assert_int_equal(calib_sid, c3);
	assert_false(later);
	assert_int_equal(store_calib_for_session(st, o5, &calib_sid, &later), 0);
	store_close(st);
}

/* Issue 42 item 5: a report says which calibration it used (session, when it was made) and
 * warns when that one moved from the board's previous calibration beyond the spread (two
 * quick calibrations 14 min apart gave a CPU peak of 13.0 and 86.5 GFLOP/s). */
static void test_report_calibration_moved_is_said(void **state)
{
	(void)state;
	struct store *st;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	int64_t c1 = profile_session(st, "drift", "host", 1, 13.0);
	int64_t c2 = profile_session(st, "drift", "host", 2, 13.3); /* +2.3 %: within */
	int64_t p3 = profile_session(st, "drift", "host", 3, 0);
	struct overview_opts oo = {.limit = 5};
	struct overview ov;
	assert_int_equal(overview_load(st, p3, &oo, &ov), 0);
	assert_int_equal(ov.calib_session, c2);
	assert_int_equal(ov.calib_drift.prev_session, c1);
	assert_int_equal(ov.calib_drift.n, 0);
	assert_non_null(strstr(ov.calib_source, "(made 20")); /* when the calibration was made, UTC */
	overview_free(&ov);

	int64_t c4 = profile_session(st, "drift", "host", 4, 86.5);
	int64_t p5 = profile_session(st, "drift", "host", 5, 0);
	assert_int_equal(overview_load(st, p5, &oo, &ov), 0);
	assert_int_equal(ov.calib_session, c4);
	assert_int_equal(ov.calib_drift.prev_session, c2);
	assert_int_equal(ov.calib_drift.n, 2); /* peak_gflops and peak_gbps */
	assert_string_equal(ov.calib_drift.moved[0].name, "peak_gflops");
	assert_true(ov.calib_drift.moved[0].before == 13.3 && ov.calib_drift.moved[0].after == 86.5);
	char *text = NULL, *json = NULL;
	size_t tl = 0, jl = 0;
	FILE *t = open_memstream(&text, &tl), *j = open_memstream(&json, &jl);
	assert_int_equal(overview_text(&ov, t), 0);
	assert_int_equal(overview_json(&ov, j), 0);
	fclose(t);
	fclose(j);
	char want[160];
	snprintf(want, sizeof(want), "WARNING: this calibration (session %lld) moved from the board's previous one "
		 "(session %lld) beyond its spread", (long long)c4, (long long)c2);
	if (!strstr(text, want) || !strstr(text, "13.3 -> 86.5"))
		fail_msg("want '%s' and the peak's move in:\n%s", want, text);
	snprintf(want, sizeof(want), "\"previous_session\":%lld,\"moved\":[{\"name\":\"peak_gflops\"", (long long)c2);
	if (!strstr(json, want))
		fail_msg("want '%s' in:\n%s", want, json);
	free(text);
	free(json);
	overview_free(&ov);
	/* the calibration session's own report compares it with the one before it too */
	assert_int_equal(overview_load(st, c4, &oo, &ov), 0);
	assert_int_equal(ov.calib_drift.prev_session, c2);
	assert_int_equal(ov.calib_drift.n, 2);
	overview_free(&ov);
	/* and the first calibration of a board has nothing to compare with */
	assert_int_equal(overview_load(st, c1, &oo, &ov), 0);
	assert_int_equal(ov.calib_drift.prev_session, 0);
	overview_free(&ov);
	store_close(st);
}

/* Issue 42 item 6: the calibration table keeps its columns aligned when a name is longer
 * than the old fixed width (cpu_peak_gflops_of_physical: 27 characters against 20). */
static void test_report_calibration_columns_aligned(void **state)
{
	(void)state;
	struct store *st;
	int64_t sid;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	struct rf_names nm = {.calib_param = "cpu_peak_gflops_of_physical"};
	assert_int_equal(rf_make_session_names(st, &nm, &sid), 0);
	struct overview_opts oo = {.limit = 5};
	struct overview ov;
	assert_int_equal(overview_load(st, sid, &oo, &ov), 0);
	char *text = NULL;
	size_t tl = 0;
	FILE *t = open_memstream(&text, &tl);
	assert_int_equal(overview_text(&ov, t), 0);
	fclose(t);
	overview_free(&ov);
	store_close(st);
	const char *p = strstr(text, "\ncalibration: ");
	assert_non_null(p);
	p = strchr(p + 1, '\n') + 1;
	int rows = 0, value_end = -1;
	/* the rows up to the "N parameters, N flagged" line: each value ends in the same column */
	for (; strncmp(p, "  ", 2) == 0 && p[2] != ' ' && !(p[2] >= '0' && p[2] <= '9'); p = strchr(p, '\n') + 1) {
		const char *e = p + 2 + strcspn(p + 2, " "); /* the name */
		e += strspn(e, " ");
		e += strcspn(e, " "); /* the value, right-aligned: its end is the column */
		int ve = (int)(e - p);
		if (value_end < 0)
			value_end = ve;
		if (ve != value_end) {
			fprintf(stderr, "%s", text);
			fail_msg("row %d ends its value at column %d, the first at %d (above)", rows, ve, value_end);
		}
		rows++;
	}
	if (rows < 8) {
		fprintf(stderr, "%s", text);
		fail_msg("%d rows under calibration (above)", rows);
	}
	assert_non_null(strstr(text, "  cpu_peak_gflops_of_physical "));
	free(text);
}

/* Output of `collector ARGS` from the build (stdout only), its exit status in *status. */
static char *collector_out(const char *args, int *status)
{
	char bin[512], cmd[2048];
	tp_bin("collector", bin, sizeof(bin));
	snprintf(cmd, sizeof(cmd), "timeout 120 %s %s 2>/dev/null", bin, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	char *buf = calloc(1, 1 << 20);
	assert_non_null(buf);
	size_t n = fread(buf, 1, (1 << 20) - 1, p);
	(void)n;
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}

/* Issue 42 item 4: `collector edag --store --session` takes the report's eDAG settings (the
 * fixture's calibration: alpha0 100 cycles, m 2; the engine's default m is 1) and every
 * output says where they came from; flags still override them. */
static void test_report_edag_cli_same_settings_as_report(void **state)
{
	(void)state;
	char dir[256], db[300], args[600];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "report-edag"), 0);
	snprintf(db, sizeof(db), "%s/s.db", dir);
	struct store *st;
	int64_t sid;
	assert_int_equal(store_open(db, 0, &st), 0);
	assert_int_equal(rf_make_session(st, &sid), 0);
	store_close(st);
	int status;
	snprintf(args, sizeof(args), "edag --store %s --session %lld --json", db, (long long)sid);
	char *edag = collector_out(args, &status);
	assert_int_equal(status, 0);
	snprintf(args, sizeof(args), "sensitivity --store %s --session %lld --json", db, (long long)sid);
	char *sens = collector_out(args, &status);
	assert_int_equal(status, 0);
	if (!strstr(edag, "\"alpha0\":100,\"m\":2,") ||
	    !strstr(edag, "\"params_from\":\"the calibration of session 1 (mem_latency_cycles, mem_issue_slots)\"") ||
	    !strstr(sens, "\"alpha0\":100,\"m\":2,") ||
	    !strstr(sens, "\"params_from\":\"the calibration of session 1 (mem_latency_cycles, mem_issue_slots)\""))
		fail_msg("edag and sensitivity differ:\n%s\n%s", edag, sens);
	free(edag);
	free(sens);
	snprintf(args, sizeof(args), "edag --store %s --session %lld", db, (long long)sid);
	char *text = collector_out(args, &status);
	assert_int_equal(status, 0);
	if (!strstr(text, "eDAG settings: alpha0 = 100 cycles, m = 2 (from the calibration of session 1"))
		fail_msg("%s", text);
	free(text);
	snprintf(args, sizeof(args), "report --store %s --session %lld", db, (long long)sid);
	text = collector_out(args, &status);
	assert_int_equal(status, 0);
	if (!strstr(text, "latency sensitivity (eDAG, alpha0 = 100 cycles, m = 2):\n  alpha0 and m from: the "
			  "calibration of session 1"))
		fail_msg("%s", text);
	free(text);
	snprintf(args, sizeof(args), "edag --store %s --session %lld -m 4", db, (long long)sid);
	text = collector_out(args, &status);
	assert_int_equal(status, 0);
	if (!strstr(text, "eDAG settings: alpha0 = 100 cycles, m = 4 (from the command line (--alpha0, -m))"))
		fail_msg("%s", text);
	free(text);
	tp_rm_rf(dir);
}

/* The spread of the measurements widens the tolerance: a move within it is no warning. */
static void test_report_calib_drift_within_spread(void **state)
{
	(void)state;
	struct calib_model a = {0}, b = {0};
	assert_int_equal(calib_model_put(&a, "cpu_peak_gflops", 10, "GFLOP/s", "t", 0.3, 1), 0);
	assert_int_equal(calib_model_put(&b, "cpu_peak_gflops", 12, "GFLOP/s", "t", 0.01, 1), 0);
	assert_int_equal(calib_model_put(&a, "mem_issue_slots", 4, "chains", "t", 0, 1), 0);
	assert_int_equal(calib_model_put(&b, "mem_issue_slots", 3, "chains", "t", 0, 1), 0);
	assert_int_equal(calib_model_put(&a, "l1_latency_cycles", 4, "cycles", "t", 0, 1), 0); /* not a key figure */
	assert_int_equal(calib_model_put(&b, "l1_latency_cycles", 9, "cycles", "t", 0, 1), 0);
	struct calib_drift d;
	assert_int_equal(calib_drift_compare(&a, &b, &d), 1); /* +20 % within 30 %; -25 % beyond 5 % */
	assert_string_equal(d.moved[0].name, "mem_issue_slots");
	assert_true(d.moved[0].rel == -0.25 && d.moved[0].tol == CALIB_DRIFT_MIN_REL);
}

/* The calibration's CPU caches (sysfs, via agent calibrate) become the eDAG
 * cache model when no --machine gives one, and the report says so; a last
 * level too large to simulate is left out. */
static void test_report_cache_model_from_calibration(void **state)
{
	(void)state;
	struct store *st;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	Prof__Hello h;
	prof__hello__init(&h);
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "board-x";
	h.boot_id = 1;
	h.board = "host";
	h.clock_id = 1;
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(st, &h, "test", &sid, &max_seq, NULL), 0);
	static const struct {
		const char *name;
		double v;
	} pv[] = {{"mem_latency_cycles", 200},	   {"mem_issue_slots", 4},	     {"cpu_cache_l1_bytes", 49152},
		  {"cpu_cache_l1_ways", 12},	   {"cpu_cache_l1_line_bytes", 64}, {"cpu_cache_l2_bytes", 2097152},
		  {"cpu_cache_l2_ways", 16},	   {"cpu_cache_l2_line_bytes", 64}, {"cpu_cache_l3_bytes", 503316480},
		  {"cpu_cache_l3_ways", 16},	   {"cpu_cache_l3_line_bytes", 64}};
	enum { NP = sizeof(pv) / sizeof(pv[0]) };
	Prof__CalibParam p[NP], *pp[NP];
	for (size_t i = 0; i < NP; i++) {
		prof__calib_param__init(&p[i]);
		p[i].name = (char *)pv[i].name;
		p[i].unit = "x";
		p[i].value = pv[i].v;
		p[i].method = "test";
		p[i].confidence = 1;
		pp[i] = &p[i];
	}
	Prof__Calibration cal = PROF__CALIBRATION__INIT;
	cal.device = "cpu";
	cal.benchmark = "mem_slots";
	cal.n_params = NP;
	cal.params = pp;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_CALIBRATION;
	env.calibration = &cal;
	assert_int_equal(store_put_record(st, sid, &env, 100), 1);
	assert_int_equal(store_commit(st), 0);
	struct overview_opts oo = {.limit = 5};
	struct overview ov;
	assert_int_equal(overview_load(st, sid, &oo, &ov), 0);
	assert_int_equal(ov.edag.nlevels, 2); /* 480 MiB L3 left out */
	assert_int_equal(ov.edag.level[0].size, 49152);
	assert_int_equal(ov.edag.level[0].assoc, 12);
	assert_int_equal(ov.edag.level[1].size, 2097152);
	assert_int_equal(ov.edag.alpha0, 200);
	char *txt = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&txt, &len);
	overview_sensitivity_text(&ov, f);
	fclose(f);
	assert_non_null(strstr(txt, "cache model: project ("));
	assert_non_null(strstr(txt, "fill): L1d 48 KiB 12-way 64 B lines (hit 4), L2 2 MiB 16-way"));
	assert_non_null(strstr(txt, "from the calibration's CPU caches"));
	free(txt);
	overview_free(&ov);
	store_close(st);
}

/* A --machine file with the eDAG part only (alpha0, m, caches) and no
 * calibration parameters: its eDAG parameters are used, and the warning says
 * that it has no calibration parameters (it used to print an uninitialised
 * buffer there). */
static void test_report_machine_without_calibration_says_so(void **state)
{
	struct fx *f = *state;
	char path[] = "/tmp/prof-machine-XXXXXX", logp[] = "/tmp/prof-machine-log-XXXXXX";
	int fd = mkstemp(path), lfd = mkstemp(logp);
	assert_true(fd >= 0 && lfd >= 0);
	static const char json[] = "{\"alpha0\": 150, \"m\": 2, \"caches\": [{\"size\": \"32K\", \"assoc\": 8, "
				   "\"line\": 64, \"latency\": 4}]}";
	assert_int_equal(write(fd, json, sizeof(json) - 1), (ssize_t)(sizeof(json) - 1));
	close(fd);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0);
	dup2(lfd, 2);
	struct overview_opts oo = {.limit = 5, .machine = path};
	struct overview ov;
	int rc = overview_load(f->st, f->sid, &oo, &ov);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(lfd);
	assert_int_equal(rc, 0);
	assert_int_equal(ov.edag.alpha0, 150);
	assert_int_equal(ov.edag.nlevels, 1);
	overview_free(&ov);
	char *log = slurp(logp);
	assert_non_null(log);
	if (!strstr(log, "not a calibrated machine model (no calibration parameters): no roofline ceilings"))
		fail_msg("warning not as expected: %s", log);
	free(log);
	unlink(path);
	unlink(logp);
}

/* Counters with an instructions and a cache-miss count but no FP event (an x86
 * host): the trace windows' FP share (1 in 3 of the fixture's instructions)
 * stands in, and the CPU dot is placed and says where W came from. */
static void test_report_cpu_dot_from_instructions_and_trace_fp_share(void **state)
{
	(void)state;
	struct store *st;
	int64_t sid;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	assert_int_equal(rf_make_session(st, &sid), 0);
	Prof__EventDesc ev[3], *evp[3];
	static const struct {
		const char *name, *unit;
		uint32_t type;
		uint64_t config;
	} e[3] = {{"instructions", "", 0, 1}, {"cache-misses", "", 0, 3}, {"task-clock", "ns", 1, 1}};
	uint32_t ids[3];
	for (int i = 0; i < 3; i++) {
		prof__event_desc__init(&ev[i]);
		ev[i].id = (uint32_t)i + 1;
		ev[i].name = (char *)e[i].name;
		ev[i].unit = (char *)e[i].unit;
		ev[i].type = e[i].type;
		ev[i].config = e[i].config;
		evp[i] = &ev[i];
		ids[i] = (uint32_t)i + 1;
	}
	uint64_t t[1] = {1000000000ull}, v[3] = {3000000000ull, 10000000ull, 1000000000ull};
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_new_events = 3;
	c.new_events = evp;
	c.n_event_ids = 3;
	c.event_ids = ids;
	c.n_t_ns = 1;
	c.t_ns = t;
	c.n_values = 3;
	c.values = v;
	c.pid = 100;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 10;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	assert_int_equal(store_put_record(st, sid, &env, 100), 1);
	assert_int_equal(store_commit(st), 0);
	struct overview_opts oo = {.limit = 5};
	struct overview ov;
	assert_int_equal(overview_load(st, sid, &oo, &ov), 0);
	assert_int_equal(ov.trace_insns, 798);
	assert_int_equal(ov.trace_flops, 266);
	const struct rl_dot *d = NULL;
	for (size_t i = 0; i < ov.ndots; i++)
		if (ov.dots[i].cpu)
			d = &ov.dots[i];
	if (!d)
		fail_msg("no CPU dot; notes: %s", ov.nnotes ? ov.notes[0] : "-");
	assert_float_equal(d->p.W, 1e9, 1e3);  /* 3e9 instructions x 266/798 */
	assert_float_equal(d->p.Q, 6.4e8, 1);  /* 1e7 misses x 64 B */
	assert_float_equal(d->p.seconds, 1, 1e-9);
	assert_non_null(strstr(d->source, "instructions x FP share 0.333 of 798 traced"));
	overview_free(&ov);
	store_close(st);
}

/* Issue 30, 7: VFP_SPEC/ASE_SPEC and L2D_CACHE_REFILL recorded but read 0 (QEMU's PMU counts
 * only cycles and instructions): a note says so, instead of "I = -nan" or nothing. */
static void test_report_cpu_dot_zero_counters_say_so(void **state)
{
	(void)state;
	struct store *st;
	int64_t sid;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	assert_int_equal(rf_make_session(st, &sid), 0);
	Prof__EventDesc ev[4], *evp[4];
	static const struct {
		const char *name, *unit;
		uint32_t type;
		uint64_t config;
	} e[4] = {{"VFP_SPEC", "", 4, 0x75}, {"ASE_SPEC", "", 4, 0x74}, {"L2D_CACHE_REFILL", "", 4, 0x17},
		  {"task-clock", "ns", 1, 1}};
	uint32_t ids[4];
	for (int i = 0; i < 4; i++) {
		prof__event_desc__init(&ev[i]);
		ev[i].id = (uint32_t)i + 1;
		ev[i].name = (char *)e[i].name;
		ev[i].unit = (char *)e[i].unit;
		ev[i].type = e[i].type;
		ev[i].config = e[i].config;
		evp[i] = &ev[i];
		ids[i] = (uint32_t)i + 1;
	}
	uint64_t t[1] = {1000000000ull}, v[4] = {0, 0, 0, 1000000000ull};
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_new_events = 4;
	c.new_events = evp;
	c.n_event_ids = 4;
	c.event_ids = ids;
	c.n_t_ns = 1;
	c.t_ns = t;
	c.n_values = 4;
	c.values = v;
	c.pid = 100;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 10;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	assert_int_equal(store_put_record(st, sid, &env, 100), 1);
	assert_int_equal(store_commit(st), 0);
	struct overview_opts oo = {.limit = 5};
	struct overview ov;
	assert_int_equal(overview_load(st, sid, &oo, &ov), 0);
	for (size_t i = 0; i < ov.ndots; i++)
		assert_false(ov.dots[i].cpu);
	bool said = false;
	for (size_t i = 0; i < ov.nnotes; i++) {
		assert_null(strstr(ov.notes[i], "nan"));
		if (strstr(ov.notes[i], "CPU dot: the floating-point and traffic counters read 0"))
			said = true;
	}
	if (!said)
		fail_msg("no note for the zero counters; first note: %s", ov.nnotes ? ov.notes[0] : "-");
	overview_free(&ov);
	store_close(st);
}

/* No sensitivity row from a window that cannot vote: a thread whose only window is
 * one single step (make demo under load printed W 0, Lambda*a0 0.000, "never",
 * interval [0, 0] from one) or one cut by the stop-time limit gets no row; a
 * thread with a usable window gets its row, and the row says how many of its
 * windows were discarded and why. */
static void test_report_sensitivity_discards_short_and_cut_windows(void **state)
{
	struct fx *f = *state;
	assert_int_equal(rf_add_trace_window(f->st, f->sid, 10, 301, 1, 1, 0), 0);	/* 1 step */
	assert_int_equal(rf_add_trace_window(f->st, f->sid, 11, 302, 300, 2, 7), 0); /* cut */
	assert_int_equal(rf_add_trace_window(f->st, f->sid, 12, 101, 1, 1, 0), 0);	/* the fixture's thread */
	char *txt = render(f, overview_text, false);
	assert_null(strstr(txt, "tid 301"));
	assert_null(strstr(txt, "tid 302"));
	assert_non_null(strstr(txt, "fixture tid 101"));
	assert_non_null(strstr(txt, "1 of 3 windows discarded: 1 shorter than 256 instructions"));
	/* the threads without a row are counted beside the rows */
	assert_non_null(strstr(txt, "no row for threads whose 2 trace windows were all discarded (1 shorter than 256 "
				    "instructions, 1 cut by the agent's stop-time limit)"));
	free(txt);
	char *js = render(f, overview_json, true);
	assert_non_null(strstr(js, "\"windows\":2,\"insns\":798,\"windows_taken\":3"));
	free(js);
}

/* Every window discarded: no row, and the note says how many and why (an empty
 * record is a window the agent lost in its warm-up: counted, it once left the
 * report saying only "no trace windows ... capture them with agent profile" to a
 * user who had). */
static void test_report_sensitivity_note_when_every_window_discarded(void **state)
{
	struct fx *f = *state;
	struct store *st;
	int64_t sid;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	assert_int_equal(rf_make_trace_session(st, "discards", 0, 3, &sid), 0);
	assert_int_equal(rf_add_trace_window(st, sid, 1, 401, 1, 1, 0), 0);
	assert_int_equal(rf_add_trace_window(st, sid, 2, 401, 2000, 2, 7), 0);
	/* a replay window the stop-time limit cut in its warm-up: the agent sends it empty */
	assert_int_equal(rf_add_trace_window(st, sid, 3, 401, 0, 2, 7), 0);
	struct fx g = {.st = st, .sid = sid};
	char *txt = render(&g, overview_text, false);
	assert_non_null(
	    strstr(txt, "no row: all 3 trace windows discarded (1 shorter than 256 instructions, 2 cut by the agent's "
			"stop-time limit"));
	free(txt);
	store_close(st);
	(void)f;
}

/* #41: agent run names a command "app args" (as perf); older agents wrote "cmd ./app args" */
static void test_report_program_of_target(void **state)
{
	char prog[64];
	program_of_target("cl_matmul 16 20000", prog, sizeof(prog));
	assert_string_equal(prog, "cl_matmul");
	program_of_target("cmd ./build/host/workloads/cl_matmul 16", prog, sizeof(prog));
	assert_string_equal(prog, "cl_matmul");
	program_of_target("qemu-aarch64 /opt/prog 3", prog, sizeof(prog));
	assert_string_equal(prog, "prog");
	program_of_target("pid 12", prog, sizeof(prog));
	assert_string_equal(prog, "");
	program_of_target("system-wide", prog, sizeof(prog));
	assert_string_equal(prog, "");
	(void)state;
}

int main(void)
{
	log_init("test_report", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_json_matches_golden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_sensitivity_discards_short_and_cut_windows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_sensitivity_note_when_every_window_discarded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_json_sections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_text_sections, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_html_self_contained, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_missing_session, setup, teardown),
		cmocka_unit_test(test_report_program_of_target),
		cmocka_unit_test(test_report_profile_calibration_applies_to_later_sessions),
		cmocka_unit_test(test_report_calibration_moved_is_said),
		cmocka_unit_test(test_report_calib_drift_within_spread),
		cmocka_unit_test(test_report_edag_cli_same_settings_as_report),
		cmocka_unit_test(test_report_calibration_columns_aligned),
		cmocka_unit_test(test_report_cache_model_from_calibration),
		cmocka_unit_test(test_report_cpu_dot_from_instructions_and_trace_fp_share),
		cmocka_unit_test(test_report_cpu_dot_zero_counters_say_so),
		cmocka_unit_test_setup_teardown(test_report_machine_without_calibration_says_so, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
