/* Faults on loopback, each bounded in count and time and stopping by itself:
 * collector SIGKILL under load and restart, the agent's spool on a full disk,
 * a network partition (collector stopped), slowloris peers. Simulated agents
 * come from tests/lib/loadgen.c (run in a child process), real agents profile
 * /bin/sleep. FAULTS_PARTITION_S sets the partition (default 3 s; `make faults`
 * runs 30 s). */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "loadgen.h"
#include "testproc.h"

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "faults", false);
}

static void start_collector(struct tp_env *e, int port, const char *const *extra)
{
	assert_int_equal(tp_env_start_collector(e, port, extra), 0);
}

/* loadgen in a child process; the result comes back through a pipe. */
struct lg_child {
	pid_t pid;
	int fd;
};

static struct lg_child loadgen_start(int port, unsigned agents, unsigned rate, double secs, const char *prefix)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	struct lg_child c = {.pid = fork(), .fd = p[0]};
	assert_true(c.pid >= 0);
	if (c.pid == 0) {
		close(p[0]);
		struct loadgen_opts o = {.port = port, .agents = agents, .rate = rate, .seconds = secs,
					 .drain_s = 40, .prefix = prefix, .quiet = 1};
		struct loadgen_result r;
		int rc = loadgen_run(&o, &r);
		ssize_t w = write(p[1], &r, sizeof(r));
		_exit(rc == 0 && w == (ssize_t)sizeof(r) ? 0 : 1);
	}
	close(p[1]);
	return c;
}

static void loadgen_finish(struct lg_child c, struct loadgen_result *r)
{
	ssize_t n = read(c.fd, r, sizeof(*r));
	close(c.fd);
	assert_int_equal(fl_wait_exit(c.pid, 90000), 0);
	assert_int_equal(n, (ssize_t)sizeof(*r));
}

/* Every simulated record is in the store exactly once. */
static void assert_loadgen_stored(struct tp_env *e, const struct loadgen_result *r, const char *prefix)
{
	int64_t stored = tp_db_int(e->db,
				   "SELECT COUNT(*) FROM records r JOIN sessions s ON s.id = r.session_id "
				   "WHERE s.agent_id LIKE '%s-%%'",
				   prefix);
	int64_t samples = tp_db_int(e->db,
				    "SELECT COUNT(*) FROM counter_samples c JOIN sessions s ON s.id = c.session_id "
				    "WHERE s.agent_id LIKE '%s-%%'",
				    prefix);
	fprintf(stderr,
		"%s: %llu records generated, %llu acked, %lld stored, %lld sample rows, %llu connects, "
		"%llu disconnects, ack p99 %.1f ms\n",
		prefix, (unsigned long long)r->generated, (unsigned long long)r->acked, (long long)stored,
		(long long)samples, (unsigned long long)r->connects, (unsigned long long)r->disconnects, r->p99_ms);
	assert_true(r->generated > 0);
	assert_int_equal(r->acked, r->generated);	    /* everything acked in the end */
	assert_int_equal(stored, (int64_t)r->generated);   /* none lost, none twice in the ledger */
	assert_int_equal(samples, (int64_t)r->generated);  /* and no row written twice */
}

static void assert_agent_complete(struct tp_env *e, const char *id, const char *log)
{
	int complete = 0;
	int64_t n = fl_records(e->db, id, &complete);
	int64_t created = fl_created(log);
	fprintf(stderr, "%s: %lld records stored, %lld created, seqs complete: %s\n", id, (long long)n,
		(long long)created, complete ? "yes" : "no");
	assert_true(complete);
	assert_int_equal(n, created);
}

static void test_faults_collector_sigkill_under_load(void **state)
{
	struct tp_env *e = *state;
	start_collector(e, 0, NULL);
	char alog[2][320], id[2][32];
	pid_t agents[2];
	for (int i = 0; i < 2; i++) {
		snprintf(alog[i], sizeof(alog[i]), "%s/agent%d.log", e->dir, i);
		snprintf(id[i], sizeof(id[i]), "kill-board-%d", i);
		agents[i] = fl_start_agent(e->port, e->spool, id[i], "20", "6", NULL, alog[i], NULL);
	}
	struct lg_child lg = loadgen_start(e->port, 100, 20, 6, "simkill");
	tp_sleep_ms(2500);
	kill(e->collector, SIGKILL);
	int status;
	tp_wait(e->collector, 5000, &status);
	tp_sleep_ms(1000);
	start_collector(e, e->port, NULL);
	struct loadgen_result r;
	loadgen_finish(lg, &r);
	for (int i = 0; i < 2; i++) {
		int rc = fl_wait_exit(agents[i], 60000);
		if (rc != 0)
			tp_dump_file(alog[i]);
		assert_int_equal(rc, 0);
	}
	assert_true(r.disconnects >= 100); /* every simulated agent lost its connection and replayed */
	assert_loadgen_stored(e, &r, "simkill");
	for (int i = 0; i < 2; i++)
		assert_agent_complete(e, id[i], alog[i]);
}

static void test_faults_spool_disk_full(void **state)
{
	struct tp_env *e = *state;
	mkdir(e->spool, 0755);
	if (geteuid() != 0 || mount("tmpfs", e->spool, "tmpfs", 0, "size=1m") < 0) {
		fprintf(stderr, "skipped: cannot mount a small tmpfs for the spool (%s): needs root\n",
			geteuid() != 0 ? "not root" : strerror(errno));
		skip();
	}
	/* Leave ~16 KiB free (the run's saved Hello and collector take two 4 KiB pages of it): the
	 * agent's spool fills it long before its 64 MiB cap. */
	char filler[320], cmd[700];
	snprintf(filler, sizeof(filler), "%s/filler", e->spool);
	snprintf(cmd, sizeof(cmd), "dd if=/dev/zero of=%s bs=1k count=1008 2>/dev/null; true", filler);
	assert_int_equal(system(cmd), 0);
	int port = tp_free_port();
	char alog[320];
	snprintf(alog, sizeof(alog), "%s/agent.log", e->dir);
	const char *extra[] = {"--spool-max", "64", NULL};
	pid_t a = fl_start_agent(port, e->spool, "full-board", "10", "6", NULL, alog, extra);
	/* no collector yet: everything goes to the spool, which hits the full disk; wait for that
	 * (agent/spool.c's first disk-full warning), not a fixed 4.5 s that a loaded host may not fill */
	for (int i = 0; i < 300 && tp_file_count(alog, "before the cap: dropped the") < 1 && tp_alive(a); i++)
		tp_sleep_ms(50);
	assert_true(tp_alive(a)); /* still running */
	start_collector(e, port, NULL);
	int rc = fl_wait_exit(a, 60000);
	umount2(e->spool, MNT_DETACH);
	if (rc != 0)
		tp_dump_file(alog);
	assert_int_equal(rc, 0);
	int warned = tp_file_count(alog, "before the cap: dropped the");
	fprintf(stderr, "disk-full warnings: %d\n", warned);
	assert_true(warned >= 1);
	/* The newest records made it; the oldest were dropped (counted, not silently lost). */
	int complete;
	int64_t n = fl_records(e->db, "full-board", &complete);
	int64_t created = fl_created(alog);
	int64_t hi = tp_db_int(e->db, "SELECT MAX(r.seq) FROM records r JOIN sessions s ON s.id = r.session_id "
				      "WHERE s.agent_id = 'full-board'");
	fprintf(stderr, "full-board: %lld stored of %lld created, highest seq %lld\n", (long long)n,
		(long long)created, (long long)hi);
	assert_true(n > 0 && n < created);
	assert_int_equal(hi, created);
	assert_true(tp_file_count(alog, "dropped;") >= 1);
}

static void test_faults_network_partition(void **state)
{
	struct tp_env *e = *state;
	const char *ps = getenv("FAULTS_PARTITION_S");
	int secs = ps ? atoi(ps) : 3;
	if (secs < 1 || secs > 120)
		secs = 3;
	start_collector(e, 0, NULL);
	char alog[320], dur[16];
	snprintf(alog, sizeof(alog), "%s/agent.log", e->dir);
	snprintf(dur, sizeof(dur), "%d", secs + 4);
	pid_t a = fl_start_agent(e->port, e->spool, "part-board", "20", dur, NULL, alog, NULL);
	struct lg_child lg = loadgen_start(e->port, 50, 20, secs + 4, "simpart");
	tp_sleep_ms(1500);
	fprintf(stderr, "partition: collector stopped (SIGSTOP) for %d s\n", secs);
	kill(e->collector, SIGSTOP);
	tp_sleep_ms(secs * 1000);
	kill(e->collector, SIGCONT);
	struct loadgen_result r;
	loadgen_finish(lg, &r);
	int rc = fl_wait_exit(a, 60000 + secs * 1000);
	if (rc != 0)
		tp_dump_file(alog);
	assert_int_equal(rc, 0);
	assert_loadgen_stored(e, &r, "simpart");
	assert_agent_complete(e, "part-board", alog);
	fprintf(stderr, "ack p99 across the partition: %.0f ms (max %.0f ms)\n", r.p99_ms, r.max_ms);
}

static int connect_loopback(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void test_faults_slowloris_does_not_starve(void **state)
{
	struct tp_env *e = *state;
	const char *extra[] = {"--hello-timeout", "2", NULL};
	start_collector(e, 0, extra);
	enum { NSLOW = 60 };
	int slow[NSLOW];
	for (int i = 0; i < NSLOW; i++) {
		slow[i] = connect_loopback(e->port);
		assert_true(slow[i] >= 0);
	}
	char alog[320];
	snprintf(alog, sizeof(alog), "%s/agent.log", e->dir);
	pid_t a = fl_start_agent(e->port, e->spool, "busy-board", "20", "4", NULL, alog, NULL);
	struct lg_child lg = loadgen_start(e->port, 50, 20, 4, "simslow");
	/* Half the slow peers send nothing; the other half a byte every 100 ms (a Hello that never ends). */
	for (int tick = 0; tick < 40; tick++) {
		uint8_t b = tick == 0 ? 0x40 : 0x0a; /* a 64-byte frame announced, then dribbled */
		for (int i = NSLOW / 2; i < NSLOW; i++)
			if (slow[i] >= 0 && send(slow[i], &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
				close(slow[i]);
				slow[i] = -1; /* closed by the collector */
			}
		tp_sleep_ms(100);
	}
	struct loadgen_result r;
	loadgen_finish(lg, &r);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0)
		tp_dump_file(alog);
	assert_int_equal(rc, 0);
	for (int i = 0; i < NSLOW; i++)
		if (slow[i] >= 0)
			close(slow[i]);
	assert_loadgen_stored(e, &r, "simslow");
	assert_agent_complete(e, "busy-board", alog);
	int closed = tp_file_count(e->clog, "no Hello within 2000 ms");
	fprintf(stderr, "slow peers closed by the Hello timeout: %d of %d; ack p99 %.1f ms\n", closed, NSLOW,
		r.p99_ms);
	assert_true(closed >= NSLOW - 2);
	assert_true(r.p99_ms < 2000);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_faults_collector_sigkill_under_load, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_faults_spool_disk_full, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_faults_network_partition, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_faults_slowloris_does_not_starve, setup, tp_env_free),
	};
	return cmocka_run_group_tests_name("faults", tests, NULL, NULL);
}
