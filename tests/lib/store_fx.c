/* store_fx.h: the SQLite/PostgreSQL store fixture. */
#include "store_fx.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include <sqlite3.h>

#include "store/store.h"
#include "testproc.h"

struct pgserver fx_pg;
int fx_pg_ok;
char fx_pg_why[512];
static int dbn;

int fx_group_setup(void **state)
{
	(void)state;
	fx_pg_ok = pg_start(&fx_pg, fx_pg_why, sizeof(fx_pg_why)) == 0;
	if (!fx_pg_ok)
		fprintf(stderr, "PostgreSQL tests will be skipped: %s\n", fx_pg_why);
	return 0;
}

int fx_group_teardown(void **state)
{
	(void)state;
	pg_stop(&fx_pg);
	return 0;
}

static int setup(void **state, enum backend b)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->b = b;
	if (b == B_SQLITE) {
		if (tp_tmpdir(f->tmp, sizeof(f->tmp), "stf") < 0) {
			free(f);
			return -1;
		}
		snprintf(f->uri, sizeof(f->uri), "%s/store.db", f->tmp);
	} else if (fx_pg_ok) {
		char name[32];
		snprintf(name, sizeof(name), "t%d", ++dbn);
		if (pg_new_db(&fx_pg, name, f->uri, sizeof(f->uri)) < 0) {
			free(f);
			return -1;
		}
	}
	*state = f;
	return 0;
}

int fx_setup_sqlite(void **state)
{
	return setup(state, B_SQLITE);
}

int fx_setup_pg(void **state)
{
	return setup(state, B_PG);
}

int fx_teardown(void **state)
{
	struct fx *f = *state;
	if (f->tmp[0])
		tp_rm_rf(f->tmp);
	free(f);
	return 0;
}

struct store *fx_open_store(struct fx *f)
{
	if (f->b == B_PG && !fx_pg_ok) {
		fprintf(stderr, "skipped: %s\n", fx_pg_why);
		skip();
	}
	struct store *s = NULL;
	assert_int_equal(store_open(f->uri, 0, &s), 0);
	return s;
}

int64_t fx_q(struct fx *f, const char *sql)
{
	return f->b == B_PG ? pg_int(f->uri, sql) : tp_db_int(f->uri, "%s", sql);
}

void fx_exec(struct fx *f, const char *sql)
{
	if (f->b == B_PG) {
		assert_int_equal(pg_exec(f->uri, sql), 0);
		return;
	}
	sqlite3 *h;
	char *err = NULL;
	assert_int_equal(sqlite3_open(f->uri, &h), SQLITE_OK);
	if (sqlite3_exec(h, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
	sqlite3_close(h);
}

int64_t fx_session(struct store *s, const char *agent)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = (char *)agent;
	h.boot_id = 1;
	h.board = "host";
	int64_t id = 0;
	uint64_t max_seq = 0;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &id, &max_seq, NULL), 0);
	assert_true(id > 0);
	return id;
}
