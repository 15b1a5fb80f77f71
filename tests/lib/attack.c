/* Attacks on a collector on loopback (attack.h). */
#include "attack.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "frame.h"
#include "net.h"
#include "validate.h"

#define MAX_FRAME (16u << 20)

static int sock_from(const char *src, bool nonblock)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0)
		return -errno;
	if (src) {
		int one = 1;
#ifdef IP_BIND_ADDRESS_NO_PORT
		setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one)); /* the port at connect */
#endif
		struct sockaddr_in me = {.sin_family = AF_INET};
		if (inet_pton(AF_INET, src, &me.sin_addr) != 1 || bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0) {
			int err = errno ? errno : EINVAL;
			close(fd);
			return -err;
		}
	}
	return fd;
}

static struct sockaddr_in to_port(int port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sa;
}

int atk_connect(const char *src, int port)
{
	int fd = sock_from(src, false);
	if (fd < 0)
		return fd;
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	struct sockaddr_in sa = to_port(port);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int err = errno;
		close(fd);
		return -err;
	}
	return fd;
}

static int send_env(int fd, const Prof__Envelope *env)
{
	uint8_t *f;
	size_t len;
	int rc = frame_encode(env, MAX_FRAME, &f, &len);
	if (rc < 0)
		return rc;
	ssize_t n = send(fd, f, len, MSG_NOSIGNAL);
	free(f);
	return n == (ssize_t)len ? 0 : -EIO;
}

/* The next envelope within timeout_ms: 1 (and *env), 0 at EOF, -ETIMEDOUT. */
static int next_env(int fd, struct frame_decoder *d, int timeout_ms, Prof__Envelope **env)
{
	uint64_t end = clock_mono_ns() + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		const uint8_t *p;
		size_t len;
		if (frame_decoder_next(d, &p, &len) == 1) {
			char err[160];
			*env = envelope_decode(p, len, err, sizeof(err));
			return *env ? 1 : -EPROTO;
		}
		uint64_t now = clock_mono_ns();
		if (now >= end)
			return -ETIMEDOUT;
		struct pollfd pfd = {.fd = fd, .events = POLLIN};
		if (poll(&pfd, 1, (int)((end - now) / 1000000u) + 1) <= 0)
			continue;
		size_t avail;
		uint8_t *dst = frame_decoder_space(d, &avail);
		if (!dst)
			return -ENOMEM;
		ssize_t n = recv(fd, dst, avail, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return 0;
		if (n > 0)
			frame_decoder_commit(d, (size_t)n);
	}
}

double atk_hello_ack(const char *src, int port, const char *agent_id, uint64_t boot, int timeout_ms,
		     char *why, size_t whylen, int *keep_fd)
{
	if (keep_fd)
		*keep_fd = -1;
	snprintf(why, whylen, "-");
	uint64_t t0 = clock_mono_ns();
	int fd = atk_connect(src, port);
	if (fd < 0) {
		snprintf(why, whylen, "connect: %s", strerror(-fd));
		return -2;
	}
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)agent_id;
	h.boot_id = boot;
	h.board = "host";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	struct frame_decoder d;
	double ms = -2;
	if (frame_decoder_init(&d, 1 << 16) < 0) {
		close(fd);
		return -2;
	}
	if (send_env(fd, &env) < 0) {
		snprintf(why, whylen, "cannot send the Hello (closed)");
		ms = -1;
	} else {
		Prof__Envelope *r = NULL;
		int rc = next_env(fd, &d, timeout_ms, &r);
		if (rc == 1 && r->body_case == PROF__ENVELOPE__BODY_ACK) {
			ms = (double)(clock_mono_ns() - t0) / 1e6;
		} else if (rc == 1 && r->body_case == PROF__ENVELOPE__BODY_ERROR) {
			snprintf(why, whylen, "%s", r->error->message);
			ms = -1;
		} else if (rc == 1) {
			snprintf(why, whylen, "unexpected body %d", (int)r->body_case);
			ms = -1;
		} else {
			snprintf(why, whylen, "%s", rc == 0 ? "closed" : strerror(-rc));
			ms = rc == 0 ? -1 : -2;
		}
		if (r)
			prof__envelope__free_unpacked(r, NULL);
	}
	frame_decoder_free(&d);
	if (keep_fd && ms >= 0)
		*keep_fd = fd;
	else
		close(fd);
	return ms;
}

/* A Counters record of rows rows (one column, event "cycles" declared with seq 1). */
static void counters(Prof__Envelope *env, Prof__Counters *c, Prof__EventDesc **evp, uint32_t *id, uint64_t *t,
		     uint64_t *v, size_t rows, uint64_t seq)
{
	prof__counters__init(c);
	c->n_new_events = seq == 1;
	c->new_events = evp;
	c->n_event_ids = 1;
	c->event_ids = id;
	c->n_t_ns = c->n_values = rows;
	c->t_ns = t;
	c->values = v;
	prof__envelope__init(env);
	env->seq = seq;
	env->body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env->counters = c;
}

int atk_send_records(int fd, uint64_t from, uint64_t to, int timeout_ms)
{
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp = &ev;
	ev.id = 1;
	ev.name = "cycles";
	uint32_t id = 1;
	for (uint64_t seq = from; seq <= to; seq++) {
		uint64_t t = 1000 * seq, v = seq;
		Prof__Counters c;
		Prof__Envelope env;
		counters(&env, &c, &evp, &id, &t, &v, 1, seq);
		if (send_env(fd, &env) < 0)
			return -1;
	}
	struct frame_decoder d;
	if (frame_decoder_init(&d, 1 << 16) < 0)
		return -2;
	int ret = -2;
	for (;;) {
		Prof__Envelope *r = NULL;
		int rc = next_env(fd, &d, timeout_ms, &r);
		if (rc != 1) {
			ret = rc == 0 ? -1 : -2;
			break;
		}
		bool done = r->body_case == PROF__ENVELOPE__BODY_ACK && r->ack->seq >= to;
		bool err = r->body_case == PROF__ENVELOPE__BODY_ERROR;
		prof__envelope__free_unpacked(r, NULL);
		if (done || err) {
			ret = done ? 0 : -1;
			break;
		}
	}
	frame_decoder_free(&d);
	return ret;
}

size_t atk_partial_frame(int fd, uint64_t seq, size_t frame_bytes, size_t keep)
{
	size_t rows = (frame_bytes - 64) / 2; /* two one-byte varints a row, the frame within frame_bytes */
	uint64_t *t = malloc(rows * sizeof(*t)), *v = malloc(rows * sizeof(*v));
	if (!t || !v) {
		free(t);
		free(v);
		return 0;
	}
	for (size_t i = 0; i < rows; i++)
		t[i] = v[i] = 1;
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp = &ev;
	ev.id = 1;
	ev.name = "cycles";
	uint32_t id = 1;
	Prof__Counters c;
	Prof__Envelope env;
	counters(&env, &c, &evp, &id, t, v, rows, seq);
	uint8_t *f;
	size_t len, sent = 0;
	if (frame_encode(&env, MAX_FRAME, &f, &len) == 0) {
		size_t want = len > keep ? len - keep : 0;
		while (sent < want) {
			ssize_t n = send(fd, f + sent, want - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
			if (n <= 0)
				break;
			sent += (size_t)n;
		}
		free(f);
	}
	free(t);
	free(v);
	return sent;
}

int atk_http_get(int port, const char *path, int timeout_ms, char *buf, size_t len)
{
	int fd = atk_connect(NULL, port);
	if (fd < 0)
		return 0;
	struct timeval tv = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	char req[256], head[64] = "";
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", path);
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		close(fd);
		return 0;
	}
	size_t got = 0, hgot = 0;
	char tmp[65536];
	for (;;) {
		ssize_t r = recv(fd, tmp, sizeof(tmp), 0);
		if (r <= 0)
			break;
		size_t k = (size_t)r;
		if (hgot + 1 < sizeof(head)) {
			size_t m = k < sizeof(head) - 1 - hgot ? k : sizeof(head) - 1 - hgot;
			memcpy(head + hgot, tmp, m);
			hgot += m;
			head[hgot] = '\0';
		}
		if (buf && got + 1 < len) {
			size_t m = k < len - 1 - got ? k : len - 1 - got;
			memcpy(buf + got, tmp, m);
			got += m;
		}
	}
	if (buf && len)
		buf[got] = '\0';
	close(fd);
	int code = 0;
	if (sscanf(head, "HTTP/1.1 %d", &code) != 1)
		code = 0;
	return code;
}

static void *http_client(void *arg)
{
	struct atk_http_load *l = arg;
	while (!l->stop) {
		uint64_t t0 = clock_mono_ns();
		int code = atk_http_get(l->port, l->path, 60000, NULL, 0);
		double ms = (double)(clock_mono_ns() - t0) / 1e6;
		pthread_mutex_lock(&l->mu);
		l->requests++;
		if (code == 200) {
			l->ok++;
			if (l->nms == l->capms) {
				size_t cap = l->capms ? l->capms * 2 : 256;
				double *nm = realloc(l->ms, cap * sizeof(*nm));
				if (nm) {
					l->ms = nm;
					l->capms = cap;
				}
			}
			if (l->nms < l->capms)
				l->ms[l->nms++] = ms;
		}
		pthread_mutex_unlock(&l->mu);
	}
	return NULL;
}

int atk_http_load_start(struct atk_http_load *l, int port, const char *path, unsigned nclients)
{
	memset(l, 0, sizeof(*l));
	if (nclients > sizeof(l->t) / sizeof(l->t[0]))
		return -EINVAL;
	l->port = port;
	snprintf(l->path, sizeof(l->path), "%s", path);
	pthread_mutex_init(&l->mu, NULL);
	for (; l->n < nclients; l->n++)
		if (pthread_create(&l->t[l->n], NULL, http_client, l) != 0)
			return -EAGAIN;
	return 0;
}

void atk_http_load_stop(struct atk_http_load *l)
{
	l->stop = true;
	for (unsigned i = 0; i < l->n; i++)
		pthread_join(l->t[i], NULL);
	l->n = 0;
}

void atk_http_load_free(struct atk_http_load *l)
{
	free(l->ms);
	l->ms = NULL;
	pthread_mutex_destroy(&l->mu);
}

struct flood_arg {
	struct atk_flood *f;
	unsigned k;
};

static void *flood_thread(void *arg)
{
	struct flood_arg *a = arg;
	struct atk_flood *f = a->f;
	unsigned k = a->k;
	free(a);
	struct pollfd *p = calloc(f->max_open, sizeof(*p));
	uint64_t *born = calloc(f->max_open, sizeof(*born));
	unsigned n = 0;
	struct sockaddr_in sa = to_port(f->port);
	struct linger lg = {.l_onoff = 1, .l_linger = 0}; /* close with a reset: no TIME_WAIT */
	unsigned long long opened = 0, tries = 0;
	while (p && born && !f->stop) {
		tries++;
		if (n < f->max_open) {
			int fd = sock_from(f->src[k], true);
			if (fd >= 0) {
				setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 || errno == EINPROGRESS) {
					p[n] = (struct pollfd){.fd = fd, .events = POLLIN};
					born[n++] = clock_mono_ns();
					opened++;
				} else {
					close(fd);
				}
			}
		}
		if (tries % 32 != 0 && n < f->max_open)
			continue;
		/* the collector's closes (an Error, EOF or a reset), and our own after hold_ms */
		poll(p, n, n < f->max_open ? 0 : 1);
		uint64_t now = clock_mono_ns();
		for (unsigned i = 0; i < n;) {
			if (p[i].revents || now - born[i] >= (uint64_t)f->hold_ms * 1000000u) {
				close(p[i].fd);
				p[i] = p[--n];
				born[i] = born[n];
				continue;
			}
			i++;
		}
	}
	for (unsigned i = 0; i < n; i++)
		close(p[i].fd);
	free(p);
	free(born);
	f->opened[k] = opened;
	return NULL;
}

int atk_flood_start(struct atk_flood *f, int port, const char *const *src, unsigned nsrc, int hold_ms,
		    unsigned max_open)
{
	memset(f, 0, sizeof(*f));
	if (nsrc > sizeof(f->t) / sizeof(f->t[0]))
		return -EINVAL;
	f->port = port;
	f->hold_ms = hold_ms;
	f->max_open = max_open;
	for (unsigned i = 0; i < nsrc; i++)
		f->src[i] = src[i];
	for (; f->n < nsrc; f->n++) {
		struct flood_arg *a = malloc(sizeof(*a));
		if (!a)
			return -ENOMEM;
		*a = (struct flood_arg){.f = f, .k = f->n};
		if (pthread_create(&f->t[f->n], NULL, flood_thread, a) != 0) {
			free(a);
			return -EAGAIN;
		}
	}
	return 0;
}

unsigned long long atk_flood_stop(struct atk_flood *f)
{
	f->stop = true;
	unsigned long long total = 0;
	for (unsigned i = 0; i < f->n; i++) {
		pthread_join(f->t[i], NULL);
		total += f->opened[i];
	}
	f->n = 0;
	return total;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double atk_quantile(double *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	size_t i = (size_t)(p * (double)(n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}
