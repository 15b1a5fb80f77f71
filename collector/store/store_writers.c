#include "store_writers.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store_priv.h"

static const char writers_schema[] = "CREATE TABLE IF NOT EXISTS store_writers (pid INTEGER NOT NULL,"
				     " boot TEXT NOT NULL, since INTEGER NOT NULL, PRIMARY KEY(pid, boot))";

/* This machine's boot id (hex and dashes only: safe inside SQL text). */
static void boot_id(char *buf, size_t len)
{
	snprintf(buf, len, "unknown");
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	char line[64];
	if (f && fgets(line, sizeof(line), f)) {
		size_t n = strspn(line, "0123456789abcdef-");
		if (n > 0 && n < len) {
			memcpy(buf, line, n);
			buf[n] = 0;
		}
	}
	if (f)
		fclose(f);
}

static bool alive(long long pid, const char *boot, const char *my_boot)
{
	if (strcmp(boot, my_boot) != 0 || pid <= 0 || pid > INT32_MAX)
		return false;
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

int store_writers_unclean(struct store *s, char *why, size_t whylen)
{
	if (!db_has_table(s->db, "store_writers"))
		return -ENOENT;
	struct db_stmt *st = store_query(s, "SELECT pid, boot, since FROM store_writers");
	if (!st)
		return -EIO;
	char me[64];
	boot_id(me, sizeof(me));
	int rc, gone = 0;
	while ((rc = db_step(st)) == 1) {
		long long pid = db_col_i64(st, 0);
		if (!alive(pid, db_col_text(st, 1), me) && gone++ == 0)
			snprintf(why, whylen,
				 "its writer pid %lld (opened it at unix time %lld) ended without closing it",
				 pid, (long long)db_col_i64(st, 2));
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	return gone ? 1 : 0;
}

int store_writers_enter(struct store *s)
{
	int rc = db_exec(s->db, writers_schema, "store_writers");
	if (rc < 0)
		return rc;
	char me[64], sql[256];
	boot_id(me, sizeof(me));
	/* rows of writers that are gone: this open checked the store, or was told not to */
	struct db_stmt *st = store_query(s, "SELECT pid, boot FROM store_writers");
	if (!st)
		return -EIO;
	long long stale[16];
	int nstale = 0;
	while ((rc = db_step(st)) == 1)
		if (!alive(db_col_i64(st, 0), db_col_text(st, 1), me) && nstale < 16)
			stale[nstale++] = db_col_i64(st, 0);
	db_finalize(st);
	for (int i = 0; rc >= 0 && i < nstale; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM store_writers WHERE pid = %lld", stale[i]);
		rc = db_exec(s->db, sql, "store_writers");
	}
	if (rc < 0)
		return rc;
	snprintf(sql, sizeof(sql),
		 "INSERT INTO store_writers (pid, boot, since) VALUES (%d, '%s', CAST(strftime('%%s', 'now') "
		 "AS INTEGER))"
		 " ON CONFLICT DO NOTHING",
		 (int)getpid(), me);
	return db_exec(s->db, sql, "store_writers");
}

void store_writers_leave(struct store *s)
{
	char me[64], sql[200];
	boot_id(me, sizeof(me));
	snprintf(sql, sizeof(sql), "DELETE FROM store_writers WHERE pid = %d AND boot = '%s'", (int)getpid(),
		 me);
	db_exec(s->db, sql, "store_writers");
}
