/* The collector's HTTP front end (--http HOST:PORT): the session list and
 * the reports of collector report, live from the store. The sockets (one
 * listening socket and its connections) are on an epoll instance of their own,
 * whose descriptor the agents' loop (server.c) watches; the pages are rendered
 * by worker threads (http_worker.h) with their own store connections and a
 * cache of the sessions' analyses (http_pages.h), so neither a page nor a
 * store read ever runs on the agents' loop and an agent's ack never waits for
 * one. Every request is answered and the connection closed. Requests over
 * 8 KiB or not "GET /path HTTP/1.x" get 400, unknown paths 404 (session ids
 * are strict decimal: http_route.h), and only their own connection closes.
 * Limits (issue #18, #25): a request head not received whole within
 * head_timeout gets 408 and its connection closes (slowloris); at most
 * max_conns HTTP connections (apart from the agents' --max-conns): one more
 * evicts the oldest connection still sending its head (503), or gets 503
 * itself when every connection is waiting for or receiving its answer; a page
 * not rendered within render_timeout gets 503, one over HTTP_MAX_PAGE 500; a
 * response not taken by the client within head_timeout (at least 10 s) more
 * is dropped. Every response says its Content-Type and X-Content-Type-Options:
 * nosniff. A non-loopback address needs the token (http_auth.h) or no_auth.
 * Pages: / (sessions), /sessions.json, /session/N (HTML report),
 * /session/N.json, /session/N.txt, /session/N/roofline-gpu.svg, -cpu.svg. */
#ifndef COLLECTOR_HTTP_H
#define COLLECTOR_HTTP_H

#include <stdbool.h>
#include <stdint.h>

#include "auth.h"
#include "http_parse.h"

#define HTTP_MAX_CONNS 64u
#define HTTP_HEAD_TIMEOUT_MS 10000u
#define HTTP_RENDER_TIMEOUT_MS 30000u
#define HTTP_MAX_PAGE (16u << 20) /* bytes of one page */

struct http_limits {
	unsigned head_timeout_ms;   /* 0: HTTP_HEAD_TIMEOUT_MS */
	unsigned max_conns;	    /* 0: HTTP_MAX_CONNS */
	unsigned render_timeout_ms; /* a page's time budget, 0: HTTP_RENDER_TIMEOUT_MS */
	/* A non-loopback address needs token (its requests must carry the HTTP key, http_auth.h)
	 * or no_auth (served to anyone, logged as a warning); not owned. */
	const struct auth_token *token;
	bool no_auth;
	bool key_on_loopback; /* with token: require the key on a loopback address too (tests) */
};

struct http_stats {
	unsigned long long timeouts;	    /* 408: request head not received in time */
	unsigned long long evicted;	    /* 503: a half-sent request made room for a new connection */
	unsigned long long busy;	    /* 503 at accept: every connection was being answered */
	unsigned long long render_timeouts; /* 503: the page took longer than its time budget */
	unsigned long long unauthorized;    /* 401: no or a wrong HTTP key */
};

struct http_server;

/* Bind listen ("HOST:PORT", port 0 picks one) and start the page workers; pages
 * read store_path (read-only, opened per page by the worker). lim NULL: defaults.
 * Errors are logged with what to do (-EACCES: non-loopback without a token or no_auth). */
int http_open(const char *listen, const char *store_path, const struct http_limits *lim, struct http_server **out);
void http_get_stats(const struct http_server *h, struct http_stats *st);
/* The epoll descriptor to watch for EPOLLIN. */
int http_fd(const struct http_server *h);
uint16_t http_port(const struct http_server *h);
/* Handle whatever is ready now, without blocking (arg: the http_server). */
void http_ready(void *arg);
/* Close every connection and the socket. NULL is fine. */
void http_close(struct http_server *h);

#endif
