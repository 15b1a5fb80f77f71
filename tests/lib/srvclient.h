/* An in-process client of the collector's server for unit tests: connect,
 * send frames, read answers while stepping the server loop (server_step), so
 * one thread drives both sides. Failures are cmocka assertions. */
#ifndef TESTS_LIB_SRVCLIENT_H
#define TESTS_LIB_SRVCLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "server/server.h"
#include "store/store.h"

#define SRVCLIENT_MAX_FRAME (64u * 1024u)

/* The server under test: an in-memory store and a server on 127.0.0.1:0
 * (unless opt.listen says otherwise) that the test steps itself. */
struct srv_fixture {
	struct store *store;
	struct server *srv;
};
/* cmocka setup helper: *state = a new fixture with opt (signal_fd forced to -1); 0 or -1. */
int srv_fixture_open(void **state, struct server_options opt);
/* cmocka teardown: closes the server and the store, frees the fixture; 0. */
int srv_fixture_teardown(void **state);

struct client {
	int fd;
	bool eof;
	struct frame_decoder dec;
};

void client_open(struct client *c, struct server *srv);
/* The same from source address src (another loopback address, e.g. "127.0.0.2"; NULL: any). */
void client_open_from(struct client *c, struct server *srv, const char *src);
void client_close(struct client *c);
void client_send(struct client *c, const void *buf, size_t len);
/* Append env as a frame to a growing buffer (several frames in one write). */
void frames_add(uint8_t **buf, size_t *len, const Prof__Envelope *env);
/* Next envelope from the server, stepping the server loop while waiting. NULL at EOF. Caller frees. */
Prof__Envelope *client_next(struct client *c, struct server *srv);
uint64_t expect_ack(struct client *c, struct server *srv);
/* Read acks until one says want (acks may coalesce). */
void expect_ack_reaching(struct client *c, struct server *srv, uint64_t want);
/* An Error envelope (checked to contain text), then EOF. */
void expect_error_and_close(struct client *c, struct server *srv, const char *text);

/* A Hello envelope's fields; zero fields are left out of the message. */
struct hello_spec {
	const char *agent;
	uint64_t boot;
	uint32_t schema; /* 0: PROF_SCHEMA_VERSION */
	const char *board;
	const char *hostname; /* NULL: none */
	const uint8_t *mac; /* the auth proof, mac_len bytes */
	size_t mac_len;
};
/* Append a Hello frame. */
void add_hello_frame(uint8_t **buf, size_t *len, const struct hello_spec *h);

/* Append a one-row Counters record (event "cycles", declared in seq 1). */
void add_counters(uint8_t **buf, size_t *len, uint64_t seq);
/* Send the buffered frames and empty the buffer. */
void send_and_free(struct client *c, uint8_t **buf, size_t *len);

#endif
