/* The cost of a session page request (collector/server/http_pages.c page_render) on one worker
 * connection, SQLite and PostgreSQL (a throwaway server, tests/lib/pgserver): a build (the session got
 * a record since its last analysis; the record's commit not timed) and a hit (the analysis cached).
 * The session is report_fixture's small one, so the analysis is cheap and a request's fixed costs (its
 * stamp, its read transactions) weigh the most they can. Prints per back end the median and p90 of
 * each, in ms. #40 w47b: a session page's stamp and its build each in a read transaction of their own.
 * usage: http_pages [BUILDS] [HITS]   (default 100 400) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "log.h"
#include "net.h"
#include "pgserver.h"
#include "report_fixture.h"
#include "server/http_pages.h"
#include "server/http_route.h"
#include "store/store.h"
#include "testproc.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void print_ms(const char *be, const char *what, uint64_t *ns, unsigned n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
	printf("| %s | %s | %u | %.3f | %.3f |\n", be, what, n, ns[n / 2] / 1e6, ns[n * 9 / 10] / 1e6);
}

static int render(struct page_cache *c, struct store *st, const struct http_route *r, uint64_t *ns)
{
	struct page_budget b = {.max_bytes = 1 << 20};
	char *body = NULL;
	size_t len;
	uint64_t t0 = clock_mono_ns();
	int rc = page_render(c, st, r, &b, &body, &len);
	*ns = clock_mono_ns() - t0;
	free(body);
	return rc;
}

static int run(const char *be, const char *uri, unsigned builds, unsigned hits)
{
	struct store *w = NULL, *st = NULL;
	struct page_cache *c = NULL;
	int64_t sid;
	int rc = store_open(uri, 0, &w);
	if (rc == 0)
		rc = rf_make_session(w, &sid);
	if (rc == 0)
		rc = store_open(uri, STORE_READ_ONLY, &st);
	if (rc == 0)
		rc = page_cache_new(4, &c);
	char path[64];
	snprintf(path, sizeof(path), "/session/%lld.json", (long long)sid);
	struct http_route r;
	if (rc == 0)
		rc = http_route_parse(path, &r);
	uint64_t *bt = calloc(builds, sizeof(*bt)), *ht = calloc(hits, sizeof(*ht)), warm;
	if (rc == 0 && (!bt || !ht))
		rc = -ENOMEM;
	if (rc == 0)
		rc = render(c, st, &r, &warm);
	for (unsigned i = 0; rc == 0 && i < builds; i++)
		if ((rc = rf_add_heartbeat(w, sid, 100 + i)) == 0)
			rc = render(c, st, &r, &bt[i]);
	for (unsigned i = 0; rc == 0 && i < hits; i++)
		rc = render(c, st, &r, &ht[i]);
	struct page_cache_stats s = {0};
	if (c)
		page_cache_get_stats(c, &s);
	if (rc == 0 && (s.builds != builds + 1 || s.hits != hits)) {
		fprintf(stderr, "%s: %llu builds, %llu hits: not the %u and %u wanted\n", be, s.builds, s.hits,
			builds + 1, hits);
		rc = -EPROTO;
	}
	if (rc == 0) {
		print_ms(be, "build", bt, builds);
		print_ms(be, "hit", ht, hits);
	} else {
		fprintf(stderr, "%s: %s\n", be, strerror(-rc));
	}
	free(bt);
	free(ht);
	page_cache_free(c);
	store_close(st);
	store_close(w);
	return rc;
}

int main(int argc, char **argv)
{
	log_init("http_pages", LOG_LEVEL_WARN);
	unsigned builds = argc > 1 ? (unsigned)atoi(argv[1]) : 100, hits = argc > 2 ? (unsigned)atoi(argv[2]) : 400;
	if (!builds || !hits) {
		fprintf(stderr, "usage: %s [BUILDS] [HITS]\n", argv[0]);
		return 2;
	}
	char dir[256], db[300], uri[512], why[512];
	if (tp_tmpdir(dir, sizeof(dir), "hpb") < 0)
		return 1;
	snprintf(db, sizeof(db), "%s/p.db", dir);
	printf("| back end | request | n | median ms | p90 ms |\n|---|---|---|---|---|\n");
	int rc = run("SQLite", db, builds, hits);
	tp_rm_rf(dir);
	struct pgserver pg;
	if (pg_start(&pg, why, sizeof(why)) < 0) {
		fprintf(stderr, "PostgreSQL not run: %s\n", why);
		return rc < 0;
	}
	if (pg_new_db(&pg, "hpb", uri, sizeof(uri)) == 0)
		rc |= run("PostgreSQL", uri, builds, hits);
	else
		rc = -EIO;
	pg_stop(&pg);
	return rc < 0;
}
