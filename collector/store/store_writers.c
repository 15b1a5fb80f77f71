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

/* Unix time (s) at which process pid started: btime of /proc/stat plus field 22 of /proc/<pid>/stat
 * (clock ticks after boot); -1 where either does not read. */
static long long started_at(long long pid)
{
	char path[64], buf[1024];
	long long btime = -1;
	FILE *f = fopen("/proc/stat", "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %lld", &btime) == 1)
			break;
	if (f)
		fclose(f);
	snprintf(path, sizeof(path), "/proc/%lld/stat", pid);
	f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* after the command name, which may hold spaces and parentheses */
	unsigned long long ticks = 0;
	for (int field = 2; p && *p && field < 22; field++) /* p at the end of field `field` */
		p = strchr(p + 1, ' ');
	long hz = sysconf(_SC_CLK_TCK);
	if (btime < 0 || !p || sscanf(p, " %llu", &ticks) != 1 || hz <= 0)
		return -1;
	return btime + (long long)(ticks / (unsigned long long)hz);
}

/* Whether the ledger row (pid, boot, since) is a process that still runs: this boot's, alive, and
 * started no later than since (the row's unix time, written after its open: review r10 F3, w46e: a
 * crashed writer's pid reused by another process is not that writer). 2 s of slack for btime's
 * rounding; a start time that does not read (hidden /proc) leaves the process taken as alive. */
static bool alive(long long pid, const char *boot, long long since, const char *my_boot)
{
	if (strcmp(boot, my_boot) != 0 || pid <= 0 || pid > INT32_MAX)
		return false;
	if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
		return false;
	long long start = started_at(pid);
	return start < 0 || start <= since + 2;
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
		if (!alive(pid, db_col_text(st, 1), db_col_i64(st, 2), me) && gone++ == 0)
			snprintf(why, whylen,
				 "its writer pid %lld (opened it at unix time %lld) ended without closing it",
				 pid, (long long)db_col_i64(st, 2));
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	return gone ? 1 : 0;
}

int store_writers_other_live(struct store *s, long long *pid, long long *since)
{
	if (!db_has_table(s->db, "store_writers"))
		return 0;
	struct db_stmt *st = store_query(s, "SELECT pid, boot, since FROM store_writers");
	if (!st)
		return -EIO;
	char me[64];
	boot_id(me, sizeof(me));
	int rc, found = 0;
	while ((rc = db_step(st)) == 1)
		if (!found && db_col_i64(st, 0) != (int64_t)getpid() &&
		    alive(db_col_i64(st, 0), db_col_text(st, 1), db_col_i64(st, 2), me)) {
			*pid = db_col_i64(st, 0);
			*since = db_col_i64(st, 2);
			found = 1;
		}
	db_finalize(st);
	return rc < 0 ? rc : found;
}

/* Run sql with (pid, boot) bound as ?1, ?2. */
static int run_pid_boot(struct store *s, const char *sql, int64_t pid, const char *boot)
{
	struct db_stmt *st = store_query(s, sql);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, pid);
	db_bind_text(st, 2, boot);
	int rc = db_run(st);
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

int store_writers_enter(struct store *s)
{
	int rc = db_exec(s->db, writers_schema, "store_writers");
	if (rc < 0)
		return rc;
	char me[64];
	boot_id(me, sizeof(me));
	/* rows of writers that are gone: this open checked the store, or was told not to */
	struct db_stmt *st = store_query(s, "SELECT pid, boot, since FROM store_writers");
	if (!st)
		return -EIO;
	struct {
		int64_t pid;
		char boot[64];
	} stale[16];
	int nstale = 0;
	while ((rc = db_step(st)) == 1) {
		int64_t pid = db_col_i64(st, 0);
		const char *boot = db_col_text(st, 1);
		if (!alive(pid, boot, db_col_i64(st, 2), me) && nstale < 16) {
			stale[nstale].pid = pid;
			snprintf(stale[nstale].boot, sizeof(stale[nstale].boot), "%s", boot);
			nstale++;
		}
	}
	db_finalize(st);
	for (int i = 0; rc >= 0 && i < nstale; i++)
		rc = run_pid_boot(s, "DELETE FROM store_writers WHERE pid = ?1 AND boot = ?2", stale[i].pid,
				  stale[i].boot);
	if (rc < 0)
		return rc;
	return run_pid_boot(s,
			    "INSERT INTO store_writers (pid, boot, since) VALUES (?1, ?2,"
			    " CAST(strftime('%s', 'now') AS INTEGER)) ON CONFLICT DO NOTHING",
			    getpid(), me);
}

void store_writers_leave(struct store *s)
{
	char me[64];
	boot_id(me, sizeof(me));
	run_pid_boot(s, "DELETE FROM store_writers WHERE pid = ?1 AND boot = ?2", getpid(), me);
}
