/* The collector's HTTP front end (--http HOST:PORT): the session list and
 * the reports of collector report, live from the store. One listening socket
 * and its connections on an epoll instance of their own, whose descriptor
 * the agents' loop (server.c) watches, so one thread serves both; every
 * request is answered and the connection closed. Requests over 8 KiB or not
 * "GET /path HTTP/1.x" get 400 and only their own connection closes.
 * Limits (issue #18): a request head not received whole within head_timeout
 * gets 408 and its connection closes (slowloris); at most max_conns HTTP
 * connections (apart from the agents' --max-conns): one more evicts the oldest
 * connection still sending its head (503), or gets 503 itself when every
 * connection is being answered; a response not taken by the client within
 * head_timeout (at least 10 s) more is dropped.
 * Pages: / (sessions), /sessions.json, /session/N (HTML report),
 * /session/N.json, /session/N.txt, /session/N/roofline-gpu.svg, -cpu.svg. */
#ifndef COLLECTOR_HTTP_H
#define COLLECTOR_HTTP_H

#include <stdint.h>

#include "http_parse.h"

#define HTTP_MAX_CONNS 64u
#define HTTP_HEAD_TIMEOUT_MS 10000u

struct http_limits {
	unsigned head_timeout_ms; /* 0: HTTP_HEAD_TIMEOUT_MS */
	unsigned max_conns;	  /* 0: HTTP_MAX_CONNS */
};

struct http_stats {
	unsigned long long timeouts; /* 408: request head not received in time */
	unsigned long long evicted;  /* 503: a half-sent request made room for a new connection */
	unsigned long long busy;     /* 503 at accept: every connection was being answered */
};

struct http_server;

/* Bind listen ("HOST:PORT", port 0 picks one); reports read store_path
 * (read-only, opened per request). lim NULL: defaults. Errors are logged with what to do. */
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
