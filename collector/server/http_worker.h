/* The HTTP front end's page workers: threads that render pages (http_pages.h)
 * from the store, each on its own read-only store connection (opened per job:
 * SQLite's WAL lets it read while the agents' loop writes; PostgreSQL gets a
 * connection of its own), so the agents' loop never waits for a page. The
 * front end submits jobs and takes the finished ones when the eventfd
 * (http_workers_fd) is readable; every job has a deadline (its time budget)
 * and a size budget. */
#ifndef COLLECTOR_HTTP_WORKER_H
#define COLLECTOR_HTTP_WORKER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_pages.h"
#include "http_route.h"

/* Threads: a request waiting for an analysis (http_pages.h) holds one, so there are
 * more of them than analyses at once (HTTP_ANALYSES): cached pages and the session
 * list are served while analyses run. */
#define HTTP_WORKERS 8u

struct http_job {
	struct http_route route;
	_Atomic uint64_t deadline_ns; /* the render stops past it (-ETIMEDOUT); http_workers_stop advances it */
	void *owner;	      /* the front end's connection; not touched by the workers */
	/* results, set by the worker */
	int rc;
	char *body;
	size_t len;
	/* the queue's (http_worker.c) */
	struct http_job *next, *run_next;
	bool queued, running, cancelled;
};

struct http_workers;

/* Start nthreads (0: HTTP_WORKERS) workers rendering from store_path, pages of at most max_bytes. */
int http_workers_start(const char *store_path, unsigned nthreads, size_t max_bytes, struct http_workers **out);
/* Readable (EPOLLIN) when finished jobs wait in http_workers_done(). */
int http_workers_fd(const struct http_workers *w);
/* Queue a job (owned by the workers until it comes back from http_workers_done). */
void http_workers_submit(struct http_workers *w, struct http_job *j);
/* Its connection is gone: a queued job is freed now, a running one when it is done. */
void http_workers_cancel(struct http_workers *w, struct http_job *j);
/* The next finished job that is not cancelled (the caller frees it with http_job_free), NULL if none. */
struct http_job *http_workers_done(struct http_workers *w);
void http_job_free(struct http_job *j);
void http_workers_get_stats(struct http_workers *w, struct page_cache_stats *st);
/* Stop and join the workers, free unfinished jobs. NULL is fine. */
void http_workers_stop(struct http_workers *w);

#endif
