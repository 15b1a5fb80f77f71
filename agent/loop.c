#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "net.h"

struct loop {
	struct loop_source src[LOOP_MAX_SOURCES];
	int nsrc;
	bool stop;
	int code;
};

int loop_create(struct loop **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void loop_destroy(struct loop *l)
{
	free(l);
}

int loop_add(struct loop *l, const struct loop_source *src)
{
	if (l->nsrc == LOOP_MAX_SOURCES)
		return -ENOSPC;
	l->src[l->nsrc++] = *src;
	return 0;
}

void loop_remove(struct loop *l, void *ctx)
{
	for (int i = 0; i < l->nsrc; i++) {
		if (l->src[i].ctx == ctx) {
			memmove(&l->src[i], &l->src[i + 1], (size_t)(l->nsrc - i - 1) * sizeof(l->src[0]));
			l->nsrc--;
			i--;
		}
	}
}

void loop_stop(struct loop *l, int code)
{
	if (!l->stop)
		l->code = code;
	l->stop = true;
}

bool loop_stopping(const struct loop *l)
{
	return l->stop;
}

int loop_step(struct loop *l, int max_wait_ms)
{
	struct pollfd pfd[LOOP_MAX_FDS];
	int first[LOOP_MAX_SOURCES], count[LOOP_MAX_SOURCES];
	int n = 0, tmo = max_wait_ms;
	uint64_t now = clock_mono_ns();
	int nsrc = l->nsrc;
	for (int i = 0; i < nsrc; i++) {
		first[i] = n;
		int t = -1;
		int used = l->src[i].prepare ? l->src[i].prepare(l->src[i].ctx, &pfd[n], LOOP_MAX_FDS - n, now, &t) : 0;
		if (used < 0)
			used = 0;
		for (int k = 0; k < used; k++)
			pfd[n + k].revents = 0;
		count[i] = used;
		n += used;
		if (t >= 0 && (tmo < 0 || t < tmo))
			tmo = t;
	}
	int r = poll(pfd, (nfds_t)n, tmo);
	if (r < 0) {
		if (errno != EINTR) {
			log_error("poll: %s", strerror(errno));
			return -errno;
		}
		for (int k = 0; k < n; k++)
			pfd[k].revents = 0;
	}
	now = clock_mono_ns();
	for (int i = 0; i < nsrc && i < l->nsrc; i++) {
		if (!l->src[i].dispatch)
			continue;
		int rc = l->src[i].dispatch(l->src[i].ctx, &pfd[first[i]], count[i], now);
		if (rc < 0) {
			loop_stop(l, rc);
			return rc;
		}
	}
	return 0;
}

int loop_run(struct loop *l)
{
	while (!l->stop) {
		int rc = loop_step(l, -1);
		if (rc < 0)
			return rc;
	}
	return l->code;
}

void loop_timer_start(struct loop_timer *t, uint64_t period_ns, uint64_t now_ns)
{
	t->period_ns = period_ns;
	t->next_ns = now_ns + period_ns;
}

void loop_timer_timeout(const struct loop_timer *t, uint64_t now_ns, int *timeout_ms)
{
	if (!t->next_ns)
		return;
	int ms = t->next_ns <= now_ns ? 0 : (int)((t->next_ns - now_ns + 999999) / 1000000);
	if (*timeout_ms < 0 || ms < *timeout_ms)
		*timeout_ms = ms;
}

bool loop_timer_expired(struct loop_timer *t, uint64_t now_ns)
{
	if (!t->next_ns || now_ns < t->next_ns)
		return false;
	t->next_ns += t->period_ns;
	if (t->next_ns <= now_ns) /* fell behind (stopped process, slow system): skip, don't burst */
		t->next_ns = now_ns + t->period_ns;
	return true;
}
