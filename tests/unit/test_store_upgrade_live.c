/* The key ids' schema upgrade refused while an older collector still has the
 * store open (#40 w46c, review r7 #7): such a collector checked the schema
 * version only at its own open and would read the id blocks written after the
 * upgrade as whole keys. SQLite: a version 1 store is not upgraded at a
 * read-write open while the writers ledger (store_writers.c) holds another
 * process that still runs; PostgreSQL: migration 6 is not run while an older
 * collector's connection (application_name exactly prof-collector; this build
 * names its own prof-collector/2, w46e) is open on the database. SQLite rows are matched to their
 * process by its start ticks after boot (w46g, review r11 F5: not the wall clock; a zombie is gone).
 * Both say which process, leave the store as it was (read-only
 * opens still read it), and upgrade once it is gone. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <libpq-fe.h>

#include "log.h"
#include "store/store.h"
#include "store_fx.h"

/* This machine's boot id, as the writers ledger keeps it. */
static void boot_id(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, (int)len, f));
	fclose(f);
	buf[strspn(buf, "0123456789abcdef-")] = 0;
}

/* A process that only waits (it ends with this one, also when a failed assertion ends the case), in the
 * ledger as a writer whose open was at since (a row without start ticks, as builds before w46g wrote it):
 * its pid. */
static pid_t ledger_child(struct fx *f, long long since)
{
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pause();
		_exit(0);
	}
	char boot[64], sql[200];
	boot_id(boot, sizeof(boot));
	snprintf(sql, sizeof(sql), "INSERT INTO store_writers (pid, boot, since) VALUES (%d, '%s', %lld)",
		 (int)pid, boot, since);
	fx_exec(f, sql);
	return pid;
}

static void test_upgrade_waits_for_older_writer_sqlite(void **state)
{
	struct fx *f = *state;
	store_close(fx_open_store(f));
	/* a version 1 store (before the key ids), held open for writing by a process that still runs */
	fx_exec(f, "DROP TABLE sample_key_ids; PRAGMA user_version = 1");
	/* its row written after it started, as a writer's open writes it */
	pid_t older = ledger_child(f, (long long)time(NULL));
	struct store *s = NULL;
	assert_int_equal(store_open(f->uri, 0, &s), -EBUSY);
	assert_int_equal(fx_q(f, "PRAGMA user_version"), 1);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'sample_key_ids'"), 0);
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0); /* read as it is */
	store_close(s);
	kill(older, SIGKILL);
	assert_int_equal(waitpid(older, NULL, 0), older);
	assert_int_equal(store_open(f->uri, 0, &s), 0); /* its row is a writer that is gone now */
	store_close(s);
	assert_int_equal(fx_q(f, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sqlite_schema WHERE name = 'sample_key_ids'"), 1);
}

/* A plain libpq connection to uri named application_name name (an older build's collector: its name). */
static PGconn *pg_named(const char *uri, const char *name)
{
	const char *keys[] = {"dbname", "application_name", NULL}, *vals[] = {uri, name, NULL};
	PGconn *c = PQconnectdbParams(keys, vals, 1);
	assert_non_null(c);
	assert_int_equal(PQstatus(c), CONNECTION_OK);
	return c;
}

/* Opens uri read-write, retrying -EBUSY for up to 5 s (the server ends a closed connection's backend
 * on its own time): store_open's last result. */
static int open_rw_retry(const char *uri)
{
	struct store *s = NULL;
	int rc = -EBUSY;
	for (int i = 0; i < 50 && rc == -EBUSY; i++) {
		if ((rc = store_open(uri, 0, &s)) == -EBUSY)
			nanosleep(&(struct timespec){0, 100000000}, NULL);
	}
	if (rc == 0)
		store_close(s);
	return rc;
}

/* Review r10 F3: a ledger row whose pid now belongs to a process that started after the row's since
 * (a crashed writer's pid reused) is not a live writer: the upgrade runs (it was refused, naming the
 * unrelated process). */
static void test_upgrade_ignores_reused_pid_sqlite(void **state)
{
	struct fx *f = *state;
	store_close(fx_open_store(f));
	fx_exec(f, "DROP TABLE sample_key_ids; PRAGMA user_version = 1");
	/* the crashed writer's open, 100 s before this process began */
	pid_t other = ledger_child(f, (long long)time(NULL) - 100);
	struct store *s = NULL;
	int rc = store_open(f->uri, 0, &s);
	kill(other, SIGKILL);
	assert_int_equal(waitpid(other, NULL, 0), other);
	assert_int_equal(rc, 0);
	store_close(s);
	assert_int_equal(fx_q(f, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM store_writers"), 0); /* its row taken as stale */
}

/* A child that opens the store for writing as a collector does (its ledger row, with its start ticks)
 * and then waits (zombie: ends without closing it, not reaped): its pid, once its row is written. */
static pid_t writer_child(struct fx *f, bool zombie)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct store *s = NULL;
		char ok = store_open(f->uri, 0, &s) == 0 ? 'y' : 'n';
		if (write(p[1], &ok, 1) != 1 || zombie)
			_exit(0);
		pause();
		_exit(0);
	}
	close(p[1]);
	char ok = 0;
	assert_int_equal(read(p[0], &ok, 1), 1);
	close(p[0]);
	assert_int_equal(ok, 'y');
	return pid;
}

/* Its store made a version 1 store (before the key ids), with a writer child's row. */
static pid_t v1_with_writer(struct fx *f, bool zombie)
{
	store_close(fx_open_store(f));
	pid_t pid = writer_child(f, zombie);
	fx_exec(f, "DROP TABLE sample_key_ids; PRAGMA user_version = 1");
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM store_writers WHERE start_ticks > 0"), 1);
	return pid;
}

static void end_child(pid_t pid)
{
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* Review r11 F5: a forward step of the wall clock after a writer opened the store (its since now far
 * before the start btime + ticks computes) leaves it live: its start ticks are its row's. With w46e's
 * check (start <= since + 2) it was taken as gone and the upgrade ran under it. */
static void test_upgrade_waits_after_clock_step_sqlite(void **state)
{
	struct fx *f = *state;
	pid_t w = v1_with_writer(f, false);
	fx_exec(f, "UPDATE store_writers SET since = since - 3600");
	struct store *s = NULL;
	int rc = store_open(f->uri, 0, &s);
	if (rc == 0)
		store_close(s);
	int64_t version = fx_q(f, "PRAGMA user_version");
	end_child(w);
	assert_int_equal(rc, -EBUSY);
	assert_int_equal(version, 1);
	assert_int_equal(store_open(f->uri, 0, &s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
}

/* A row whose start ticks are not those of the process now under its pid (the pid reused, though
 * that process started before the row's since) is a writer that is gone: upgraded, its row removed. */
static void test_upgrade_ignores_other_ticks_sqlite(void **state)
{
	struct fx *f = *state;
	pid_t w = v1_with_writer(f, false);
	fx_exec(f, "UPDATE store_writers SET start_ticks = start_ticks - 1");
	struct store *s = NULL;
	int rc = store_open(f->uri, 0, &s);
	end_child(w);
	assert_int_equal(rc, 0);
	store_close(s);
	assert_int_equal(fx_q(f, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM store_writers"), 0);
}

/* State (field 3 of /proc/<pid>/stat) of pid; 0 where it does not read. */
static char proc_state(pid_t pid)
{
	char path[64], buf[512] = "", st = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *fp = fopen(path, "r");
	if (fp && fgets(buf, sizeof(buf), fp)) {
		char *p = strrchr(buf, ')');
		if (!p || sscanf(p, ") %c", &st) != 1)
			st = 0;
	}
	if (fp)
		fclose(fp);
	return st;
}

/* Review r11 F5: a writer that ended without closing the store and is not yet reaped (a zombie, which
 * kill(pid, 0) still finds) is gone: the store upgraded (a live writer would make it -EBUSY) and its row
 * removed; a read-only --check auto open succeeds (r12 F8: whether it reported the unclean end is not
 * asserted). */
static void test_upgrade_ignores_zombie_sqlite(void **state)
{
	struct fx *f = *state;
	pid_t w = v1_with_writer(f, true);
	for (int i = 0; i < 200 && proc_state(w) != 'Z'; i++)
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	char st = proc_state(w);
	struct store *s = NULL;
	int rc = store_open(f->uri, STORE_READ_ONLY | STORE_CHECK_AUTO, &s);
	if (rc == 0)
		store_close(s);
	int rw = store_open(f->uri, 0, &s);
	end_child(w);
	assert_int_equal(st, 'Z');
	assert_int_equal(rc, 0);
	assert_int_equal(rw, 0);
	store_close(s);
	assert_int_equal(fx_q(f, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM store_writers"), 0);
}

/* A ledger an older build made (no start_ticks) with an older build's live row (no ticks: since
 * compared, w46e): read-only opens read it, a read-write open still waits for that writer, and once
 * it is gone adds the column. */
static void test_older_ledger_table_sqlite(void **state)
{
	struct fx *f = *state;
	store_close(fx_open_store(f));
	fx_exec(f, "DROP TABLE sample_key_ids; PRAGMA user_version = 1; DROP TABLE store_writers;"
		   " CREATE TABLE store_writers (pid INTEGER NOT NULL, boot TEXT NOT NULL, since INTEGER NOT NULL,"
		   " PRIMARY KEY(pid, boot))");
	pid_t older = ledger_child(f, (long long)time(NULL) + 1);
	struct store *s = NULL;
	int ro = store_open(f->uri, STORE_READ_ONLY | STORE_CHECK_AUTO, &s);
	if (ro == 0)
		store_close(s);
	int rw = store_open(f->uri, 0, &s);
	if (rw == 0)
		store_close(s);
	int64_t cols = fx_q(f, "SELECT COUNT(*) FROM pragma_table_info('store_writers') WHERE name = 'start_ticks'");
	end_child(older);
	assert_int_equal(ro, 0);
	assert_int_equal(rw, -EBUSY);
	assert_int_equal(cols, 0);
	assert_int_equal(store_open(f->uri, 0, &s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(
	    fx_q(f, "SELECT COUNT(*) FROM pragma_table_info('store_writers') WHERE name = 'start_ticks'"), 1);
}

static void test_upgrade_waits_for_older_writer_postgresql(void **state)
{
	struct fx *f = *state;
	store_close(fx_open_store(f));
	/* a version 5 store (before migration 6), with an older collector's connection open on it: a plain
	 * connection named as builds before w46e named theirs (exactly 'prof-collector') */
	fx_exec(f, "DELETE FROM prof_schema_migrations WHERE version = 6; DROP TABLE sample_key_ids;"
		   " ALTER TABLE sample_blocks DROP COLUMN fmt");
	PGconn *older = pg_named(f->uri, "prof-collector");
	struct store *current = NULL, *s = NULL;
	/* this build's read-only open stays open throughout: a current collector, never counted as older
	 * (review r10 F2: it was, and two current collectors restarted together refused each other) */
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &current), 0);
	assert_int_equal(store_open(f->uri, 0, &s), -EBUSY);
	assert_int_equal(fx_q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 5);
	PQfinish(older);
	assert_int_equal(open_rw_retry(f->uri), 0);
	store_close(current);
	assert_int_equal(fx_q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 6);
	assert_int_equal(
	    fx_q(f, "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'sample_key_ids'"), 1);
}

int main(void)
{
	log_init("test_store_upgrade_live", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_upgrade_waits_for_older_writer_sqlite, fx_setup_sqlite,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade_ignores_reused_pid_sqlite, fx_setup_sqlite, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade_waits_after_clock_step_sqlite, fx_setup_sqlite,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade_ignores_other_ticks_sqlite, fx_setup_sqlite, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade_ignores_zombie_sqlite, fx_setup_sqlite, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_older_ledger_table_sqlite, fx_setup_sqlite, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_upgrade_waits_for_older_writer_postgresql, fx_setup_pg,
					    fx_teardown),
	};
	return cmocka_run_group_tests_name("store_upgrade_live", tests, fx_group_setup, fx_group_teardown);
}
