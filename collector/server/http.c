/* HTTP front end of the collector (see http.h). */
#include "http.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "http_auth.h"
#include "http_route.h"
#include "http_worker.h"
#include "log.h"
#include "net.h"

struct hconn {
	struct hconn *prev, *next; /* newest first */
	int fd;
	uint64_t deadline_ns; /* head received whole by then (408), later the response taken */
	size_t in_len;
	char in[HTTP_MAX_REQUEST + 1];
	struct http_job *job; /* the page being rendered by a worker (http_worker.h) */
	char *out;	      /* the whole response */
	size_t out_len, out_off;
};

struct http_server {
	int epfd, listen_fd, timer_fd, workers_fd;
	struct http_workers *workers;
	uint64_t render_timeout_ns;
	const struct auth_token *token; /* non-loopback with --token-file: requests need the HTTP key */
	bool timer_armed;
	uint16_t port;
	struct hconn *conns;
	unsigned nconns, max_conns;
	uint64_t head_timeout_ns;
	struct http_stats stats;
};

#define SWEEP_MS 100u /* how often deadlines are checked while connections are open */
#define WRITE_TIMEOUT_MIN_NS (10ull * 1000000000ull)
#define RENDER_GRACE_NS (1000ull * 1000000ull) /* a render past its budget answers by then, or the sweep does */

static void timer_update(struct http_server *h);

int http_fd(const struct http_server *h)
{
	return h->epfd;
}

uint16_t http_port(const struct http_server *h)
{
	return h->port;
}

static void conn_close(struct http_server *h, struct hconn *c)
{
	if (c->job)
		http_workers_cancel(h->workers, c->job);
	epoll_ctl(h->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		h->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	free(c->out);
	free(c);
	h->nconns--;
	timer_update(h);
}

/* A periodic timer in the same epoll set wakes http_ready() for the deadlines,
 * only while connections are open. */
static void timer_update(struct http_server *h)
{
	bool want = h->nconns > 0;
	if (want == h->timer_armed || h->timer_fd < 0)
		return;
	struct itimerspec its = {0};
	if (want) {
		its.it_value.tv_nsec = (long)SWEEP_MS * 1000000L;
		its.it_interval = its.it_value;
	}
	if (timerfd_settime(h->timer_fd, 0, &its, NULL) == 0)
		h->timer_armed = want;
}

/* ---------------------------------------------------------------- responses */

static const char *status_text(int code)
{
	switch (code) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

static void conn_write(struct http_server *h, struct hconn *c);

/* Queue a response and switch the connection to writing. body is taken; extra: more header
 * lines ("Name: value\r\n"...), or "". */
static void respond_with(struct http_server *h, struct hconn *c, int code, const char *type, const char *extra,
			 char *body, size_t len)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *m = open_memstream(&buf, &blen);
	if (m) {
		fprintf(m,
			"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nX-Content-Type-Options: nosniff\r\n"
			"Content-Length: %zu\r\nConnection: close\r\nCache-Control: no-store\r\n%s\r\n",
			code, status_text(code), type, len, extra);
		fwrite(body, 1, len, m);
		if (fclose(m) != 0) {
			free(buf);
			buf = NULL;
		}
	}
	free(body);
	if (!buf) {
		conn_close(h, c);
		return;
	}
	c->out = buf;
	c->out_len = blen;
	c->out_off = 0;
	uint64_t wt = h->head_timeout_ns > WRITE_TIMEOUT_MIN_NS ? h->head_timeout_ns : WRITE_TIMEOUT_MIN_NS;
	c->deadline_ns = clock_mono_ns() + wt;
	struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
	epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	conn_write(h, c); /* usually all of it at once; c may be gone */
}

static void respond(struct http_server *h, struct hconn *c, int code, const char *type, char *body, size_t len)
{
	respond_with(h, c, code, type, "", body, len);
}

static void respond_text(struct http_server *h, struct hconn *c, int code, const char *msg)
{
	char *body = strdup(msg);
	respond(h, c, code, "text/plain; charset=utf-8", body, body ? strlen(body) : 0);
}

/* ---------------------------------------------------------------- pages */

/* Hand the page to a worker; the answer comes back through http_ready. */
static void route(struct http_server *h, struct hconn *c, const char *path, const char *query)
{
	struct http_route r;
	if (http_route_parse(path, &r) < 0) {
		respond_text(h, c, 404, "not found: try / for the session list\n");
		return;
	}
	snprintf(r.query, sizeof(r.query), "%s", query);
	struct http_job *j = calloc(1, sizeof(*j));
	if (!j) {
		respond_text(h, c, 503, "out of memory: retry later\n");
		return;
	}
	j->route = r;
	j->owner = c;
	uint64_t now = clock_mono_ns();
	atomic_store(&j->deadline_ns, now + h->render_timeout_ns);
	c->job = j;
	c->deadline_ns = now + h->render_timeout_ns + RENDER_GRACE_NS;
	/* Nothing to read meanwhile (a half-closed client still gets its page); a reset is seen. */
	struct epoll_event ev = {.events = 0, .data.ptr = c};
	epoll_ctl(h->epfd, EPOLL_CTL_MOD, c->fd, &ev);
	http_workers_submit(h->workers, j);
}

/* A worker finished c's page. */
static void page_done(struct http_server *h, struct hconn *c, struct http_job *j)
{
	c->job = NULL;
	char msg[160];
	switch (j->rc) {
	case 0:
		respond(h, c, 200, http_page_type(j->route.page), j->body, j->len);
		j->body = NULL;
		return;
	case -ENOENT: respond_text(h, c, 404, "no such session: see / for the list\n"); return;
	case -ENODATA: respond_text(h, c, 404, "no roof calibrated for that device\n"); return;
	case -ETIMEDOUT:
		h->stats.render_timeouts++;
		snprintf(msg, sizeof(msg),
			 "the page took longer than --http-render-timeout (%llu s): retry later, raise it, or use "
			 "collector report on the store\n",
			 (unsigned long long)(h->render_timeout_ns / 1000000000u));
		respond_text(h, c, 503, msg);
		return;
	case -EFBIG:
		snprintf(msg, sizeof(msg), "the page is larger than %u MiB: use collector report on the store\n",
			 (unsigned)(HTTP_MAX_PAGE >> 20));
		respond_text(h, c, 500, msg);
		return;
	default:
		log_warn("http: %s: %s", j->route.session ? "session page" : "session list", strerror(-j->rc));
		respond_text(h, c, 500, "the report failed (see the collector's log)\n");
	}
}

static void take_pages(struct http_server *h)
{
	struct http_job *j;
	while ((j = http_workers_done(h->workers))) {
		page_done(h, j->owner, j);
		http_job_free(j);
	}
}

/* ---------------------------------------------------------------- I/O */

static void conn_read(struct http_server *h, struct hconn *c)
{
	for (;;) {
		size_t room = HTTP_MAX_REQUEST - c->in_len;
		ssize_t n = recv(c->fd, c->in + c->in_len, room, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			conn_close(h, c);
			return;
		}
		c->in_len += (size_t)n;
		struct http_request req;
		const char *why;
		int code = http_parse_head(c->in, c->in_len, &req, &why);
		if (code == 200 && h->token && !http_auth_ok(h->token, req.authorization)) {
			h->stats.unauthorized++;
			static const char msg[] = "this collector's pages need its HTTP key: send Authorization: Bearer "
						  "KEY, or user name any and password KEY (collector http-key "
						  "--token-file FILE prints KEY)\n";
			char *body = strdup(msg);
			respond_with(h, c, 401, "text/plain; charset=utf-8",
				     "WWW-Authenticate: Basic realm=\"profiler collector\", charset=\"UTF-8\"\r\n", body,
				     body ? strlen(body) : 0);
			return;
		}
		if (code == 200) {
			route(h, c, req.path, req.query);
			return;
		}
		if (code != 0) {
			respond_text(h, c, code, why);
			return;
		}
	}
}

/* Slowloris: heads not received whole in time get 408; responses not taken are dropped. */
static void sweep(struct http_server *h)
{
	uint64_t buf;
	(void)!read(h->timer_fd, &buf, sizeof(buf));
	uint64_t now = clock_mono_ns();
	struct hconn *next;
	for (struct hconn *c = h->conns; c; c = next) {
		next = c->next;
		if (now < c->deadline_ns)
			continue;
		if (c->out) {
			conn_close(h, c);
			continue;
		}
		if (c->job) { /* the worker is stuck in one step of the analysis: answer anyway */
			http_workers_cancel(h->workers, c->job);
			c->job = NULL;
			h->stats.render_timeouts++;
			respond_text(h, c, 503, "the page took longer than --http-render-timeout: retry later\n");
			continue;
		}
		h->stats.timeouts++;
		char msg[96];
		snprintf(msg, sizeof(msg), "request head not received within %llu ms\n",
			 (unsigned long long)(h->head_timeout_ns / 1000000u));
		respond_text(h, c, 408, msg);
	}
}

static void conn_write(struct http_server *h, struct hconn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0)
			break;
		c->out_off += (size_t)n;
	}
	shutdown(c->fd, SHUT_WR);
	conn_close(h, c);
}

static void accept_some(struct http_server *h)
{
	for (int i = 0; i < 16; i++) {
		int fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		if (h->nconns >= h->max_conns) {
			/* Full: the oldest connection still sending its head makes room. */
			struct hconn *old = NULL;
			for (struct hconn *o = h->conns; o; o = o->next)
				if (!o->out && !o->job)
					old = o;
			if (old) {
				h->stats.evicted++;
				respond_text(h, old, 503, "evicted: too many HTTP connections sending their request\n");
			}
		}
		struct hconn *c = h->nconns < h->max_conns ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			h->stats.busy++;
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n"
						   "X-Content-Type-Options: nosniff\r\nContent-Length: 0\r\n"
						   "Connection: close\r\n\r\n";
			(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->deadline_ns = clock_mono_ns() + h->head_timeout_ns;
		struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.ptr = c};
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = h->conns;
		if (h->conns)
			h->conns->prev = c;
		h->conns = c;
		h->nconns++;
		timer_update(h);
	}
}

void http_ready(void *arg)
{
	struct http_server *h = arg;
	struct epoll_event evs[32];
	int n = epoll_wait(h->epfd, evs, 32, 0);
	bool accept = false, timer = false, pages = false;
	/* Connections first: accepting (evictions) and the sweep free connections
	 * that later entries of evs[] could still point to. */
	for (int i = 0; i < n; i++) {
		if (evs[i].data.ptr == h) {
			accept = true;
			continue;
		}
		if (evs[i].data.ptr == &h->timer_fd) {
			timer = true;
			continue;
		}
		if (evs[i].data.ptr == &h->workers_fd) {
			pages = true;
			continue;
		}
		struct hconn *c = evs[i].data.ptr;
		if (c->out)
			conn_write(h, c);
		else if (c->job && (evs[i].events & (EPOLLHUP | EPOLLERR)))
			conn_close(h, c); /* the client went away: its page is not wanted */
		else if (!c->job)
			conn_read(h, c);
	}
	if (pages)
		take_pages(h);
	if (timer)
		sweep(h);
	if (accept)
		accept_some(h);
}

void http_get_stats(const struct http_server *h, struct http_stats *st)
{
	*st = h->stats;
}

int http_open(const char *listen_spec, const char *store_path, const struct http_limits *lim,
	      struct http_server **out)
{
	*out = NULL;
	struct sockaddr_storage ss;
	socklen_t sl;
	if (net_parse_hostport(listen_spec, &ss, &sl) < 0) {
		log_error("invalid --http address '%s': use HOST:PORT with an IP address, e.g. 127.0.0.1:8080",
			  listen_spec);
		return -EINVAL;
	}
	bool loopback = net_is_loopback(&ss);
	const struct auth_token *token = lim ? lim->token : NULL;
	if (!loopback && !token && !(lim && lim->no_auth)) {
		/* as for --listen: checked before binding, nothing listens there unprotected */
		log_error("--http %s is not a loopback address: serving the reports there requires --token-file FILE "
			  "(browsers then need the HTTP key, which collector http-key --token-file FILE prints), or "
			  "--http-no-auth to serve them to anyone who can reach it; or use --http 127.0.0.1:PORT",
			  listen_spec);
		return -EACCES;
	}
	struct http_server *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->listen_fd = h->workers_fd = -1;
	h->token = loopback && !(lim && lim->key_on_loopback) ? NULL : token;
	h->render_timeout_ns =
	    (uint64_t)(lim && lim->render_timeout_ms ? lim->render_timeout_ms : HTTP_RENDER_TIMEOUT_MS) * 1000000u;
	h->max_conns = lim && lim->max_conns ? lim->max_conns : HTTP_MAX_CONNS;
	h->head_timeout_ns =
	    (uint64_t)(lim && lim->head_timeout_ms ? lim->head_timeout_ms : HTTP_HEAD_TIMEOUT_MS) * 1000000u;
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	h->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int rc = h->epfd < 0 || h->timer_fd < 0 ? -errno : 0;
	if (rc == 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &h->timer_fd};
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->timer_fd, &ev) < 0)
			rc = -errno;
	}
	if (rc == 0 && (rc = http_workers_start(store_path, 0, HTTP_MAX_PAGE, &h->workers)) == 0) {
		h->workers_fd = http_workers_fd(h->workers);
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &h->workers_fd};
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->workers_fd, &ev) < 0)
			rc = -errno;
	}
	if (rc == 0) {
		h->listen_fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;
		if (h->listen_fd >= 0)
			setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (h->listen_fd < 0 || bind(h->listen_fd, (struct sockaddr *)&ss, sl) < 0 ||
		    listen(h->listen_fd, SOMAXCONN) < 0) {
			rc = -errno;
			log_error("cannot serve HTTP on %s: %s%s", listen_spec, strerror(-rc),
				  rc == -EADDRINUSE ? ": pick another port in --http" : "");
		}
	}
	if (rc == 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = h};
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->listen_fd, &ev) < 0)
			rc = -errno;
	}
	if (rc < 0) {
		http_close(h);
		return rc;
	}
	sl = sizeof(ss);
	getsockname(h->listen_fd, (struct sockaddr *)&ss, &sl);
	h->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	char addr[80];
	net_format_addr((struct sockaddr *)&ss, addr, sizeof(addr));
	log_info("serving reports on http://%s/ (%u connections, request head within %llu ms; pages rendered by %u "
		 "worker threads, %u analyses at once, each page within %llu s and %u MiB; %s)",
		 addr, h->max_conns, (unsigned long long)(h->head_timeout_ns / 1000000u), HTTP_WORKERS, HTTP_ANALYSES,
		 (unsigned long long)(h->render_timeout_ns / 1000000000u), (unsigned)(HTTP_MAX_PAGE >> 20),
		 h->token ? "requests need the HTTP key" : loopback ? "loopback: no key" : "NO AUTHENTICATION");
	if (!loopback && !h->token)
		log_warn("--http-no-auth: the reports of every session in %s are served WITHOUT AUTHENTICATION to anyone "
			 "who can reach %s; give the collector --token-file FILE instead to require the HTTP key",
			 store_path, addr);
	*out = h;
	return 0;
}

void http_close(struct http_server *h)
{
	if (!h)
		return;
	if (h->listen_fd >= 0) {
		struct page_cache_stats ps = {0};
		if (h->workers)
			http_workers_get_stats(h->workers, &ps);
		log_info("http stats: %llu request heads timed out (408), %llu half-sent requests evicted (503), "
			 "%llu connections refused (503), %llu pages over their time budget (503), %llu requests "
			 "without the HTTP key (401); analyses: %llu run, %llu served from the cache",
			 h->stats.timeouts, h->stats.evicted, h->stats.busy, h->stats.render_timeouts,
			 h->stats.unauthorized, ps.builds, ps.hits);
	}
	while (h->conns)
		conn_close(h, h->conns);
	http_workers_stop(h->workers);
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	if (h->epfd >= 0)
		close(h->epfd);
	if (h->timer_fd >= 0)
		close(h->timer_fd);
	free(h);
}
