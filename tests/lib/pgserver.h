/* A throwaway PostgreSQL server for tests: initdb into a temp dir (as the
 * `postgres` user when running as root), pg_ctl start on a free port of
 * 127.0.0.1 (fsync off, unix socket in the data dir), pg_ctl stop at the end.
 * Everything bounded in time. */
#ifndef TESTS_LIB_PGSERVER_H
#define TESTS_LIB_PGSERVER_H

#include <stddef.h>
#include <stdint.h>

struct pgserver {
	char dir[256];
	char bindir[256];
	int port;
	int running;
};

/* Returns 0, or a negative errno with a printable reason in why (PostgreSQL
 * not installed, no unprivileged user, initdb or start failed). */
int pg_start(struct pgserver *pg, char *why, size_t whylen);
void pg_stop(struct pgserver *pg);
/* Create a fresh database and write its URI (postgresql://prof@127.0.0.1:PORT/NAME). */
int pg_new_db(struct pgserver *pg, const char *name, char *uri, size_t urilen);
/* First column of the first row of sql on uri as an integer; -1 on error. */
int64_t pg_int(const char *uri, const char *sql);
/* Run a statement; 0 or -1. */
int pg_exec(const char *uri, const char *sql);

#endif
