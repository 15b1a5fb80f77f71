/* Unit tests of the HTTP pages' renderer (collector/server/http_pages.c): the
 * per-session analysis cache (built once, used while the session gets no new
 * record, built again after one), several worker threads asking for the same
 * page at once (one analysis), and the time and size budgets. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "frame.h"
#include "log.h"
#include "net.h"
#include "report_fixture.h"
#include "server/http_pages.h"
#include "server/http_profile_args.h"
#include "store/store.h"
#include "store/store_prune.h"
#include "testproc.h"

struct fx {
	char dir[256], db[300];
	struct store *st; /* the writer */
	int64_t sid;
	struct page_cache *cache;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || tp_tmpdir(f->dir, sizeof(f->dir), "pages") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/p.db", f->dir);
	if (store_open(f->db, 0, &f->st) < 0 || rf_make_session(f->st, &f->sid) < 0)
		return -1;
	if (page_cache_new(4, &f->cache) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	page_cache_free(f->cache);
	store_close(f->st);
	tp_rm_rf(f->dir);
	free(f);
	return 0;
}

/* Render path with a read-only connection of its own, as a worker does; returns rc. */
static int render(struct fx *f, const char *path, const _Atomic uint64_t *deadline, size_t max_bytes,
		  char **body)
{
	struct http_route r;
	assert_int_equal(http_route_parse(path, &r), 0);
	struct store *st;
	assert_int_equal(cli_open_store(f->db, 0, &st), 0);
	struct page_budget b = {.deadline_ns = deadline, .max_bytes = max_bytes};
	size_t len = 0;
	*body = NULL;
	int rc = page_render(f->cache, st, &r, &b, body, &len);
	store_close(st);
	if (rc == 0)
		assert_int_equal(strlen(*body), len);
	return rc;
}

static struct page_cache_stats stats(struct fx *f)
{
	struct page_cache_stats s;
	page_cache_get_stats(f->cache, &s);
	return s;
}

static void test_http_pages_routes(void **state)
{
	(void)state;
	struct http_route r;
	assert_int_equal(http_route_parse("/", &r), 0);
	assert_int_equal(r.page, HP_INDEX);
	assert_int_equal(http_route_parse("/session/42/roofline-cpu.svg", &r), 0);
	assert_int_equal(r.page, HP_SVG_CPU);
	assert_int_equal(r.session, 42);
	assert_int_equal(http_route_parse("/session/999999999999999999.txt", &r), 0);
	assert_int_equal(r.session, 999999999999999999LL);
	static const char *const bad[] = {"/session/+1", "/session/01", "/session/", "/session/1.", "/session/1/",
					  "/session/1234567890123456789", "/sessions", "/session/-0"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (http_route_parse(bad[i], &r) != -ENOENT)
			fail_msg("%s routed", bad[i]);
}

/* The analysis is built once per session and variant and reused until the session
 * gets a new record. */
static void test_http_pages_cache_follows_records(void **state)
{
	struct fx *f = *state;
	char path[64], *b1, *b2;
	snprintf(path, sizeof(path), "/session/%lld.json", (long long)f->sid);
	assert_int_equal(render(f, path, NULL, 1 << 20, &b1), 0);
	assert_int_equal(render(f, path, NULL, 1 << 20, &b2), 0);
	assert_string_equal(b1, b2);
	assert_int_equal(stats(f).builds, 1);
	assert_int_equal(stats(f).hits, 1);
	free(b2);
	/* the HTML page and the SVG chart share the text variant: one more analysis */
	snprintf(path, sizeof(path), "/session/%lld", (long long)f->sid);
	assert_int_equal(render(f, path, NULL, 1 << 20, &b2), 0);
	free(b2);
	snprintf(path, sizeof(path), "/session/%lld/roofline-gpu.svg", (long long)f->sid);
	assert_int_equal(render(f, path, NULL, 1 << 20, &b2), 0);
	assert_non_null(strstr(b2, "<svg"));
	free(b2);
	assert_int_equal(stats(f).builds, 2);
	assert_int_equal(stats(f).hits, 2);
	/* a new record: analysed again, and the page says so */
	assert_int_equal(rf_add_heartbeat(f->st, f->sid, 10), 0);
	snprintf(path, sizeof(path), "/session/%lld.json", (long long)f->sid);
	assert_int_equal(render(f, path, NULL, 1 << 20, &b2), 0);
	assert_int_equal(stats(f).builds, 3);
	assert_string_not_equal(b1, b2);
	free(b1);
	free(b2);
	assert_int_equal(render(f, "/session/77.json", NULL, 1 << 20, &b1), -ENOENT);
}

/* A session pruned and its id given again (SQLite: INTEGER PRIMARY KEY without AUTOINCREMENT gives
 * the highest id again) to another agent run whose session reaches the same record count: its page
 * is built for it, not the deleted session's analysis taken as current (review r14 of w47b: the
 * cache's stamp was the record counts alone; now also the session's boot id, random per agent run). */
static void test_http_pages_reused_session_id_builds_again(void **state)
{
	struct fx *f = *state;
	char path[64], *b1, *b2;
	snprintf(path, sizeof(path), "/session/%lld.json", (long long)f->sid);
	assert_int_equal(render(f, path, NULL, 1 << 20, &b1), 0);
	assert_non_null(strstr(b1, "\"report-test\""));
	uint64_t rows = 0;
	assert_int_equal(store_delete_session(f->st, f->sid, &rows), 0);
	assert_true(rows > 0);
	int64_t sid2 = 0;
	struct rf_names nm = {.agent_id = "other-agent", .boot_id = 43};
	assert_int_equal(rf_make_session_names(f->st, &nm, &sid2), 0);
	assert_int_equal(sid2, f->sid); /* the id again */
	assert_int_equal(render(f, path, NULL, 1 << 20, &b2), 0);
	assert_int_equal(stats(f).builds, 2);
	assert_int_equal(stats(f).hits, 0);
	assert_non_null(strstr(b2, "\"other-agent\""));
	assert_null(strstr(b2, "\"report-test\""));
	free(b1);
	free(b2);
}

struct racer {
	struct fx *f;
	char path[64];
	char *body;
	int rc;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	r->rc = render(r->f, r->path, NULL, 1 << 20, &r->body);
	return NULL;
}

/* Four workers ask for the same page at once: one analysis, the same page for all. */
static void test_http_pages_one_analysis_for_concurrent_requests(void **state)
{
	struct fx *f = *state;
	enum { N = 4 };
	struct racer r[N];
	pthread_t t[N];
	for (int i = 0; i < N; i++) {
		r[i] = (struct racer){.f = f};
		snprintf(r[i].path, sizeof(r[i].path), "/session/%lld.txt", (long long)f->sid);
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (int i = 0; i < N; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	for (int i = 0; i < N; i++) {
		assert_int_equal(r[i].rc, 0);
		assert_string_equal(r[i].body, r[0].body);
	}
	for (int i = 0; i < N; i++)
		free(r[i].body);
	struct page_cache_stats s = stats(f);
	assert_int_equal(s.builds, 1);
	assert_int_equal(s.hits + s.builds, N);
}

/* Past its deadline a render stops (-ETIMEDOUT); over its size budget it is refused (-EFBIG). */
static void test_http_pages_budgets(void **state)
{
	struct fx *f = *state;
	char path[64], *b;
	snprintf(path, sizeof(path), "/session/%lld", (long long)f->sid);
	_Atomic uint64_t past = 1;
	assert_int_equal(render(f, path, &past, 1 << 20, &b), -ETIMEDOUT);
	assert_null(b);
	assert_int_equal(render(f, "/sessions.json", &past, 1 << 20, &b), -ETIMEDOUT);
	assert_int_equal(render(f, path, NULL, 512, &b), -EFBIG);
	assert_null(b);
	assert_int_equal(stats(f).builds, 2); /* the timed-out analysis was not kept */
	_Atomic uint64_t later = clock_mono_ns() + 60ull * 1000000000ull;
	assert_int_equal(render(f, path, &later, 1 << 20, &b), 0);
	assert_non_null(strstr(b, "</html>"));
	free(b);
}

/* /profile's query string: %-decoding, agent lists, default range, compare only with both ranges. */
static void test_http_pages_profile_args(void **state)
{
	(void)state;
	const int64_t now = 2000000000LL * 1000000000;
	struct query_opts qo;
	struct profile_args a;
	query_opts_init(&qo, now);
	profile_args_parse(NULL, now, 600, &a, &qo);
	assert_false(a.given);
	assert_false(a.compare);
	assert_true(a.since_ns == now - 600000000000LL && a.until_ns == now);
	query_opts_free(&qo);
	query_opts_init(&qo, now);
	profile_args_parse("since=10m&until=now&agent=a%2Cb&agent=c+d&a_since=1999999000&a_until=1999999100"
			   "&b_since=2026-01-01T00%3A00%3A00Z&b_until=2026-01-01T00%3A01%3A00Z&x=1",
			   now, 600, &a, &qo);
	assert_string_equal(a.err, "");
	assert_true(a.given && a.compare);
	assert_true(a.since_ns == now - 600000000000LL && a.until_ns == now);
	assert_true(a.a_ns[0] == 1999999000LL * 1000000000 && a.a_ns[1] == 1999999100LL * 1000000000);
	assert_true(a.b_ns[1] - a.b_ns[0] == 60000000000LL);
	assert_int_equal(qo.f.nagents, 3);
	assert_string_equal(qo.f.agents[2], "c d");
	assert_string_equal(a.agent, "a,b,c d");
	query_opts_free(&qo);
	/* one range only, a bad time, a bad escape: the default range and a message */
	query_opts_init(&qo, now);
	profile_args_parse("a_since=5m&offcpu=1", now, 600, &a, &qo);
	assert_true(a.offcpu);
	assert_false(a.sens);
	assert_false(a.compare);
	assert_non_null(strstr(a.err, "compare"));
	query_opts_free(&qo);
	query_opts_init(&qo, now);
	profile_args_parse("sens=1", now, 600, &a, &qo);
	assert_true(a.sens && a.given && !a.offcpu);
	query_opts_free(&qo);
	query_opts_init(&qo, now);
	profile_args_parse("since=yesterday&until=%zz", now, 600, &a, &qo);
	assert_true(a.err[0] != '\0');
	assert_true(a.since_ns == now - 600000000000LL && a.until_ns == now);
	query_opts_free(&qo);
	char out[8];
	assert_int_equal(profile_url_decode("%00", 3, out, sizeof(out)), -EINVAL);
	assert_int_equal(profile_url_decode("%4", 2, out, sizeof(out)), -EINVAL);
	assert_int_equal(profile_url_decode("%3c+", 4, out, sizeof(out)), 0);
	assert_string_equal(out, "< ");
}

int main(void)
{
	log_init("test_http_pages", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_http_pages_routes),
	    cmocka_unit_test(test_http_pages_profile_args),
	    cmocka_unit_test_setup_teardown(test_http_pages_cache_follows_records, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_pages_one_analysis_for_concurrent_requests, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_pages_budgets, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_http_pages_reused_session_id_builds_again, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
