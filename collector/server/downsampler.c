/* The listening collector's background downsampling (downsampler.h). */
#include "downsampler.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "query/query.h"
#include "store/store.h"

struct downsampler {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* stop asked */
	bool stop;
	char *path;
	struct downsampler_tier tiers[DOWNSAMPLER_MAX_TIERS];
	size_t ntiers;
	uint64_t every_ms;
};

static int64_t wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Wait ms or until stop is asked: true to go on. */
static bool wait_ms(struct downsampler *d, uint64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ns = (uint64_t)ts.tv_nsec + (ms % 1000) * 1000000u;
	ts.tv_sec += (time_t)(ms / 1000 + ns / 1000000000u);
	ts.tv_nsec = (long)(ns % 1000000000u);
	pthread_mutex_lock(&d->mu);
	while (!d->stop && pthread_cond_timedwait(&d->cv, &d->mu, &ts) != ETIMEDOUT)
		;
	bool go = !d->stop;
	pthread_mutex_unlock(&d->mu);
	return go;
}

/* One pass: each tier in turn (a tier with windows left ends the pass); the pause before the next. */
static uint64_t pass(struct downsampler *d, struct store **st)
{
	const char *what = d->tiers[0].option;
	if (!*st && store_open(d->path, STORE_SECOND, st) < 0) {
		log_warn("%s: cannot open the store %s; next try in %llu s", what, d->path,
			 (unsigned long long)(d->every_ms / 1000));
		*st = NULL;
		return d->every_ms;
	}
	for (size_t i = 0; i < d->ntiers; i++) {
		const struct downsampler_tier *t = &d->tiers[i];
		struct query_downsample_stats ds;
		int rc = query_downsample_some(*st, wall_ns() - t->after_ns, t->per_ns,
					       DOWNSAMPLER_WINDOWS_PER_PASS, &ds);
		if (rc < 0) {
			log_warn("%s: merging the store's sample blocks failed (%s); next try in %llu s",
				 t->option, strerror(-rc), (unsigned long long)(d->every_ms / 1000));
			store_close(*st); /* a lost PostgreSQL connection: a new one next time */
			*st = NULL;
			return d->every_ms;
		}
		if (ds.windows)
			log_info("%s: %llu sample blocks merged into %llu (one per window)%s", t->option,
				 (unsigned long long)ds.blocks_in, (unsigned long long)ds.blocks_out,
				 ds.more ? "; more in the next pass" : "");
		if (ds.more)
			return DOWNSAMPLER_BUSY_PAUSE_MS;
	}
	return d->every_ms;
}

static void *run(void *arg)
{
	struct downsampler *d = arg;
	struct store *st = NULL;
	uint64_t pause = 0;
	while (wait_ms(d, pause))
		pause = pass(d, &st);
	store_close(st);
	return NULL;
}

int downsampler_start(const char *path, const struct downsampler_tier *tiers, size_t ntiers,
		      struct downsampler **out)
{
	*out = NULL;
	if (ntiers == 0 || ntiers > DOWNSAMPLER_MAX_TIERS)
		return -EINVAL;
	for (size_t i = 0; i < ntiers; i++)
		if (tiers[i].after_ns <= 0 || tiers[i].per_ns <= 0 || !tiers[i].option)
			return -EINVAL;
	struct downsampler *d = calloc(1, sizeof(*d));
	if (!d || !(d->path = strdup(path))) {
		free(d);
		return -ENOMEM;
	}
	memcpy(d->tiers, tiers, ntiers * sizeof(*tiers));
	d->ntiers = ntiers;
	/* once a minute; a shorter D, a tenth of it (at least a second) */
	d->every_ms = DOWNSAMPLER_EVERY_MS;
	for (size_t i = 0; i < ntiers; i++)
		if ((uint64_t)tiers[i].after_ns / 10000000u < d->every_ms)
			d->every_ms = (uint64_t)tiers[i].after_ns / 10000000u;
	if (d->every_ms < 1000)
		d->every_ms = 1000;
	pthread_condattr_t ca;
	int rc = pthread_condattr_init(&ca);
	if (rc == 0) {
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		rc = pthread_cond_init(&d->cv, &ca);
		pthread_condattr_destroy(&ca);
	}
	if (rc == 0 && (rc = pthread_mutex_init(&d->mu, NULL)) != 0)
		pthread_cond_destroy(&d->cv);
	if (rc == 0 && (rc = pthread_create(&d->th, NULL, run, d)) != 0) {
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->cv);
	}
	if (rc != 0) {
		log_error("%s: cannot start its thread: %s", tiers[0].option, strerror(rc));
		free(d->path);
		free(d);
		return -rc;
	}
	*out = d;
	return 0;
}

void downsampler_stop(struct downsampler *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->mu);
	d->stop = true;
	pthread_cond_signal(&d->cv);
	pthread_mutex_unlock(&d->mu);
	pthread_join(d->th, NULL);
	pthread_mutex_destroy(&d->mu);
	pthread_cond_destroy(&d->cv);
	free(d->path);
	free(d);
}
