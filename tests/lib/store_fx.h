/* The fixture of the store tests that run the same cases on SQLite and on PostgreSQL
 * (test_store_backends, test_store_ahead): one PostgreSQL server per test process, started
 * in the group setup on 127.0.0.1 (the PostgreSQL cases are skipped with its reason when it
 * cannot run); each case a fresh SQLite file or a fresh database. */
#ifndef TESTS_STORE_FX_H
#define TESTS_STORE_FX_H

#include <stdint.h>

#include "pgserver.h"

struct store;

enum backend { B_SQLITE, B_PG };

struct fx {
	enum backend b;
	char tmp[256]; /* SQLite: the store's directory */
	char uri[512]; /* the store's path or PostgreSQL URI */
};

extern struct pgserver fx_pg;
extern int fx_pg_ok;	    /* the server runs */
extern char fx_pg_why[512]; /* why not */

/* cmocka group setup and teardown: the server started and stopped */
int fx_group_setup(void **state);
int fx_group_teardown(void **state);
/* cmocka per-case setup (a struct fx in *state) and teardown */
int fx_setup_sqlite(void **state);
int fx_setup_pg(void **state);
int fx_teardown(void **state);
/* The case's store opened read-write (a PostgreSQL case without a server: skipped, the reason said). */
struct store *fx_open_store(struct fx *f);
/* One integer from the database behind the store, the same SQL on both back ends. */
int64_t fx_q(struct fx *f, const char *sql);
/* SQL that changes the database behind the store, the same on both back ends (a failure fails the case). */
void fx_exec(struct fx *f, const char *sql);
/* The session of agent (boot 1, board "host") found or opened on s, not committed: its id. */
int64_t fx_session(struct store *s, const char *agent);

#endif
