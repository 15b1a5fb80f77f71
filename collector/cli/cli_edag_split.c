/* A second EDAN parser thread: while the reading thread parses the first
 * half of a block, this one parses the second half into records that the
 * reading thread then hands on in order (cli_edag_file.c), so that line
 * numbers, reports and limits are exactly those of one parser. EDAN lines
 * are parsed independently of each other (native lines are not: `arch`
 * changes how the following ones read), so only EDAN is split. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli_edag.h"

#define SPLIT_RECS 16384 /* lines per half at most (the rest is parsed by the caller) */
#define SPLIT_ERRS 12	 /* reasons kept per half: more than are ever shown (cli_edag_bad) */

enum { S_IDLE, S_WORK, S_DONE, S_QUIT };

struct edan_split {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int state;
	const char *buf;
	size_t from, to, end;
	struct edag_edan_cache *cache;
	struct edan_rec *rec;
	size_t nrec;
	char err[SPLIT_ERRS][300];
	size_t nerr;
};

static void parse_half(struct edan_split *s)
{
	size_t off = s->from;
	s->nrec = s->nerr = 0;
	char err[300];
	while (off < s->to && s->nrec < SPLIT_RECS) {
		struct edan_rec *r = &s->rec[s->nrec];
		size_t used;
		int k = edag_edan_parse_next(s->buf + off, s->to - off, &used, &r->in, &r->info, s->cache, err, sizeof(err));
		if (k == -EAGAIN)
			break; /* not reached: the half ends after a '\n' */
		off += used;
		r->k = k;
		r->err = -1;
		if (k < 0 && s->nerr < SPLIT_ERRS) {
			memcpy(s->err[s->nerr], err, sizeof(err));
			r->err = (int)s->nerr++;
		}
		s->nrec++;
	}
	s->end = off;
}

static void *split_main(void *arg)
{
	struct edan_split *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (s->state == S_IDLE || s->state == S_DONE)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->state == S_QUIT)
			break;
		pthread_mutex_unlock(&s->mu);
		parse_half(s);
		pthread_mutex_lock(&s->mu);
		s->state = S_DONE;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

struct edan_split *cli_edag_split_start(void)
{
	struct edan_split *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->rec = malloc(SPLIT_RECS * sizeof(*s->rec));
	s->cache = edag_edan_cache_new();
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (!s->rec || !s->cache || pthread_create(&s->th, NULL, split_main, s) != 0) {
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
		edag_edan_cache_free(s->cache);
		free(s->rec);
		free(s);
		return NULL; /* the caller parses alone */
	}
	return s;
}

void cli_edag_split_begin(struct edan_split *s, const char *buf, size_t from, size_t to)
{
	pthread_mutex_lock(&s->mu);
	s->buf = buf;
	s->from = from;
	s->to = to;
	s->state = S_WORK;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

size_t cli_edag_split_wait(struct edan_split *s, const struct edan_rec **rec, size_t *n)
{
	pthread_mutex_lock(&s->mu);
	while (s->state != S_DONE)
		pthread_cond_wait(&s->cv, &s->mu);
	s->state = S_IDLE;
	pthread_mutex_unlock(&s->mu);
	*rec = s->rec;
	*n = s->nrec;
	return s->end;
}

const char *cli_edag_split_err(const struct edan_split *s, const struct edan_rec *r)
{
	return r->err >= 0 ? s->err[r->err] : "a bad line (reason not kept)";
}

void cli_edag_split_stop(struct edan_split *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	while (s->state == S_WORK)
		pthread_cond_wait(&s->cv, &s->mu);
	s->state = S_QUIT;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->th, NULL);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	edag_edan_cache_free(s->cache);
	free(s->rec);
	free(s);
}
