/* Page workers of the HTTP front end (http_worker.h). */
#include "http_worker.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cli/cli.h"
#include "log.h"

struct http_workers {
	pthread_mutex_t mu;
	pthread_cond_t cv; /* a job was queued, or stop */
	struct http_job *queue, **queue_tail;
	struct http_job *done, **done_tail;
	struct http_job *running; /* linked by run_next */
	bool stop;
	int efd;
	char *store_path;
	size_t max_bytes;
	struct page_cache *cache;
	pthread_t *threads;
	unsigned nthreads;
};

void http_job_free(struct http_job *j)
{
	if (j) {
		free(j->body);
		free(j);
	}
}

static void run_job(struct http_workers *w, struct http_job *j)
{
	struct store *st;
	j->rc = cli_open_store(w->store_path, 0, &st); /* checked when the collector opened it */
	if (j->rc < 0)
		return;
	struct page_budget b = {.deadline_ns = &j->deadline_ns, .max_bytes = w->max_bytes};
	j->rc = page_render(w->cache, st, &j->route, &b, &j->body, &j->len);
	store_close(st);
}

static void *worker_main(void *arg)
{
	struct http_workers *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->queue && !w->stop)
			pthread_cond_wait(&w->cv, &w->mu);
		if (w->stop)
			break;
		struct http_job *j = w->queue;
		w->queue = j->next;
		if (!w->queue)
			w->queue_tail = &w->queue;
		j->queued = false;
		j->running = true;
		j->next = NULL;
		j->run_next = w->running;
		w->running = j;
		pthread_mutex_unlock(&w->mu);
		run_job(w, j);
		pthread_mutex_lock(&w->mu);
		struct http_job **pp = &w->running;
		while (*pp != j)
			pp = &(*pp)->run_next;
		*pp = j->run_next;
		j->running = false;
		*w->done_tail = j;
		w->done_tail = &j->next;
		uint64_t one = 1;
		(void)!write(w->efd, &one, sizeof(one));
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int http_workers_start(const char *store_path, unsigned nthreads, size_t max_bytes, struct http_workers **out)
{
	*out = NULL;
	struct http_workers *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->queue_tail = &w->queue;
	w->done_tail = &w->done;
	w->max_bytes = max_bytes;
	w->nthreads = nthreads ? nthreads : HTTP_WORKERS;
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->store_path = strdup(store_path);
	w->threads = calloc(w->nthreads, sizeof(*w->threads));
	int rc = w->efd < 0 ? -errno : !w->store_path || !w->threads ? -ENOMEM : 0;
	if (rc == 0)
		rc = page_cache_new(0, &w->cache);
	if (rc == 0 && (rc = -pthread_mutex_init(&w->mu, NULL)) == 0 && (rc = -pthread_cond_init(&w->cv, NULL)) != 0)
		pthread_mutex_destroy(&w->mu);
	if (rc < 0) {
		log_error("cannot start the HTTP page workers: %s", strerror(-rc));
		page_cache_free(w->cache);
		if (w->efd >= 0)
			close(w->efd);
		free(w->store_path);
		free(w->threads);
		free(w);
		return rc;
	}
	/* Signals stay with the agents' loop (its signalfd): the workers block them all. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	unsigned started = 0;
	for (; started < w->nthreads; started++) {
		int err = pthread_create(&w->threads[started], NULL, worker_main, w);
		if (err != 0) {
			rc = -err;
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	w->nthreads = started;
	if (rc < 0) {
		log_error("cannot start the HTTP page workers: %s", strerror(-rc));
		http_workers_stop(w);
		return rc;
	}
	*out = w;
	return 0;
}

int http_workers_fd(const struct http_workers *w)
{
	return w->efd;
}

void http_workers_submit(struct http_workers *w, struct http_job *j)
{
	pthread_mutex_lock(&w->mu);
	j->next = NULL;
	j->queued = true;
	j->cancelled = false;
	*w->queue_tail = j;
	w->queue_tail = &j->next;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
}

void http_workers_cancel(struct http_workers *w, struct http_job *j)
{
	pthread_mutex_lock(&w->mu);
	if (j->queued) {
		struct http_job **pp = &w->queue;
		while (*pp != j)
			pp = &(*pp)->next;
		*pp = j->next;
		if (w->queue_tail == &j->next)
			w->queue_tail = pp;
		pthread_mutex_unlock(&w->mu);
		http_job_free(j);
		return;
	}
	j->cancelled = true; /* running or done: freed by http_workers_done */
	pthread_mutex_unlock(&w->mu);
}

struct http_job *http_workers_done(struct http_workers *w)
{
	uint64_t n;
	(void)!read(w->efd, &n, sizeof(n));
	for (;;) {
		pthread_mutex_lock(&w->mu);
		struct http_job *j = w->done;
		if (j) {
			w->done = j->next;
			if (!w->done)
				w->done_tail = &w->done;
			j->next = NULL;
		}
		pthread_mutex_unlock(&w->mu);
		if (!j || !j->cancelled)
			return j;
		http_job_free(j);
	}
}

void http_workers_get_stats(struct http_workers *w, struct page_cache_stats *st)
{
	page_cache_get_stats(w->cache, st);
}

static void free_list(struct http_job *j)
{
	while (j) {
		struct http_job *next = j->next;
		http_job_free(j);
		j = next;
	}
}

void http_workers_stop(struct http_workers *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	for (struct http_job *j = w->running; j; j = j->run_next)
		atomic_store(&j->deadline_ns, 1); /* renders stop at their next checkpoint */
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	if (w->cache)
		page_cache_wake(w->cache);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	free_list(w->queue);
	free_list(w->done);
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	page_cache_free(w->cache);
	close(w->efd);
	free(w->store_path);
	free(w->threads);
	free(w);
}
