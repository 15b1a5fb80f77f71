/* Two-stage pipeline for trace files: the calling thread reads and parses
 * (and reports bad lines, in order), a second thread runs the eDAG engine
 * on blocks of parsed instructions. A fixed ring of blocks between them:
 * memory does not grow with the trace. Without a second thread (it could
 * not be started) the same calls run the engine inline. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cli_edag.h"
#include "log.h"

#define RING 8		 /* blocks in flight */
#define BLOCK_INSNS 4096 /* instructions per block */

enum { EV_NONE, EV_WINDOW, EV_END };

struct block {
	struct edag_insn ins[BLOCK_INSNS];
	size_t n;
	uint64_t unknown; /* of these instructions, how many have a guessed class */
	int event;	  /* after the instructions */
	struct edag_window_info info;
};

struct edag_pipe {
	struct run *r;
	struct block *ring;
	size_t head, tail; /* blocks published / consumed */
	struct block *cur; /* being filled (ring[head % RING]) */
	bool threaded, stop;
	int rc; /* the engine side's result */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* Engine side: one block. */
static int consume(struct run *r, struct block *b)
{
	int rc = cli_edag_window_steps(r, b->ins, b->n);
	r->unknown += b->unknown;
	if (rc == 0 && b->event == EV_WINDOW) {
		rc = cli_edag_window_end(r);
		if (rc == 0)
			rc = cli_edag_window_begin(r, &b->info);
	} else if (rc == 0 && b->event == EV_END) {
		rc = cli_edag_window_end(r);
	}
	return rc;
}

static void *engine_main(void *arg)
{
	struct edag_pipe *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (p->tail == p->head)
			pthread_cond_wait(&p->cv, &p->mu);
		struct block *b = &p->ring[p->tail % RING];
		pthread_mutex_unlock(&p->mu);
		int rc = consume(p->r, b);
		int ev = b->event;
		pthread_mutex_lock(&p->mu);
		p->tail++;
		if (rc < 0) {
			p->rc = rc;
			p->stop = true;
		}
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (rc < 0 || ev == EV_END)
			return NULL;
	}
}

int cli_edag_pipe_start(struct run *r, const struct edag_window_info *first, struct edag_pipe **out)
{
	struct edag_pipe *p = calloc(1, sizeof(*p));
	struct block *ring = p ? malloc(RING * sizeof(*ring)) : NULL;
	if (!ring) {
		free(p);
		log_error("edag: out of memory");
		return -EIO;
	}
	p->r = r;
	p->ring = ring;
	p->cur = &ring[0];
	p->cur->n = 0;
	p->cur->unknown = 0;
	p->cur->event = EV_NONE;
	int rc = cli_edag_window_begin(r, first);
	if (rc < 0) {
		free(ring);
		free(p);
		return rc;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	p->threaded = r->o->threads != 1 && pthread_create(&p->th, NULL, engine_main, p) == 0;
	*out = p;
	return 0;
}

/* Hand the current block on and take the next one. */
static int publish(struct edag_pipe *p)
{
	if (!p->threaded) {
		int rc = consume(p->r, p->cur);
		p->cur->n = 0;
		p->cur->unknown = 0;
		p->cur->event = EV_NONE;
		return rc;
	}
	pthread_mutex_lock(&p->mu);
	p->head++;
	pthread_cond_broadcast(&p->cv);
	while (p->head - p->tail >= RING && !p->stop)
		pthread_cond_wait(&p->cv, &p->mu);
	int rc = p->stop ? (p->rc ? p->rc : -EIO) : 0;
	pthread_mutex_unlock(&p->mu);
	p->cur = &p->ring[p->head % RING];
	p->cur->n = 0;
	p->cur->unknown = 0;
	p->cur->event = EV_NONE;
	return rc;
}

struct edag_insn *cli_edag_pipe_slot(struct edag_pipe *p)
{
	return &p->cur->ins[p->cur->n];
}

int cli_edag_pipe_commit(struct edag_pipe *p, bool unknown)
{
	p->cur->unknown += unknown;
	return ++p->cur->n == BLOCK_INSNS ? publish(p) : 0;
}

int cli_edag_pipe_window(struct edag_pipe *p, const struct edag_window_info *info)
{
	p->cur->event = EV_WINDOW;
	p->cur->info = *info;
	return publish(p);
}

int cli_edag_pipe_finish(struct edag_pipe *p, bool ok)
{
	int rc = 0;
	if (p->threaded) {
		pthread_mutex_lock(&p->mu);
		bool stopped = p->stop;
		pthread_mutex_unlock(&p->mu);
		if (!stopped) {
			/* the end (also after a failure here: the engine thread stops at it) */
			p->cur->event = EV_END;
			if (!ok)
				p->cur->n = 0;
			pthread_mutex_lock(&p->mu);
			p->head++;
			pthread_cond_broadcast(&p->cv);
			pthread_mutex_unlock(&p->mu);
		}
		pthread_join(p->th, NULL);
		rc = p->rc;
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
	} else if (ok) {
		p->cur->event = EV_END;
		rc = consume(p->r, p->cur);
	}
	free(p->ring);
	free(p);
	return rc;
}
