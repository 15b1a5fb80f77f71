/* Attacks on a collector on loopback without a token (issue #18), each bounded
 * in count and time, against the real collector and a real agent:
 *  - a peer that knows a live session's (agent_id, boot_id) sends a Hello and a
 *    heartbeat with seq 1000000, while the agent is connected and again after a
 *    collector restart while the agent is away: every record the agent created
 *    ends up stored exactly once, the forged seq nowhere;
 *  - 2,000 half-sent HTTP requests: /sessions.json still answers 200 within 1 s
 *    once the request deadline (--http-timeout 1) has passed;
 *  - 1,100 connections from one address that never send a Hello: a real agent
 *    connecting after them still stores every record;
 *  - store files 0600, an emptied store refused unless --init, a token file
 *    others can read refused.
 * Issue #25, scaled down (the same mechanisms; bench/attacks.c runs them full size):
 *  - Hellos with distinct agent ids and no record from 4 addresses: they leave no
 *    session rows and a real agent connecting after them gets every record acked;
 *  - connections each holding most of a 1 MiB frame: the collector's frame memory
 *    stays within --max-frame-memory and a real agent is still served;
 *  - a sustained pre-Hello flood from 3 addresses: new agents from another address
 *    are all admitted while it lasts;
 *  - --http on a non-loopback address without a token is refused before binding. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "attack.h"
#include "fleet.h"
#include "frame.h"
#include "loadgen.h"
#include "net.h"
#include "testproc.h"
#include "validate.h"

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "attacks", false);
}

static void start_collector(struct tp_env *e, int port, const char *const *extra)
{
	assert_int_equal(tp_env_start_collector(e, port, extra), 0);
}

/* Non-blocking connect to 127.0.0.1:port; -1 on failure. */
static int connect_nb(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Wait until fd is connected (writable), at most ms. */
static int wait_connected(int fd, int ms)
{
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	if (poll(&p, 1, ms) != 1)
		return -ETIMEDOUT;
	int err = 0;
	socklen_t sl = sizeof(err);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl);
	return -err;
}

static int connect_blocking(int port)
{
	int fd = connect_nb(port);
	assert_true(fd >= 0);
	assert_int_equal(wait_connected(fd, 5000), 0);
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void send_env(int fd, const Prof__Envelope *env)
{
	uint8_t *f;
	size_t len;
	assert_int_equal(frame_encode(env, 1 << 16, &f, &len), 0);
	assert_int_equal(send(fd, f, len, MSG_NOSIGNAL), (ssize_t)len);
	free(f);
}

static void send_hello(int fd, const char *agent, uint64_t boot)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)agent;
	h.boot_id = boot;
	h.board = "host";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	send_env(fd, &env);
}

static void send_heartbeat(int fd, uint64_t seq)
{
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	send_env(fd, &env);
}

/* Next envelope from the collector (blocking, 5 s), NULL at EOF. */
static Prof__Envelope *next_env(int fd, struct frame_decoder *d)
{
	for (;;) {
		const uint8_t *p;
		size_t len;
		if (frame_decoder_next(d, &p, &len) == 1) {
			char err[160];
			Prof__Envelope *env = envelope_decode(p, len, err, sizeof(err));
			assert_non_null(env);
			return env;
		}
		size_t avail;
		uint8_t *dst = frame_decoder_space(d, &avail);
		assert_non_null(dst);
		ssize_t n = recv(fd, dst, avail, 0);
		if (n <= 0) {
			assert_true(n == 0 || errno == ECONNRESET); /* not a timeout */
			return NULL;
		}
		frame_decoder_commit(d, (size_t)n);
	}
}

/* An Error containing text, then EOF. */
static void expect_error(int fd, struct frame_decoder *d, const char *text)
{
	Prof__Envelope *env = next_env(fd, d);
	assert_non_null(env);
	if (env->body_case != PROF__ENVELOPE__BODY_ERROR)
		fail_msg("want an Error, got body %d", (int)env->body_case);
	fprintf(stderr, "collector said: %s\n", env->error->message);
	if (!strstr(env->error->message, text))
		fail_msg("error '%s' does not contain '%s'", env->error->message, text);
	prof__envelope__free_unpacked(env, NULL);
	assert_null(next_env(fd, d));
}

static int64_t victim_records(struct tp_env *e)
{
	return tp_db_int(e->db, "SELECT COUNT(*) FROM records r JOIN sessions s ON s.id = r.session_id "
				"WHERE s.agent_id = 'victim'");
}

static void test_ingest_attack_forged_seq_loses_nothing(void **state)
{
	struct tp_env *e = *state;
	start_collector(e, 0, NULL);
	e->agent = fl_start_agent(e->port, e->spool, "victim", "20", "5", NULL, e->alog, NULL);
	assert_true(e->agent > 0);
	for (int i = 0; i < 500 && victim_records(e) < 20; i++)
		tp_sleep_ms(10);
	assert_true(victim_records(e) >= 20);
	/* what `collector dump` prints and a 0644 store would have leaked */
	int64_t boot = tp_db_int(e->db, "SELECT boot_id FROM sessions WHERE agent_id = 'victim'");
	assert_true(boot != -1);

	/* 1. while the agent is connected: the Hello is refused, nothing of it is stored */
	int fd = connect_blocking(e->port);
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, 1 << 16), 0);
	send_hello(fd, "victim", (uint64_t)boot);
	send_heartbeat(fd, 1000000);
	expect_error(fd, &d, "already has a live connection");
	close(fd);
	frame_decoder_free(&d);

	/* 2. the agent away (stopped) and the collector restarted: the forger owns the session
	 * but its seq is beyond the window; the ack it gets is what is stored */
	assert_int_equal(kill(e->agent, SIGSTOP), 0);
	kill(e->collector, SIGKILL);
	int status;
	tp_wait(e->collector, 5000, &status);
	start_collector(e, e->port, NULL);
	int64_t stored =
	    tp_db_int(e->db, "SELECT MAX(r.seq) FROM records r JOIN sessions s ON s.id = r.session_id "
			     "WHERE s.agent_id = 'victim'");
	fd = connect_blocking(e->port);
	assert_int_equal(frame_decoder_init(&d, 1 << 16), 0);
	send_hello(fd, "victim", (uint64_t)boot);
	Prof__Envelope *env = next_env(fd, &d);
	assert_non_null(env);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_ACK);
	fprintf(stderr, "forger's Hello acked at seq %llu; highest stored seq %lld\n",
		(unsigned long long)env->ack->seq, (long long)stored);
	assert_int_equal((int64_t)env->ack->seq, stored);
	prof__envelope__free_unpacked(env, NULL);
	send_heartbeat(fd, 1000000);
	expect_error(fd, &d, "refused, nothing stored");
	close(fd);
	frame_decoder_free(&d);

	/* 3. the agent comes back, replays, finishes */
	assert_int_equal(kill(e->agent, SIGCONT), 0);
	int rc = fl_wait_exit(e->agent, 60000);
	if (rc != 0)
		tp_dump_file(e->alog);
	assert_int_equal(rc, 0);
	e->agent = 0;
	int complete = 0;
	int64_t n = fl_records(e->db, "victim", &complete);
	int64_t created = fl_created(e->alog);
	int64_t forged = tp_db_int(e->db, "SELECT COUNT(*) FROM records WHERE seq >= 1000000");
	fprintf(stderr,
		"victim: %lld created, %lld stored, seqs 1..N exactly once: %s, forged records: %lld\n",
		(long long)created, (long long)n, complete ? "yes" : "no", (long long)forged);
	if (!complete || n != created)
		tp_dump_file(e->clog);
	assert_true(complete);
	assert_int_equal(n, created);
	assert_int_equal(forged, 0);
	assert_true(tp_file_count(e->clog, "above the session's highest stored seq") >= 1);
}

static int http_port_free(void)
{
	return tp_free_port();
}

/* GET path on port: the status code, -1 if no answer within ms. */
static int http_get_status(int port, const char *path, int ms, double *took_ms)
{
	uint64_t t0 = clock_mono_ns();
	int fd = connect_nb(port);
	if (fd < 0 || wait_connected(fd, ms) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char req[256];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		close(fd);
		return -1;
	}
	char buf[64] = "";
	size_t got = 0;
	while (got < 12) {
		int left = ms - (int)((clock_mono_ns() - t0) / 1000000u);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, left) != 1)
			break;
		ssize_t r = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*took_ms = (double)(clock_mono_ns() - t0) / 1e6;
	int code = -1;
	if (got >= 12)
		sscanf(buf, "HTTP/1.1 %d", &code);
	return code;
}

static void test_ingest_attack_http_half_open_requests(void **state)
{
	struct tp_env *e = *state;
	enum { N = 2000 };
	assert_true(loadgen_raise_nofile(N + 256) >= N + 64);
	int hp = http_port_free();
	char http[64];
	snprintf(http, sizeof(http), "127.0.0.1:%d", hp);
	const char *extra[] = {"--http", http, "--http-timeout", "1", NULL};
	start_collector(e, 0, extra);
	static int fd[N];
	int sent = 0;
	for (int i = 0; i < N; i++) {
		fd[i] = connect_nb(hp);
		assert_true(fd[i] >= 0);
	}
	for (int i = 0; i < N; i++)
		if (wait_connected(fd[i], 5000) == 0 && send(fd[i], "GET / HT", 8, MSG_NOSIGNAL) == 8)
			sent++;
	uint64_t flood_end = clock_mono_ns();
	double took;
	int during = http_get_status(hp, "/sessions.json", 5000, &took);
	fprintf(stderr, "%d half-sent requests; /sessions.json during the flood: %d in %.0f ms\n", sent,
		during, took);
	assert_int_equal(sent, N);
	/* once the 1 s deadline has passed */
	int64_t wait_ms = 1100 - (int64_t)((clock_mono_ns() - flood_end) / 1000000u);
	if (wait_ms > 0)
		tp_sleep_ms((int)wait_ms);
	int code = http_get_status(hp, "/sessions.json", 1000, &took);
	fprintf(stderr, "/sessions.json after the deadline: %d in %.0f ms\n", code, took);
	assert_int_equal(code, 200);
	assert_true(took < 1000);
	/* every half-sent request was answered (408 at the deadline or 503 over the cap) and closed */
	int n408 = 0, n503 = 0, other = 0;
	for (int i = 0; i < N; i++) {
		char buf[64] = "";
		size_t got = 0;
		for (;;) {
			struct pollfd p = {.fd = fd[i], .events = POLLIN};
			if (poll(&p, 1, 3000) != 1)
				break;
			ssize_t r = recv(fd[i], buf + got, sizeof(buf) - 1 - got, 0);
			if (r <= 0)
				break;
			got += (size_t)r;
			if (got == sizeof(buf) - 1)
				got = 12; /* keep the status line, read on to EOF */
		}
		if (strncmp(buf, "HTTP/1.1 408", 12) == 0)
			n408++;
		else if (strncmp(buf, "HTTP/1.1 503", 12) == 0)
			n503++;
		else
			other++;
		close(fd[i]);
	}
	fprintf(stderr, "half-sent requests answered: %d with 408, %d with 503, %d otherwise\n", n408, n503,
		other);
	assert_int_equal(other, 0);
	assert_true(n408 >= 1);
}

static void test_ingest_attack_prehello_flood_one_address(void **state)
{
	struct tp_env *e = *state;
	enum { N = 1100 };
	assert_true(loadgen_raise_nofile(N + 256) >= N + 64);
	start_collector(e, 0, NULL); /* --max-conns 1024 */
	static int fd[N];
	int connected = 0;
	for (int i = 0; i < N; i++) {
		fd[i] = connect_nb(e->port);
		assert_true(fd[i] >= 0);
	}
	for (int i = 0; i < N; i++)
		connected += wait_connected(fd[i], 5000) == 0;
	fprintf(stderr, "%d silent connections from 127.0.0.1\n", connected);
	assert_int_equal(connected, N);
	tp_sleep_ms(300); /* the collector has accepted them (and evicted the oldest) */
	e->agent = fl_start_agent(e->port, e->spool, "flooded", "20", "3", NULL, e->alog, NULL);
	int rc = fl_wait_exit(e->agent, 60000);
	if (rc != 0) {
		tp_dump_file(e->alog);
		tp_dump_file(e->clog);
	}
	assert_int_equal(rc, 0);
	e->agent = 0;
	for (int i = 0; i < N; i++)
		close(fd[i]);
	int complete = 0;
	int64_t n = fl_records(e->db, "flooded", &complete);
	int64_t created = fl_created(e->alog);
	int refused = tp_file_count(e->alog, "error 16:"); /* EBUSY: refused or evicted */
	fprintf(stderr, "flooded: %lld created, %lld stored, complete: %s; agent refused %d times\n",
		(long long)created, (long long)n, complete ? "yes" : "no", refused);
	assert_true(complete);
	assert_int_equal(n, created);
	assert_int_equal(refused, 0);
	assert_true(tp_file_count(e->clog, "evicted after") >= 1);
}

static int file_mode(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (int)(st.st_mode & 0777) : -1;
}

/* The files: a new store (and its WAL, SHM) is 0600, an emptied one is refused
 * unless --init, a token file others can read is refused with the fix. */
static void test_ingest_attack_store_and_token_files(void **state)
{
	struct tp_env *e = *state;
	mode_t old = umask(022);
	start_collector(e, 0, NULL);
	char wal[320], shm[320];
	snprintf(wal, sizeof(wal), "%s-wal", e->db);
	snprintf(shm, sizeof(shm), "%s-shm", e->db);
	e->agent = fl_start_agent(e->port, e->spool, "files", "20", "1", NULL, e->alog, NULL);
	assert_int_equal(fl_wait_exit(e->agent, 30000), 0);
	e->agent = 0;
	fprintf(stderr, "store modes: db %03o, wal %03o, shm %03o\n", file_mode(e->db), file_mode(wal),
		file_mode(shm));
	assert_int_equal(file_mode(e->db), 0600);
	assert_int_equal(file_mode(wal), 0600);
	assert_int_equal(file_mode(shm), 0600);
	tp_stop(e->collector, 5000);
	e->collector = 0;
	umask(old);

	char empty[320], log2[320], bin[512], tok[320];
	snprintf(empty, sizeof(empty), "%s/empty.db", e->dir);
	snprintf(log2, sizeof(log2), "%s/collector2.log", e->dir);
	snprintf(tok, sizeof(tok), "%s/token", e->dir);
	int fd = open(empty, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	tp_bin("collector", bin, sizeof(bin));
	char *argv[] = {bin, "--listen", "127.0.0.1:0", "--store", empty, NULL};
	pid_t c = tp_spawn(argv, log2);
	int status = 0;
	assert_int_equal(tp_wait(c, 10000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	assert_int_equal(tp_file_count(log2, "empty (0-byte) file, not a profiler store"), 1);
	const char *init[] = {"--init", NULL};
	int bound;
	c = tp_start_collector_args(e->dir, empty, 0, &bound, log2, init);
	assert_true(c > 0);
	tp_stop(c, 5000);

	assert_int_equal(fl_write_token(tok, 0), 0);
	assert_int_equal(chmod(tok, 0640), 0);
	char *targv[] = {bin, "--listen", "127.0.0.1:0", "--store", e->db, "--token-file", tok, NULL};
	c = tp_spawn(targv, log2);
	assert_int_equal(tp_wait(c, 10000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	char want[400];
	snprintf(want, sizeof(want), "run chmod 600 %s", tok);
	assert_int_equal(tp_file_count(log2, want), 1);
}

static const char *const atk_src[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};

/* The number in the collector's final stats line after key (e.g. "evicted before"), -1 if absent. */
static long long stat_of(const char *log, const char *key)
{
	char *s = tp_slurp(log);
	long long v = -1;
	char *p = s ? strstr(s, key) : NULL;
	while (p && p > s && p[-1] == ' ' && p - s > 1 && p[-2] >= '0' && p[-2] <= '9') {
		char *q = p - 2;
		while (q > s && q[-1] >= '0' && q[-1] <= '9')
			q--;
		v = strtoll(q, NULL, 10);
		break;
	}
	free(s);
	return v;
}

static void stop_collector(struct tp_env *e)
{
	tp_stop(e->collector, 10000);
	e->collector = 0;
}

static void test_ingest_attack_hello_squatters(void **state)
{
	struct tp_env *e = *state;
	enum { PER_ADDR = 64 };
	const char *extra[] = {"--max-conns", "64", NULL}; /* 16 unproven, 8 per address */
	start_collector(e, 0, extra);
	static int fd[4 * PER_ADDR];
	int acked = 0, n = 0;
	char id[32], why[256];
	for (int a = 0; a < 4; a++)
		for (int i = 0; i < PER_ADDR; i++) {
			snprintf(id, sizeof(id), "squatter-%d-%d", a, i);
			if (atk_hello_ack(atk_src[a], e->port, id, 1, 2000, why, sizeof(why), &fd[n]) >= 0)
				acked++;
			n++;
		}
	int open_now = 0; /* the acked ones the collector has not closed (evicted) since */
	for (int i = 0; i < n; i++) {
		struct pollfd p = {.fd = fd[i], .events = POLLIN};
		open_now += fd[i] >= 0 && poll(&p, 1, 0) == 0;
	}
	fprintf(stderr, "%d Hellos with distinct agent ids from 4 addresses: %d acked, %d of them still open\n", n,
		acked, open_now);
	assert_true(open_now >= 1 && open_now <= 16); /* the unproven share */
	tp_sleep_ms(300);
	e->agent = fl_start_agent(e->port, e->spool, "real", "50", "1", NULL, e->alog, NULL);
	int rc = fl_wait_exit(e->agent, 60000);
	e->agent = 0;
	for (int i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	int complete = 0;
	int64_t stored = fl_records(e->db, "real", &complete);
	int64_t created = fl_created(e->alog);
	int refused = tp_file_count(e->alog, "error 16:");
	int64_t rows = tp_db_int(e->db, "SELECT COUNT(*) FROM sessions");
	fprintf(stderr, "real agent: %lld created, %lld stored, complete: %s, refused %d times; session rows: %lld\n",
		(long long)created, (long long)stored, complete ? "yes" : "no", refused, (long long)rows);
	if (rc != 0 || !complete)
		tp_dump_file(e->alog);
	assert_int_equal(rc, 0);
	assert_true(complete);
	assert_true(created >= 10);
	assert_int_equal(stored, created);
	assert_int_equal(refused, 0);
	assert_int_equal(rows, 1); /* the squatters' Hellos wrote nothing */
	stop_collector(e);
	assert_true(stat_of(e->clog, "evicted before their first record") >= 1);
}

static void test_ingest_attack_partial_frames_budget(void **state)
{
	struct tp_env *e = *state;
	enum { N = 96, FRAME = 1 << 20 };
	assert_true(loadgen_raise_nofile(N + 256) >= N + 64);
	const char *extra[] = {"--max-conns", "256", "--max-frame-memory", "16", NULL};
	/* Under ASan, freed buffers (of connections closed for memory) wait in a 256 MiB
	 * quarantine instead of being reused: keep it small so that the collector's resident
	 * memory means what it does in a release build. */
	const char *asan = getenv("ASAN_OPTIONS");
	char *saved = asan ? strdup(asan) : NULL, opts[512];
	snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=4", asan ? asan : "", asan ? ":" : "");
	setenv("ASAN_OPTIONS", opts, 1);
	start_collector(e, 0, extra);
	if (saved)
		setenv("ASAN_OPTIONS", saved, 1);
	else
		unsetenv("ASAN_OPTIONS");
	free(saved);
	tp_sleep_ms(200);
	long base = tp_peak_rss_kib(e->collector);
	static int fd[N];
	char id[32], why[256];
	size_t sent = 0;
	int holding = 0;
	for (int i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "holder-%d", i);
		fd[i] = -1;
		if (atk_hello_ack(atk_src[i % 4], e->port, id, 1, 3000, why, sizeof(why), &fd[i]) < 0 ||
		    atk_send_records(fd[i], 1, 1, 3000) < 0)
			continue;
		sent += atk_partial_frame(fd[i], 2, FRAME, 1024);
		holding++;
	}
	tp_sleep_ms(500);
	long peak = tp_peak_rss_kib(e->collector);
	fprintf(stderr, "%d connections sent %zu MiB of 1 MiB frames (1 KiB short each); collector VmHWM %ld -> %ld KiB\n",
		holding, sent >> 20, base, peak);
	assert_true(holding >= N / 2);
	assert_true(sent >= (size_t)holding * (FRAME / 2));
	/* an agent is still served meanwhile */
	e->agent = fl_start_agent(e->port, e->spool, "beside", "50", "1", NULL, e->alog, NULL);
	int rc = fl_wait_exit(e->agent, 60000);
	e->agent = 0;
	int complete = 0;
	int64_t stored = fl_records(e->db, "beside", &complete);
	for (int i = 0; i < N; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	stop_collector(e);
	long long peak_kib = stat_of(e->clog, "KiB)");
	fprintf(stderr, "collector's frame memory peak: %lld KiB (--max-frame-memory 16 MiB); agent beside: %lld stored\n",
		peak_kib, (long long)stored);
	assert_int_equal(rc, 0);
	assert_true(complete && stored >= 10);
	assert_true(peak_kib > 0 && peak_kib <= 16 * 1024);
	/* the budget plus what ASan and SQLite add, far below the ~96 MiB the frames would take */
	assert_true(peak - base < 48 * 1024);
}

static void test_ingest_attack_sustained_flood_fair(void **state)
{
	struct tp_env *e = *state;
	enum { PROBES = 20 };
	assert_true(loadgen_raise_nofile(4096) >= 2048);
	start_collector(e, 0, NULL); /* --max-conns 1024: 256 unproven, 128 per address */
	struct atk_flood fl;
	assert_int_equal(atk_flood_start(&fl, e->port, atk_src, 3, 2000, 400), 0);
	uint64_t t0 = clock_mono_ns();
	tp_sleep_ms(300);
	int admitted = 0;
	double ms[PROBES];
	char why[256], id[32];
	for (int i = 0; i < PROBES; i++) {
		snprintf(id, sizeof(id), "probe-%d", i);
		double t = atk_hello_ack("127.0.0.1", e->port, id, 1, 3000, why, sizeof(why), NULL);
		if (t >= 0)
			ms[admitted++] = t;
		else
			fprintf(stderr, "probe %d not admitted: %s\n", i, why);
		tp_sleep_ms(100);
	}
	unsigned long long opened = atk_flood_stop(&fl);
	double secs = (double)(clock_mono_ns() - t0) / 1e9;
	stop_collector(e);
	long long refused = stat_of(e->clog, "refused by --max-conns");
	long long fair = stat_of(e->clog, "young ones for fairness");
	fprintf(stderr,
		"flood: %llu connections from 3 addresses in %.1f s (%.0f/s), %lld refused; new agents from "
		"127.0.0.1: %d of %d admitted, Hello ack p50 %.1f ms, max %.1f ms; %lld young flood connections "
		"evicted for them\n",
		opened, secs, (double)opened / secs, refused, admitted, PROBES, atk_quantile(ms, (size_t)admitted, 0.5),
		atk_quantile(ms, (size_t)admitted, 1), fair);
	assert_true(opened >= 1000);
	assert_true(refused >= 1); /* the flood filled its shares: the condition that refused agents before */
	assert_int_equal(admitted, PROBES);
}

static void test_ingest_attack_http_non_loopback_refused(void **state)
{
	struct tp_env *e = *state;
	int hp = tp_free_port();
	char http[64], bin[512], log[320];
	snprintf(http, sizeof(http), "0.0.0.0:%d", hp);
	snprintf(log, sizeof(log), "%s/collector-http.log", e->dir);
	tp_bin("collector", bin, sizeof(bin));
	char *argv[] = {bin, "--listen", "127.0.0.1:0", "--store", e->db, "--http", http, NULL};
	pid_t c = tp_spawn(argv, log);
	int status = 0;
	assert_int_equal(tp_wait(c, 10000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	assert_int_equal(tp_file_count(log, "is not a loopback address: serving the reports there requires --token-file"),
			 1);
	int fd = atk_connect(NULL, hp);
	assert_true(fd < 0); /* nothing ever listened there */
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_ingest_attack_forged_seq_loses_nothing, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_ingest_attack_http_half_open_requests, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_ingest_attack_prehello_flood_one_address, setup,
	    				tp_env_free),
	    cmocka_unit_test_setup_teardown(test_ingest_attack_store_and_token_files, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_ingest_attack_hello_squatters, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_ingest_attack_partial_frames_budget, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_ingest_attack_sustained_flood_fair, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_ingest_attack_http_non_loopback_refused, setup, tp_env_free),
	};
	return cmocka_run_group_tests_name("ingest_attacks", tests, NULL, NULL);
}
