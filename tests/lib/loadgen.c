#include "loadgen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "net.h"

#define LG_MAX_FRAME (64u * 1024u)
#define LG_OUT_CAP (64u * 1024u)
#define LG_TICK_MS 5
#define LG_RECONNECT_NS 200000000ull
#define LG_HIST_US 100u			/* histogram bucket width */
#define LG_HIST_N (600u * 1000u * 10u) /* 600 s of 100 us buckets */

enum lg_state { LG_IDLE, LG_CONNECTING, LG_CHALLENGE, LG_HELLO, LG_STREAMING };

struct lg_agent {
	int fd;
	enum lg_state state;
	char id[64];
	uint64_t boot_id;
	uint64_t generated; /* seqs 1..generated exist */
	uint64_t sent_upto; /* highest seq written on this connection */
	uint64_t acked;
	uint64_t next_connect_ns;
	uint64_t start_offset_ns; /* staggers the agents' schedules */
	uint64_t *sent_ns;	  /* first send time per seq (index seq-1) */
	size_t sent_cap;
	bool want_out, ever_connected;
	uint8_t *out;
	size_t out_len, out_off;
	struct frame_decoder dec;
};

struct lg {
	const struct loadgen_opts *o;
	struct loadgen_result *r;
	int epfd;
	struct sockaddr_in sa;
	struct lg_agent *a;
	uint32_t *hist;
	uint64_t nlat;
	bool generating;
};

long loadgen_raise_nofile(long n)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	if ((long)rl.rlim_cur < n) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || (long)rl.rlim_max >= n ? (rlim_t)n : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	return (long)rl.rlim_cur;
}

/* The record seq of agent a: one counters row, one event (declared in seq 1). */
static int pack_record(const struct lg_agent *a, uint64_t seq, uint8_t *buf, size_t cap)
{
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	Prof__Counters c = PROF__COUNTERS__INIT;
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT;
	Prof__EventDesc *evp[1] = {&ev};
	uint32_t ids[1] = {1};
	uint64_t t[1] = {10000000}, v[1] = {seq * 7 + (a->boot_id & 0xff)};
	ev.id = 1;
	ev.name = "task-clock";
	ev.unit = "ns";
	if (seq == 1) {
		c.n_new_events = 1;
		c.new_events = evp;
	}
	c.n_event_ids = 1;
	c.event_ids = ids;
	c.n_t_ns = 1;
	c.t_ns = t;
	c.n_values = 1;
	c.values = v;
	c.pid = -1;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	size_t body = prof__envelope__get_packed_size(&env);
	uint8_t hdr[FRAME_VARINT_MAX];
	size_t h = frame_put_varint(hdr, (uint32_t)body);
	if (h + body > cap)
		return -ENOBUFS;
	memcpy(buf, hdr, h);
	prof__envelope__pack(&env, buf + h);
	return (int)(h + body);
}

static int pack_hello(const struct lg *g, const struct lg_agent *a, const Prof__Challenge *ch, uint8_t *buf,
		      size_t cap)
{
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	Prof__Hello h = PROF__HELLO__INIT;
	uint8_t mac[AUTH_MAC_LEN];
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)a->id;
	h.boot_id = a->boot_id;
	h.board = "loadgen";
	h.hostname = "loadgen";
	h.target = "simulated";
	h.clock_id = 1;
	h.base_ns = 1;
	if (ch && g->o->token) {
		if (auth_mac(g->o->token, ch->nonce.data, ch->nonce.len, a->id, a->boot_id, mac) < 0)
			return -EIO;
		h.auth.data = mac;
		h.auth.len = sizeof(mac);
	}
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	size_t body = prof__envelope__get_packed_size(&env);
	uint8_t hdr[FRAME_VARINT_MAX];
	size_t hl = frame_put_varint(hdr, (uint32_t)body);
	if (hl + body > cap)
		return -ENOBUFS;
	memcpy(buf, hdr, hl);
	prof__envelope__pack(&env, buf + hl);
	return (int)(hl + body);
}

static void set_events(struct lg *g, struct lg_agent *a, bool out)
{
	struct epoll_event ev = {.events = EPOLLIN | (out ? EPOLLOUT : 0), .data.ptr = a};
	epoll_ctl(g->epfd, EPOLL_CTL_MOD, a->fd, &ev);
	a->want_out = out;
}

static void agent_drop(struct lg *g, struct lg_agent *a, uint64_t now, bool error)
{
	if (a->fd >= 0) {
		epoll_ctl(g->epfd, EPOLL_CTL_DEL, a->fd, NULL);
		close(a->fd);
	}
	a->fd = -1;
	a->state = LG_IDLE;
	a->out_len = a->out_off = 0;
	a->next_connect_ns = now + LG_RECONNECT_NS;
	frame_decoder_free(&a->dec);
	g->r->disconnects++;
	if (error)
		g->r->errors++;
}

static void agent_connect(struct lg *g, struct lg_agent *a, uint64_t now)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		a->next_connect_ns = now + LG_RECONNECT_NS;
		g->r->errors++;
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	a->fd = fd;
	frame_decoder_init(&a->dec, LG_MAX_FRAME);
	a->state = LG_CONNECTING;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = a};
	epoll_ctl(g->epfd, EPOLL_CTL_ADD, fd, &ev);
	a->want_out = true;
	struct sockaddr_in sa = g->sa;
	if (g->o->nports)
		sa.sin_port = htons((uint16_t)g->o->ports[(size_t)(a - g->a) % g->o->nports]);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
		agent_drop(g, a, now, true);
}

static void out_append_hello(struct lg *g, struct lg_agent *a, const Prof__Challenge *ch, uint64_t now)
{
	int n = pack_hello(g, a, ch, a->out, LG_OUT_CAP);
	if (n < 0) {
		agent_drop(g, a, now, true);
		return;
	}
	a->out_off = 0;
	a->out_len = (size_t)n;
	a->state = LG_HELLO;
}

/* Queue the records the connection still owes (replays and new ones), up to the buffer. */
static void fill(struct lg *g, struct lg_agent *a)
{
	if (a->state != LG_STREAMING)
		return;
	if (a->out_off == a->out_len)
		a->out_off = a->out_len = 0;
	uint64_t now = clock_mono_ns();
	while (a->sent_upto < a->generated && LG_OUT_CAP - a->out_len >= 256) {
		uint64_t seq = a->sent_upto + 1;
		int n = pack_record(a, seq, a->out + a->out_len, LG_OUT_CAP - a->out_len);
		if (n < 0)
			break;
		a->out_len += (size_t)n;
		a->sent_upto = seq;
		if (a->sent_ns[seq - 1] == 0)
			a->sent_ns[seq - 1] = now;
		g->r->frames_out++;
	}
}

static void flush(struct lg *g, struct lg_agent *a, uint64_t now)
{
	while (a->out_off < a->out_len) {
		ssize_t w = send(a->fd, a->out + a->out_off, a->out_len - a->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			a->out_off += (size_t)w;
			if (a->out_off == a->out_len)
				fill(g, a);
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!a->want_out)
				set_events(g, a, true);
			return;
		}
		agent_drop(g, a, now, true);
		return;
	}
	if (a->want_out)
		set_events(g, a, false);
}

static void on_ack(struct lg *g, struct lg_agent *a, uint64_t seq, uint64_t now)
{
	if (seq > a->generated)
		seq = a->generated; /* cannot happen with a correct collector */
	for (uint64_t s = a->acked + 1; s <= seq; s++) {
		uint64_t t = a->sent_ns[s - 1];
		if (!t)
			continue;
		uint64_t us = now > t ? (now - t) / 1000u : 0;
		uint64_t b = us / LG_HIST_US;
		g->hist[b < LG_HIST_N ? b : LG_HIST_N - 1]++;
		g->nlat++;
	}
	if (seq > a->acked)
		a->acked = seq;
	if (a->state == LG_HELLO) {
		a->state = LG_STREAMING;
		a->sent_upto = a->acked; /* replay from what the collector has */
		g->r->connects++;
		a->ever_connected = true;
		fill(g, a);
	}
}

static void agent_read(struct lg *g, struct lg_agent *a, uint64_t now)
{
	for (;;) {
		size_t avail;
		uint8_t *dst = frame_decoder_space(&a->dec, &avail);
		if (!dst) {
			agent_drop(g, a, now, true);
			return;
		}
		ssize_t n = recv(a->fd, dst, avail, MSG_DONTWAIT);
		if (n == 0) {
			agent_drop(g, a, now, false);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				agent_drop(g, a, now, false);
			return;
		}
		frame_decoder_commit(&a->dec, (size_t)n);
		const uint8_t *p;
		size_t len;
		int r;
		while ((r = frame_decoder_next(&a->dec, &p, &len)) == 1) {
			char err[160];
			Prof__Envelope *env = envelope_decode(p, len, err, sizeof(err));
			if (!env) {
				agent_drop(g, a, now, true);
				return;
			}
			if (env->body_case == PROF__ENVELOPE__BODY_ACK) {
				on_ack(g, a, env->ack->seq, now);
			} else if (env->body_case == PROF__ENVELOPE__BODY_CHALLENGE && a->state == LG_CHALLENGE) {
				out_append_hello(g, a, env->challenge, now);
			} else if (env->body_case == PROF__ENVELOPE__BODY_ERROR) {
				if (!g->o->quiet)
					fprintf(stderr, "loadgen: %s: collector error %u: %s\n", a->id, env->error->code,
						env->error->message ? env->error->message : "");
				uint32_t retry_ms = env->error->retry_after_ms;
				prof__envelope__free_unpacked(env, NULL);
				agent_drop(g, a, now, true);
				/* As the agent does (agent/transport.c, on_envelope: an Error with
				 * retry_after_ms delays the next attempt at least that long). */
				if (retry_ms && a->next_connect_ns < now + (uint64_t)retry_ms * 1000000u)
					a->next_connect_ns = now + (uint64_t)retry_ms * 1000000u;
				return;
			}
			prof__envelope__free_unpacked(env, NULL);
			if (a->fd < 0)
				return;
		}
		if (r < 0) {
			agent_drop(g, a, now, true);
			return;
		}
		flush(g, a, now);
		if (a->fd < 0)
			return;
	}
}

static void on_event(struct lg *g, struct lg_agent *a, uint32_t ev, uint64_t now)
{
	if (a->fd < 0)
		return;
	if (a->state == LG_CONNECTING) {
		int soerr = 0;
		socklen_t sl = sizeof(soerr);
		getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr) {
			agent_drop(g, a, now, true);
			return;
		}
		if (!(ev & (EPOLLOUT | EPOLLIN)))
			return;
		if (g->o->token) {
			a->state = LG_CHALLENGE;
			set_events(g, a, false);
		} else {
			out_append_hello(g, a, NULL, now);
		}
	}
	if (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))
		agent_read(g, a, now);
	if (a->fd >= 0)
		flush(g, a, now);
}

static bool all_acked(const struct lg *g)
{
	for (unsigned i = 0; i < g->o->agents; i++)
		if (g->a[i].acked < g->a[i].generated)
			return false;
	return true;
}

static double percentile(const struct lg *g, double q)
{
	if (g->nlat == 0)
		return 0;
	uint64_t want = (uint64_t)(q * (double)g->nlat);
	if (want >= g->nlat)
		want = g->nlat - 1;
	uint64_t seen = 0;
	for (uint32_t b = 0; b < LG_HIST_N; b++) {
		seen += g->hist[b];
		if (seen > want)
			return (b + 1) * LG_HIST_US / 1000.0;
	}
	return LG_HIST_N * LG_HIST_US / 1000.0;
}

int loadgen_run(const struct loadgen_opts *o, struct loadgen_result *r)
{
	memset(r, 0, sizeof(*r));
	struct lg g = {.o = o, .r = r};
	g.sa.sin_family = AF_INET;
	g.sa.sin_port = htons((uint16_t)o->port);
	g.sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (loadgen_raise_nofile((long)o->agents + 64) < (long)o->agents + 16)
		return -EMFILE;
	g.epfd = epoll_create1(EPOLL_CLOEXEC);
	g.a = calloc(o->agents, sizeof(*g.a));
	g.hist = calloc(LG_HIST_N, sizeof(*g.hist));
	size_t per_agent = (size_t)(o->rate * o->seconds) + 16;
	int rc = 0;
	if (g.epfd < 0 || !g.a || !g.hist) {
		rc = -ENOMEM;
		goto out;
	}
	uint64_t t0 = clock_mono_ns();
	uint64_t boot = t0 ^ ((uint64_t)getpid() << 20);
	for (unsigned i = 0; i < o->agents; i++) {
		struct lg_agent *a = &g.a[i];
		a->fd = -1;
		snprintf(a->id, sizeof(a->id), "%s-%u", o->prefix ? o->prefix : "load", i);
		a->boot_id = boot + i;
		a->sent_cap = per_agent;
		a->sent_ns = calloc(per_agent, sizeof(uint64_t));
		a->out = malloc(LG_OUT_CAP);
		a->start_offset_ns = o->rate ? (uint64_t)i * (1000000000ull / o->rate) / (o->agents ? o->agents : 1) : 0;
		a->next_connect_ns = t0 + (uint64_t)i * 200000ull; /* 5000 connects/s */
		if (!a->sent_ns || !a->out) {
			rc = -ENOMEM;
			goto out;
		}
	}
	uint64_t gen_end = t0 + (uint64_t)(o->seconds * 1e9);
	uint64_t drain_end = gen_end + (uint64_t)(o->drain_s * 1e9);
	struct epoll_event evs[256];
	g.generating = true;
	for (;;) {
		uint64_t now = clock_mono_ns();
		if (g.generating && now >= gen_end) {
			g.generating = false;
			r->gen_s = (double)(now - t0) * 1e-9;
		}
		if (!g.generating && (all_acked(&g) || now >= drain_end))
			break;
		for (unsigned i = 0; i < o->agents; i++) {
			struct lg_agent *a = &g.a[i];
			if (g.generating && now > t0 + a->start_offset_ns) {
				uint64_t due = (uint64_t)((double)(now - t0 - a->start_offset_ns) * 1e-9 * o->rate) + 1;
				if (due > a->sent_cap)
					due = a->sent_cap;
				if (due > a->generated) {
					a->generated = due;
					if (a->fd >= 0 && a->state == LG_STREAMING) {
						fill(&g, a);
						flush(&g, a, now);
					}
				}
			}
			if (a->fd < 0 && now >= a->next_connect_ns)
				agent_connect(&g, a, now);
		}
		int n = epoll_wait(g.epfd, evs, 256, LG_TICK_MS);
		now = clock_mono_ns();
		for (int k = 0; k < n; k++)
			on_event(&g, evs[k].data.ptr, evs[k].events, now);
	}
	uint64_t end = clock_mono_ns();
	r->elapsed_s = (double)(end - t0) * 1e-9;
	if (r->gen_s == 0)
		r->gen_s = r->elapsed_s;
	for (unsigned i = 0; i < o->agents; i++) {
		r->generated += g.a[i].generated;
		r->acked += g.a[i].acked;
		r->agents_connected += g.a[i].ever_connected;
	}
	r->p50_ms = percentile(&g, 0.50);
	r->p99_ms = percentile(&g, 0.99);
	r->max_ms = percentile(&g, 1.0);
out:
	for (unsigned i = 0; g.a && i < o->agents; i++) {
		if (g.a[i].fd >= 0) {
			close(g.a[i].fd);
			frame_decoder_free(&g.a[i].dec);
		}
		free(g.a[i].sent_ns);
		free(g.a[i].out);
	}
	free(g.a);
	free(g.hist);
	if (g.epfd >= 0)
		close(g.epfd);
	return rc;
}
