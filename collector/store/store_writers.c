#include "store_writers.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store_priv.h"

/* start_ticks (#40 w46g, review r11 F5): the writer's own start, field 22 of /proc/self/stat (clock
 * ticks after boot); NULL in the rows of builds before it, which name their INSERT's columns. */
static const char writers_schema[] = "CREATE TABLE IF NOT EXISTS store_writers (pid INTEGER NOT NULL,"
				     " boot TEXT NOT NULL, since INTEGER NOT NULL, start_ticks INTEGER,"
				     " PRIMARY KEY(pid, boot))";

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

/* From /proc/<pid>/stat ("self" where pid is 0): the state (field 3) in *state and the start (field
 * 22, clock ticks after boot) in *ticks; -1 where it does not read (gone, hidden /proc). */
static int proc_stat(long long pid, char *state, long long *ticks)
{
	char path[64], buf[1024];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%lld/stat", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/stat");
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* after the command name, which may hold spaces and parentheses */
	if (!p || sscanf(p, ") %c", state) != 1)
		return -1;
	for (int field = 2; p && *p && field < 22; field++) /* p at the end of field `field` */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %lld", ticks) != 1)
		return -1;
	return 0;
}

/* Unix time (s) at which a process that started `ticks` after boot started: btime of /proc/stat plus
 * ticks / CLK_TCK; -1 where it does not read. Moves with the wall clock (btime does): only for the
 * rows of older builds, without start_ticks. */
static long long started_at(long long ticks)
{
	char buf[256];
	long long btime = -1;
	FILE *f = fopen("/proc/stat", "r");
	while (f && fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "btime %lld", &btime) == 1)
			break;
	if (f)
		fclose(f);
	long hz = sysconf(_SC_CLK_TCK);
	if (btime < 0 || hz <= 0 || ticks < 0)
		return -1;
	return btime + ticks / hz;
}

/* One ledger row: (pid, boot, since, start_ticks or -1 where NULL or not a column). */
struct row {
	long long pid, since, ticks;
	const char *boot;
};

/* Whether the ledger row is a process that still runs: this boot's, alive and not a zombie (review
 * r11 F5: a zombie passes kill(pid, 0)), and the same process: where the row has start_ticks, the
 * pid's start ticks now are the row's (#40 w46g, review r11 F5: unmoved by a step of the wall
 * clock); in an older build's row (NULL) it started no later than since (w46e, review r10 F3: a
 * crashed writer's pid reused; 2 s of slack for btime's rounding; a forward clock step after that
 * writer's open makes it look reused). A stat that does not read (hidden /proc) leaves the process
 * taken as alive. A row of another pid namespace is not recognised (collector/README). */
static bool alive(const struct row *r, const char *my_boot)
{
	if (strcmp(r->boot, my_boot) != 0 || r->pid <= 0 || r->pid > INT32_MAX)
		return false;
	if (kill((pid_t)r->pid, 0) != 0 && errno != EPERM)
		return false;
	char state = 0;
	long long ticks = -1;
	if (proc_stat(r->pid, &state, &ticks) < 0)
		return true;
	if (state == 'Z' || state == 'X')
		return false;
	if (r->ticks >= 0)
		return ticks == r->ticks;
	long long start = started_at(ticks);
	return start < 0 || start <= r->since + 2;
}

/* The ledger's rows, start_ticks where the table has it (a store opened read-only, or before this
 * open's store_writers_enter, may not yet). */
static struct db_stmt *rows_query(struct store *s)
{
	return store_query(s, store_has_column(s, "store_writers", "start_ticks")
				  ? "SELECT pid, boot, since, start_ticks FROM store_writers"
				  : "SELECT pid, boot, since, NULL FROM store_writers");
}

static void row_read(struct db_stmt *st, struct row *r)
{
	r->pid = db_col_i64(st, 0);
	r->boot = db_col_text(st, 1);
	r->since = db_col_i64(st, 2);
	r->ticks = db_col_null(st, 3) ? -1 : db_col_i64(st, 3);
	if (!r->boot)
		r->boot = "";
}

int store_writers_unclean(struct store *s, char *why, size_t whylen)
{
	if (!db_has_table(s->db, "store_writers"))
		return -ENOENT;
	struct db_stmt *st = rows_query(s);
	if (!st)
		return -EIO;
	char me[64];
	boot_id(me, sizeof(me));
	int rc, gone = 0;
	struct row r;
	while ((rc = db_step(st)) == 1) {
		row_read(st, &r);
		if (!alive(&r, me) && gone++ == 0)
			snprintf(why, whylen,
				 "its writer pid %lld (opened it at unix time %lld) ended without closing it",
				 r.pid, r.since);
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
	struct db_stmt *st = rows_query(s);
	if (!st)
		return -EIO;
	char me[64];
	boot_id(me, sizeof(me));
	int rc, found = 0;
	struct row r;
	while ((rc = db_step(st)) == 1) {
		row_read(st, &r);
		if (!found && r.pid != (long long)getpid() && alive(&r, me)) {
			*pid = r.pid;
			*since = r.since;
			found = 1;
		}
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

/* The table, and its start_ticks column in a store whose ledger an older build made (another writer
 * opening at the same time may add it first: then its failure is no error). */
static int writers_table(struct store *s)
{
	int rc = db_exec(s->db, writers_schema, "store_writers");
	if (rc < 0 || store_has_column(s, "store_writers", "start_ticks"))
		return rc;
	rc = db_exec(s->db, "ALTER TABLE store_writers ADD COLUMN start_ticks INTEGER",
		     "store_writers start_ticks");
	return rc < 0 && store_has_column(s, "store_writers", "start_ticks") ? 0 : rc;
}

int store_writers_enter(struct store *s)
{
	int rc = writers_table(s);
	if (rc < 0)
		return rc;
	char me[64];
	boot_id(me, sizeof(me));
	/* rows of writers that are gone: this open checked the store, or was told not to */
	struct db_stmt *st = rows_query(s);
	if (!st)
		return -EIO;
	struct {
		int64_t pid;
		char boot[64];
	} stale[16];
	int nstale = 0;
	struct row r;
	while ((rc = db_step(st)) == 1) {
		row_read(st, &r);
		if (!alive(&r, me) && nstale < 16) {
			stale[nstale].pid = r.pid;
			snprintf(stale[nstale].boot, sizeof(stale[nstale].boot), "%s", r.boot);
			nstale++;
		}
	}
	db_finalize(st);
	for (int i = 0; rc >= 0 && i < nstale; i++)
		rc = run_pid_boot(s, "DELETE FROM store_writers WHERE pid = ?1 AND boot = ?2", stale[i].pid,
				  stale[i].boot);
	if (rc < 0)
		return rc;
	char state;
	long long ticks = -1;
	proc_stat(0, &state, &ticks);
	st = store_query(s, "INSERT INTO store_writers (pid, boot, since, start_ticks) VALUES (?1, ?2,"
			    " CAST(strftime('%s', 'now') AS INTEGER), ?3) ON CONFLICT DO NOTHING");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, getpid());
	db_bind_text(st, 2, me);
	if (ticks >= 0)
		db_bind_i64(st, 3, ticks);
	else
		db_bind_null(st, 3);
	rc = db_run(st);
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

void store_writers_leave(struct store *s)
{
	char me[64];
	boot_id(me, sizeof(me));
	run_pid_boot(s, "DELETE FROM store_writers WHERE pid = ?1 AND boot = ?2", getpid(), me);
}
