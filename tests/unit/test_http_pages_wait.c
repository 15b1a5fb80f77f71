/* A session page request that waits on the page cache for another worker's analysis holds no read
 * snapshot while it waits (#40 w47b, review r9 of w46b), on PostgreSQL (store_fx.h: a throwaway server
 * on 127.0.0.1): the first request's build is held inside its read snapshot (page_cache_set_build_hook,
 * at most HOLD_S seconds), a second request for the same page waits for it, and pg_stat_activity shows
 * the collector's connections (application_name 'prof-collector/2'): the builder's in a transaction with
 * a snapshot (the observation works), the waiter's idle with no transaction and no snapshot
 * (xact_start and backend_xmin NULL). Both then get the same page, the one a fresh cache builds from the
 * store as it is (the record committed after the cache's last analysis included). And, on SQLite and
 * PostgreSQL, an analysis is never labelled with a stamp newer than its build's snapshot (the request's
 * stamp, read before it): a record committed during the build is not taken as analysed (the next request
 * builds again and shows it).
 *
 * No SQLite case: there is no clean observable of the waiter alone. The builder's own read transaction
 * (required: the analysis is read in one snapshot) began before the waiter arrived, so it pins the WAL at
 * a frame no later than the waiter's would: a checkpoint (PASSIVE, RESTART, TRUNCATE) stops at the same
 * frame with or without the waiter's read transaction, and SQLite shows no other connection's
 * transactions. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "frame.h"
#include "log.h"
#include "net.h"
#include "report_fixture.h"
#include "server/http_pages.h"
#include "server/http_route.h"
#include "store/db.h"
#include "store/store.h"
#include "store_fx.h"

#define HOLD_S 20 /* the longest the build is held */
#define WAIT_S 20 /* the longest the test waits for a request to reach a state */

/* The build hook: holds the first build until released (or HOLD_S). */
struct hold {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool holding, released;
	unsigned builds;
};

static void hold_build(void *arg, long long sid)
{
	(void)sid;
	struct hold *h = arg;
	pthread_mutex_lock(&h->mu);
	if (h->builds++ == 0) {
		h->holding = true;
		pthread_cond_broadcast(&h->cv);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += HOLD_S;
		while (!h->released && pthread_cond_timedwait(&h->cv, &h->mu, &until) == 0)
			;
		h->holding = false;
	}
	pthread_mutex_unlock(&h->mu);
}

struct request {
	const char *uri;
	struct page_cache *cache;
	char path[64];
	char *body;
	int rc;
};

/* One request on a connection of its own, as a worker makes it (http_worker.c run_job). */
static void *request(void *arg)
{
	struct request *q = arg;
	struct http_route r;
	q->rc = http_route_parse(q->path, &r);
	struct store *st = NULL;
	if (q->rc == 0)
		q->rc = store_open(q->uri, STORE_READ_ONLY, &st);
	if (q->rc < 0)
		return NULL;
	struct page_budget b = {.deadline_ns = NULL, .max_bytes = 1 << 20};
	size_t len = 0;
	q->rc = page_render(q->cache, st, &r, &b, &q->body, &len);
	store_close(st);
	return NULL;
}

/* The collector's connections to this database in pg_stat_activity that match cond. */
static int64_t collector_conns(struct fx *f, const char *cond)
{
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
		 "AND application_name = '" DB_PG_APP_NAME "' AND %s",
		 cond);
	return fx_q(f, sql);
}

/* Whether the collector's connections to this database are gone within WAIT_S (a backend leaves
 * pg_stat_activity shortly after its client closed the connection). */
static bool collector_gone(struct fx *f)
{
	uint64_t until = clock_mono_ns() + WAIT_S * 1000000000ull;
	while (collector_conns(f, "true") != 0) {
		if (clock_mono_ns() >= until)
			return false;
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
	}
	return true;
}

static void test_http_pages_wait_holds_no_snapshot(void **state)
{
	struct fx *f = *state;
	struct store *w = fx_open_store(f);
	int64_t sid;
	assert_int_equal(rf_make_session(w, &sid), 0);
	struct page_cache *cache;
	assert_int_equal(page_cache_new(4, &cache), 0);
	struct request q[3];
	for (int i = 0; i < 3; i++) {
		q[i] = (struct request){.uri = f->uri, .cache = cache};
		snprintf(q[i].path, sizeof(q[i].path), "/session/%lld.json", (long long)sid);
	}
	/* the cache's analysis, then a record: the next request builds it again */
	request(&q[2]);
	assert_int_equal(q[2].rc, 0);
	char *before = q[2].body;
	assert_int_equal(rf_add_heartbeat(w, sid, 10), 0);
	store_close(w);
	assert_true(collector_gone(f)); /* the requests' connections are then the collector's only ones */

	struct hold h = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
	page_cache_set_build_hook(cache, hold_build, &h);
	pthread_t t[2];
	assert_int_equal(pthread_create(&t[0], NULL, request, &q[0]), 0);
	uint64_t until = clock_mono_ns() + WAIT_S * 1000000000ull;
	pthread_mutex_lock(&h.mu);
	while (!h.holding && clock_mono_ns() < until) {
		pthread_mutex_unlock(&h.mu);
		nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
		pthread_mutex_lock(&h.mu);
	}
	bool holding = h.holding;
	pthread_mutex_unlock(&h.mu);
	struct page_cache_stats s = {0};
	int64_t all = -1, open = -1, idle = -1;
	if (holding) {
		assert_int_equal(pthread_create(&t[1], NULL, request, &q[1]), 0);
		do {
			nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
			page_cache_get_stats(cache, &s);
		} while (s.waits == 0 && clock_mono_ns() < until);
		/* the builder and the waiter */
		all = collector_conns(f, "true");
		open = collector_conns(f, "(xact_start IS NOT NULL OR backend_xmin IS NOT NULL)");
		idle = collector_conns(f, "state = 'idle' AND xact_start IS NULL AND backend_xmin IS NULL");
	}
	/* released before any assertion: a failed one leaves no thread held */
	pthread_mutex_lock(&h.mu);
	h.released = true;
	pthread_cond_broadcast(&h.cv);
	pthread_mutex_unlock(&h.mu);
	for (int i = 0; i < (holding ? 2 : 1); i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	page_cache_set_build_hook(cache, NULL, NULL);
	assert_true(holding);
	assert_int_equal(s.waits, 1); /* the second request waited for the first one's build */
	assert_int_equal(all, 2);
	if (open != 1 || idle != 1)
		fail_msg("while a request waited for another's analysis, %lld of the collector's 2 connections had "
			 "a transaction or snapshot open and %lld were idle without one (want 1 and 1: the builder's "
			 "and the waiter's)",
			 (long long)open, (long long)idle);

	/* both the same page, the current one: as a fresh cache builds it now */
	assert_int_equal(q[0].rc, 0);
	assert_int_equal(q[1].rc, 0);
	assert_string_equal(q[0].body, q[1].body);
	assert_string_not_equal(q[0].body, before); /* the heartbeat's record is counted */
	page_cache_get_stats(cache, &s);
	assert_int_equal(s.builds, 2);
	assert_int_equal(h.builds, 1);
	struct page_cache *fresh;
	assert_int_equal(page_cache_new(4, &fresh), 0);
	q[2] = (struct request){.uri = f->uri, .cache = fresh};
	snprintf(q[2].path, sizeof(q[2].path), "/session/%lld.json", (long long)sid);
	request(&q[2]);
	assert_int_equal(q[2].rc, 0);
	assert_string_equal(q[0].body, q[2].body);
	page_cache_free(fresh);
	page_cache_free(cache);
	for (int i = 0; i < 3; i++)
		free(q[i].body);
	free(before);
}

struct late {
	struct store *w;
	int64_t sid;
	unsigned builds;
};

/* The build hook: a record committed while the first build reads in its snapshot. */
static void commit_during_build(void *arg, long long sid)
{
	struct late *l = arg;
	if (l->builds++ == 0 && sid == l->sid)
		assert_int_equal(rf_add_heartbeat(l->w, l->sid, 10), 0);
}

/* A record committed after the build's snapshot began: the analysis does not have it, so its label
 * (the request's stamp, read before that snapshot) does not count it, and the next request builds again
 * and shows it; an analysis labelled with a stamp read after the build would be served as current
 * without it. */
static void test_http_pages_wait_record_during_build(void **state)
{
	struct fx *f = *state;
	struct late l = {.w = fx_open_store(f)};
	assert_int_equal(rf_make_session(l.w, &l.sid), 0);
	struct page_cache *cache, *fresh;
	assert_int_equal(page_cache_new(4, &cache), 0);
	assert_int_equal(page_cache_new(4, &fresh), 0);
	page_cache_set_build_hook(cache, commit_during_build, &l);
	struct request q[3];
	for (int i = 0; i < 3; i++) {
		q[i] = (struct request){.uri = f->uri, .cache = i < 2 ? cache : fresh};
		snprintf(q[i].path, sizeof(q[i].path), "/session/%lld.json", (long long)l.sid);
	}
	request(&q[0]);
	assert_int_equal(l.builds, 1);
	request(&q[1]);
	request(&q[2]);
	for (int i = 0; i < 3; i++)
		assert_int_equal(q[i].rc, 0);
	struct page_cache_stats s;
	page_cache_get_stats(cache, &s);
	assert_int_equal(s.builds, 2); /* the second request's stamp counts the record: built again */
	assert_string_not_equal(q[0].body, q[1].body);
	assert_string_equal(q[1].body, q[2].body); /* as a fresh cache builds it: current */
	page_cache_free(fresh);
	page_cache_free(cache);
	for (int i = 0; i < 3; i++)
		free(q[i].body);
	store_close(l.w);
}

#define BOTH(t)                                                                                                 \
	{#t "_sqlite", t, fx_setup_sqlite, fx_teardown, NULL}, {#t "_postgresql", t, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
	log_init("test_http_pages_wait", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    {"test_http_pages_wait_holds_no_snapshot_postgresql", test_http_pages_wait_holds_no_snapshot, fx_setup_pg,
	     fx_teardown, NULL},
	    BOTH(test_http_pages_wait_record_during_build),
	};
	return cmocka_run_group_tests_name("http_pages_wait", tests, fx_group_setup, fx_group_teardown);
}
