/* A damaged SQLite store with the real collector and agents (issue 25 item
 * 5). 4 KiB of random bytes in the middle of a store that agents filled: the
 * collector refuses it in one line that says how to recover, writing nothing
 * into it; the query commands refuse it too when told to check (their default
 * checks only after an unclean shutdown: a collector killed -9), and
 * `collector check` does; `collector
 * recover` copies it into a new store the collector takes. Damage met while
 * running (checks off, the data pages overwritten): the collector stops
 * acking and exits non-zero; the agent keeps its records and delivers them,
 * each once, to the collector restarted on the recovered store. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "testproc.h"

#define PAGE 4096

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "integrity", true);
}

/* One agent run of secs seconds, records every 10 ms, into the env's collector. */
static void fill(struct tp_env *e, const char *id, const char *secs)
{
	char log[320];
	snprintf(log, sizeof(log), "%s/%s.log", e->dir, id);
	pid_t a = fl_start_agent(e->port, e->spool, id, "10", secs, NULL, log, NULL);
	assert_true(a > 0);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0)
		tp_dump_file(log);
	assert_int_equal(rc, 0);
}

static off_t file_size(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 ? sb.st_size : -1;
}

/* Overwrite [off, off + len) with seeded random bytes. */
static void damage(const char *path, off_t off, size_t len)
{
	uint8_t *b = malloc(len);
	assert_non_null(b);
	uint64_t x = 0x2545f4914f6cdd1dull;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b[i] = (uint8_t)x;
	}
	int fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, len, off), (ssize_t)len);
	close(fd);
	free(b);
	/* SQLite itself sees the damage (the precondition of everything below) */
	assert_true(tp_db_int(path, "SELECT COUNT(*) FROM pragma_quick_check WHERE quick_check <> 'ok'") != 0);
}

/* Run `collector ARGS`, stdout and stderr to log; its exit status. */
static int collector_cmd(const char *args, const char *log)
{
	char bin[512], cmd[2048];
	tp_bin("collector", bin, sizeof(bin));
	snprintf(cmd, sizeof(cmd), "%s %s >>%s 2>&1", bin, args, log);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp_bytes(const char *path, size_t *len)
{
	off_t n = file_size(path);
	assert_true(n > 0);
	*len = (size_t)n;
	char *b = malloc(*len);
	int fd = open(path, O_RDONLY);
	assert_true(b && fd >= 0);
	assert_int_equal(read(fd, b, *len), (ssize_t)*len);
	close(fd);
	return b;
}

static void test_store_integrity_damaged_store_refused_then_recovered(void **state)
{
	struct tp_env *e = *state;
	fill(e, "board-1", "1");
	tp_stop(e->collector, 5000);
	e->collector = 0;
	/* A page of the sample data (the last leaf of counter_samples, from SQLite's dbstat):
	 * the middle of the file, as before, is a page of sqlite_schema once the schema's
	 * tables outgrow one page, and a damaged schema leaves nothing to list */
	int64_t pageno = tp_db_int(e->db, "SELECT MAX(pageno) FROM dbstat WHERE name = 'counter_samples' AND "
					  "pagetype = 'leaf'");
	assert_true(pageno > 1);
	damage(e->db, (off_t)(pageno - 1) * PAGE, PAGE);
	size_t blen;
	char *before = slurp_bytes(e->db, &blen);

	/* the collector refuses it in one line, within seconds, writing nothing */
	char bin[512], log[320], pf[320];
	tp_bin("collector", bin, sizeof(bin));
	snprintf(log, sizeof(log), "%s/refused.log", e->dir);
	snprintf(pf, sizeof(pf), "%s/refused.port", e->dir);
	char *argv[] = {bin, "--listen", "127.0.0.1:0", "--store", e->db, "--port-file", pf, NULL};
	pid_t c = tp_spawn(argv, log);
	int status = -1;
	assert_int_equal(tp_wait(c, 20000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	assert_int_equal(tp_file_count(log, "is damaged (quick_check: "), 1);
	assert_int_equal(tp_file_count(log, "nothing was written into it; copy what it holds into a new store with "
					    "`collector recover --store"),
			 1);
	assert_true(access(pf, F_OK) != 0); /* never listened */
	size_t alen;
	char *after = slurp_bytes(e->db, &alen);
	assert_int_equal(alen, blen);
	assert_memory_equal(after, before, blen);
	free(before);
	free(after);

	/* the query commands refuse it when told to check (--check quick; their default, auto, checks only
	 * after an unclean shutdown: this collector stopped cleanly), and so does `collector check` */
	char args[1024], qlog[320], rec[sizeof(e->db)];
	snprintf(qlog, sizeof(qlog), "%s/query.log", e->dir);
	snprintf(args, sizeof(args), "sessions --store %s --check quick", e->db);
	assert_int_equal(collector_cmd(args, qlog), 1);
	assert_int_equal(tp_file_count(qlog, "(or --check off to read what is still readable)"), 1);
	snprintf(args, sizeof(args), "check --store %s", e->db);
	assert_int_equal(collector_cmd(args, qlog), 1);
	assert_int_equal(tp_file_count(qlog, "is damaged (integrity_check: "), 1);
	snprintf(args, sizeof(args), "sessions --store %s --check off", e->db);
	assert_int_equal(collector_cmd(args, qlog), 0);
	assert_int_equal(tp_file_count(qlog, "board-1"), 1);

	/* the recovery the message names, then the collector takes the new store */
	snprintf(rec, sizeof(rec), "%s/store.db.recovered", e->dir);
	snprintf(args, sizeof(args), "recover --store %s --out %s", e->db, rec);
	assert_int_equal(collector_cmd(args, qlog), 0);
	int64_t kept = tp_db_int(rec, "SELECT COUNT(*) FROM records");
	fprintf(stderr, "recovered %lld records\n", (long long)kept);
	assert_true(kept > 0);
	snprintf(e->db, sizeof(e->db), "%s", rec);
	assert_int_equal(tp_env_start_collector(e, 0, NULL), 0);
	fill(e, "board-2", "0.5");
	int complete = 0;
	int64_t n = fl_records(e->db, "board-2", &complete);
	assert_true(n > 0 && complete);
	assert_int_equal(tp_db_int(e->db, "SELECT COUNT(*) FROM sessions WHERE agent_id = 'board-1'"), 1);
}

static void test_store_integrity_damage_while_running_loses_nothing(void **state)
{
	struct tp_env *e = *state;
	fill(e, "board-1", "1");
	tp_stop(e->collector, 5000);
	e->collector = 0;
	/* Every page after the last table or index root: the newest rows, where the next
	 * writes go; the schema and the roots stay readable, so the collector starts. */
	off_t size = file_size(e->db);
	off_t data = (off_t)tp_db_int(e->db, "SELECT MAX(rootpage) FROM sqlite_schema") * PAGE;
	assert_true(data > 0 && data < size);
	damage(e->db, data, (size_t)(size - data));
	const char *off[] = {"--check", "off", NULL};
	assert_int_equal(tp_env_start_collector(e, 0, off), 0);
	int port = e->port;
	char alog[320];
	snprintf(alog, sizeof(alog), "%s/agent.log", e->dir);
	pid_t a = fl_start_agent(port, e->spool, "board-live", "20", "2", NULL, alog, NULL);
	assert_true(a > 0);
	/* the collector meets the damage, tells the agent and stops, non-zero */
	int status = -1;
	assert_int_equal(tp_wait(e->collector, 20000, &status), 0);
	e->collector = 0;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	assert_int_equal(tp_file_count(e->clog, "the store reported damage while running"), 1);
	assert_true(tp_alive(a));
	/* recovered store, collector restarted on the same port: the agent delivers everything once */
	char args[1024], rec[sizeof(e->db)], qlog[320];
	snprintf(rec, sizeof(rec), "%s/store.db.recovered", e->dir);
	snprintf(qlog, sizeof(qlog), "%s/query.log", e->dir);
	snprintf(args, sizeof(args), "recover --store %s --out %s", e->db, rec);
	assert_int_equal(collector_cmd(args, qlog), 0);
	snprintf(e->db, sizeof(e->db), "%s", rec);
	assert_int_equal(tp_env_start_collector(e, port, NULL), 0);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0)
		tp_dump_file(alog);
	assert_int_equal(rc, 0);
	assert_true(tp_file_count(alog, "the collector's store is damaged") >= 1);
	int complete = 0;
	int64_t n = fl_records(e->db, "board-live", &complete);
	int64_t created = fl_created(alog);
	fprintf(stderr, "board-live: %lld created, %lld stored after the recovery\n", (long long)created, (long long)n);
	assert_true(created > 0 && complete);
	assert_int_equal(n, created);
}

/* After a collector is killed (-9) its store's read commands check it first (--check auto),
 * until a collector opens and closes it cleanly; after a clean stop they do not. */
static void test_store_integrity_unclean_shutdown_checked(void **state)
{
	struct tp_env *e = *state;
	tp_stop(e->collector, 5000); /* the set-up's, on another store */
	snprintf(e->db, sizeof(e->db), "%s/unclean.db", e->dir);
	assert_int_equal(tp_env_start_collector(e, 0, NULL), 0);
	fill(e, "board-u", "0.5");
	kill(e->collector, SIGKILL);
	int status;
	assert_int_equal(tp_wait(e->collector, 10000, &status), 0);
	e->collector = 0;
	char args[1024], qlog[320];
	snprintf(qlog, sizeof(qlog), "%s/unclean.log", e->dir);
	snprintf(args, sizeof(args), "sessions --store %s", e->db);
	assert_int_equal(collector_cmd(args, qlog), 0);
	assert_int_equal(tp_file_count(qlog, "was not closed cleanly (its writer pid"), 1);
	assert_int_equal(tp_file_count(qlog, "board-u"), 1);
	assert_int_equal(collector_cmd(args, qlog), 0); /* still unknown: checked again */
	assert_int_equal(tp_file_count(qlog, "was not closed cleanly"), 2);
	/* a collector opens it (checking it) and stops cleanly: the read commands check no more */
	assert_int_equal(tp_env_start_collector(e, 0, NULL), 0);
	tp_stop(e->collector, 5000);
	e->collector = 0;
	assert_int_equal(collector_cmd(args, qlog), 0);
	assert_int_equal(tp_file_count(qlog, "was not closed cleanly"), 2);
	assert_int_equal(tp_file_count(qlog, "board-u"), 3);
	snprintf(args, sizeof(args), "check --store %s", e->db);
	assert_int_equal(collector_cmd(args, qlog), 0);
	assert_int_equal(tp_file_count(qlog, "no damage found (integrity_check"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_store_integrity_damaged_store_refused_then_recovered, setup,
					    tp_env_free),
	    cmocka_unit_test_setup_teardown(test_store_integrity_damage_while_running_loses_nothing, setup,
					    tp_env_free),
	    cmocka_unit_test_setup_teardown(test_store_integrity_unclean_shutdown_checked, setup,
					    tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
