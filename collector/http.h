/* The collector's HTTP front end (--http HOST:PORT): the session list and
 * the reports of collector report, live from the store. One listening socket
 * and its connections on an epoll instance of their own, whose descriptor
 * the agents' loop (server.c) watches, so one thread serves both; every
 * request is answered and the connection closed. Requests over 8 KiB or not
 * "GET /path HTTP/1.x" get 400 and only their own connection closes.
 * Pages: / (sessions), /sessions.json, /session/N (HTML report),
 * /session/N.json, /session/N.txt, /session/N/roofline-gpu.svg, -cpu.svg. */
#ifndef COLLECTOR_HTTP_H
#define COLLECTOR_HTTP_H

#include <stdint.h>

#define HTTP_MAX_REQUEST 8192u
#define HTTP_MAX_CONNS 64u

struct http_server;

/* Bind listen ("HOST:PORT", port 0 picks one); reports read store_path
 * (read-only, opened per request). Errors are logged with what to do. */
int http_open(const char *listen, const char *store_path, struct http_server **out);
/* The epoll descriptor to watch for EPOLLIN. */
int http_fd(const struct http_server *h);
uint16_t http_port(const struct http_server *h);
/* Handle whatever is ready now, without blocking (arg: the http_server). */
void http_ready(void *arg);
/* Close every connection and the socket. NULL is fine. */
void http_close(struct http_server *h);

#endif
