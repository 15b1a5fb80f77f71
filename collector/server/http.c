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

#include "cli/cli.h"
#include "json.h"
#include "log.h"
#include "net.h"
#include "report/overview.h"
#include "report/svg.h"

struct hconn {
	struct hconn *prev, *next; /* newest first */
	int fd;
	uint64_t deadline_ns; /* head received whole by then (408), later the response taken */
	size_t in_len;
	char in[HTTP_MAX_REQUEST + 1];
	char *out; /* the whole response */
	size_t out_len, out_off;
};

struct http_server {
	int epfd, listen_fd, timer_fd;
	bool timer_armed;
	uint16_t port;
	char *store_path;
	struct hconn *conns;
	unsigned nconns, max_conns;
	uint64_t head_timeout_ns;
	struct http_stats stats;
};

#define SWEEP_MS 100u /* how often deadlines are checked while connections are open */
#define WRITE_TIMEOUT_MIN_NS (10ull * 1000000000ull)

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
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 503: return "Service Unavailable";
	default: return "Internal Server Error";
	}
}

static void conn_write(struct http_server *h, struct hconn *c);

/* Queue a response and switch the connection to writing. body is taken. */
static void respond(struct http_server *h, struct hconn *c, int code, const char *type, char *body, size_t len)
{
	char *buf = NULL;
	size_t blen = 0;
	FILE *m = open_memstream(&buf, &blen);
	if (m) {
		fprintf(m,
			"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n"
			"Cache-Control: no-store\r\n\r\n",
			code, status_text(code), type, len);
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

static void respond_text(struct http_server *h, struct hconn *c, int code, const char *msg)
{
	char *body = strdup(msg);
	respond(h, c, code, "text/plain; charset=utf-8", body, body ? strlen(body) : 0);
}

/* ---------------------------------------------------------------- pages */

struct list_ctx {
	FILE *f;
	bool json;
	int n;
};

static int list_cb(const struct store_session_row *r, void *arg)
{
	struct list_ctx *x = arg;
	char t[32];
	if (x->json) {
		fprintf(x->f, "%s{\"id\":%lld,\"agent_id\":", x->n ? "," : "", (long long)r->id);
		json_string(x->f, r->agent_id);
		fprintf(x->f, ",\"records\":%llu,\"last_seen\":%lld}", (unsigned long long)r->records,
			(long long)r->last_seen);
	} else {
		fprintf(x->f, "<tr><td><a href=\"/session/%lld\">%lld</a></td><td>", (long long)r->id, (long long)r->id);
		svg_escape(x->f, r->agent_id);
		fputs("</td><td>", x->f);
		svg_escape(x->f, r->board);
		fputs("</td><td>", x->f);
		svg_escape(x->f, r->target);
		fprintf(x->f, "</td><td>%llu</td><td>%s</td></tr>\n", (unsigned long long)r->records,
			cli_time(t, sizeof(t), r->last_seen));
	}
	x->n++;
	return 0;
}

static int page_sessions(struct store *st, FILE *f, bool json)
{
	struct list_ctx x = {.f = f, .json = json};
	if (json) {
		fputs("{\"sessions\":[", f);
	} else {
		fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>profiler sessions</title></head>"
		      "<body style=\"font-family:sans-serif\"><h1>Sessions</h1>\n<table border=\"1\" cellpadding=\"4\" "
		      "id=\"sessions\">\n<tr><th>session</th><th>agent</th><th>board</th><th>target</th><th>records</th>"
		      "<th>last seen</th></tr>\n",
		      f);
	}
	int rc = store_list_sessions(st, list_cb, &x);
	fputs(json ? "]}\n" : "</table></body></html>\n", f);
	return rc;
}

enum page { P_HTML, P_JSON, P_TEXT, P_SVG_GPU, P_SVG_CPU };

static int page_session(struct store *st, long long id, enum page p, FILE *f)
{
	struct overview_opts oo = {.sections = p != P_SVG_GPU && p != P_SVG_CPU, .json = p == P_JSON, .limit = 20};
	struct overview ov;
	int rc = overview_load(st, id, &oo, &ov);
	if (rc < 0)
		return rc;
	switch (p) {
	case P_HTML: rc = overview_html(&ov, f); break;
	case P_JSON: rc = overview_json(&ov, f); break;
	case P_TEXT: rc = overview_text(&ov, f); break;
	case P_SVG_GPU: rc = overview_roofline_svg(&ov, true, f); break;
	case P_SVG_CPU: rc = overview_roofline_svg(&ov, false, f); break;
	}
	overview_free(&ov);
	return rc;
}

static const char *const types[] = {"text/html; charset=utf-8", "application/json", "text/plain; charset=utf-8",
				    "image/svg+xml", "image/svg+xml"};

static void route(struct http_server *h, struct hconn *c, const char *path)
{
	long long id = 0;
	enum page p = P_HTML;
	bool list = false;
	int n = 0;
	char rest[32] = "";
	if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0) {
		list = true;
	} else if (strcmp(path, "/sessions.json") == 0) {
		list = true;
		p = P_JSON;
	} else if (sscanf(path, "/session/%lld%n", &id, &n) == 1 && id > 0 && path[n] != '-' && path[n] != '+' &&
		   strlen(path + n) < sizeof(rest)) {
		strcpy(rest, path + n);
		if (strcmp(rest, "") == 0)
			p = P_HTML;
		else if (strcmp(rest, ".json") == 0)
			p = P_JSON;
		else if (strcmp(rest, ".txt") == 0)
			p = P_TEXT;
		else if (strcmp(rest, "/roofline-gpu.svg") == 0)
			p = P_SVG_GPU;
		else if (strcmp(rest, "/roofline-cpu.svg") == 0)
			p = P_SVG_CPU;
		else
			id = 0;
	}
	if (!list && id <= 0) {
		respond_text(h, c, 404, "not found: try / for the session list\n");
		return;
	}
	struct store *st;
	if (cli_open_store(h->store_path, 0, &st) < 0) { /* checked when the collector opened it */
		respond_text(h, c, 500, "cannot open the store (see the collector's log)\n");
		return;
	}
	char *body = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&body, &len);
	int rc = m ? 0 : -ENOMEM;
	if (m)
		rc = list ? page_sessions(st, m, p == P_JSON) : page_session(st, id, p, m);
	if (m && fclose(m) != 0 && rc == 0)
		rc = -EIO;
	store_close(st);
	if (rc == -ENOENT) {
		free(body);
		respond_text(h, c, 404, "no such session: see / for the list\n");
	} else if (rc == -ENODATA) {
		free(body);
		respond_text(h, c, 404, "no roof calibrated for that device\n");
	} else if (rc < 0) {
		free(body);
		respond_text(h, c, 500, "the report failed (see the collector's log)\n");
	} else {
		respond(h, c, 200, types[p], body, len);
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
		if (code == 200) {
			route(h, c, req.path);
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
				if (!o->out)
					old = o;
			if (old) {
				h->stats.evicted++;
				respond_text(h, old, 503, "evicted: too many HTTP connections sending their request\n");
			}
		}
		struct hconn *c = h->nconns < h->max_conns ? calloc(1, sizeof(*c)) : NULL;
		if (!c) {
			h->stats.busy++;
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
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
	bool accept = false, timer = false;
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
		struct hconn *c = evs[i].data.ptr;
		if (c->out)
			conn_write(h, c);
		else
			conn_read(h, c);
	}
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
	struct http_server *h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->listen_fd = -1;
	h->max_conns = lim && lim->max_conns ? lim->max_conns : HTTP_MAX_CONNS;
	h->head_timeout_ns =
	    (uint64_t)(lim && lim->head_timeout_ms ? lim->head_timeout_ms : HTTP_HEAD_TIMEOUT_MS) * 1000000u;
	h->store_path = strdup(store_path);
	h->epfd = epoll_create1(EPOLL_CLOEXEC);
	h->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	int rc = h->epfd < 0 || h->timer_fd < 0 || !h->store_path ? -errno : 0;
	if (rc == 0) {
		struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &h->timer_fd};
		if (epoll_ctl(h->epfd, EPOLL_CTL_ADD, h->timer_fd, &ev) < 0)
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
	log_info("serving reports on http://%s/ (%u connections, request head within %llu ms)", addr, h->max_conns,
		 (unsigned long long)(h->head_timeout_ns / 1000000u));
	*out = h;
	return 0;
}

void http_close(struct http_server *h)
{
	if (!h)
		return;
	if (h->listen_fd >= 0)
		log_info("http stats: %llu request heads timed out (408), %llu half-sent requests evicted (503), "
			 "%llu connections refused (503)",
			 h->stats.timeouts, h->stats.evicted, h->stats.busy);
	while (h->conns)
		conn_close(h, h->conns);
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	if (h->epfd >= 0)
		close(h->epfd);
	if (h->timer_fd >= 0)
		close(h->timer_fd);
	free(h->store_path);
	free(h);
}
