/* The pages of the HTTP front end, rendered from the store by its workers
 * (http_worker.h), never on the agents' loop. A session's analyses (the
 * overview: overview_load, the expensive part) are cached per session and
 * variant (JSON sections or text sections); an entry is used while its stamp
 * still holds: the session's record count and the calibration session that
 * gives its ceilings, with that one's record count. So a session that gets new
 * records (or whose profile gets a new calibration) is analysed again on its
 * next request; one that does not is analysed once. Several workers share one
 * cache (thread-safe); one that wants an analysis another is building waits
 * for it and uses it instead of building it twice, even when the session got
 * records meanwhile (the page is then at most one analysis old), so one
 * analysis per session and variant runs at a time however fast records come,
 * and at most HTTP_ANALYSES in all.
 * Snapshots (#40 w47b): a session page reads its stamp in a read snapshot of
 * its own, ended before it may wait on the cache (the analysis's label), and
 * a build reads the analysis in one more; no read is open while a request waits.
 * The other pages (sessions, /profile) read in one snapshot for the request.
 * Budgets: every render stops past its deadline (-ETIMEDOUT) and a page over
 * max_bytes is not kept (-EFBIG); memory is bounded by the cache's entry count
 * and max_bytes per render. */
#ifndef COLLECTOR_HTTP_PAGES_H
#define COLLECTOR_HTTP_PAGES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "http_route.h"
#include "store/store.h"

#define HTTP_CACHE_ENTRIES 16u
#define HTTP_ANALYSES 2u /* analyses built at once; other requests that need one wait */

struct page_cache;

struct page_budget {
	/* clock_mono_ns(); NULL or 0: none. Another thread may move it (http_workers_stop): the
	 * render and a wait for another worker's analysis look at it again. */
	const _Atomic uint64_t *deadline_ns;
	size_t max_bytes; /* largest page body */
};

struct page_cache_stats {
	unsigned long long hits;   /* session pages rendered from an analysis already built or being built */
	unsigned long long builds; /* analyses run (cache misses, stale entries) */
	unsigned long long waits;  /* of the hits, requests that waited for another worker's analysis */
};

/* A cache of at most max_entries analyses (0: HTTP_CACHE_ENTRIES). */
int page_cache_new(unsigned max_entries, struct page_cache **out);
void page_cache_free(struct page_cache *c);
void page_cache_get_stats(struct page_cache *c, struct page_cache_stats *st);
/* Tests: fn(arg, sid) is called by the worker that builds an analysis once it is read, still inside the
 * build's read snapshot and before it is published (a slow build; a writer meanwhile); NULL: none. */
void page_cache_set_build_hook(struct page_cache *c, void (*fn)(void *arg, long long sid), void *arg);
/* Wake the renders that wait for another worker's analysis, to look at their deadlines again. */
void page_cache_wake(struct page_cache *c);

/* Render page r from st (the calling worker's own store connection, with no read open on it: one
 * open would be held through a wait on the cache) into a new
 * buffer *body of *len bytes (and a NUL). Returns 0, -ENOENT (no such session), -ENODATA (no
 * roof calibrated for that chart), -ETIMEDOUT (past b->deadline_ns), -EFBIG
 * (over b->max_bytes), or another negative errno. */
int page_render(struct page_cache *c, struct store *st, const struct http_route *r, const struct page_budget *b,
		char **body, size_t *len);

/* /profile: the CPU samples of every agent over the window before now_ns (0:
 * the clock), as a CPU-over-time chart and a flame graph with callers and
 * callees (views/profile_page.h); the page reloads itself every 15 s unless the
 * reader is zoomed in or searching (http_profile.c). */
#define HTTP_PROFILE_WINDOW_S 600
int page_profile(struct store *st, FILE *f, int64_t now_ns, const char *query);
/* The same within a render budget: its sens=1 section stops past *deadline_ns (-ETIMEDOUT; NULL: none). */
int page_profile_budget(struct store *st, FILE *f, int64_t now_ns, const char *query,
			const _Atomic uint64_t *deadline_ns);
/* The script that reloads a live page every s seconds unless its flame graph is zoomed or searched. */
void page_reload_script(FILE *f, unsigned s);

#endif
