/* A forged ack (issue 25 item 6): between the real agent and the real
 * collector, a proxy on 127.0.0.1 (a child process) forwards both ways; on
 * the first connection, after the collector has acked 20 records, it slips an
 * Ack{60308} to the agent (which created a few hundred) and from then on
 * drops what the agent sends, closing both sides 300 ms later. An agent that
 * trusted the ack deleted the unacked records from its spool: they never
 * reached the store, yet its summary said every record was acked. The agent
 * must refuse the ack (close, reconnect, replay): every record stored once,
 * the summary true (created = acked, 0 dropped, 1 ack refused), exit 0. */
#include <errno.h>
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
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "frame.h"
#include "net.h"
#include "server/ingest.h"
#include "testproc.h"
#include "validate.h"

#define FORGED 60308u

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "forgedack", true);
}

static int connect_to(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

static bool send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* One agent connection through the proxy; forge: this is the one to lie on. */
static void proxy_pair(int agent, int upstream_port, bool forge)
{
	int up = connect_to(upstream_port);
	if (up < 0) {
		close(agent);
		return;
	}
	struct frame_decoder dec;
	frame_decoder_init(&dec, 1 << 20);
	bool forged = false;
	uint64_t forged_ns = 0;
	for (;;) {
		struct pollfd p[2] = {{.fd = agent, .events = POLLIN}, {.fd = up, .events = POLLIN}};
		if (poll(p, 2, 50) < 0 || (forged && clock_mono_ns() - forged_ns > 300000000u))
			break;
		uint8_t buf[65536];
		if (p[0].revents) { /* agent -> collector, raw; dropped once the lie is told */
			ssize_t n = recv(agent, buf, sizeof(buf), 0);
			if (n <= 0 || (!forged && !send_all(up, buf, (size_t)n)))
				break;
		}
		if (p[1].revents) { /* collector -> agent, frame by frame */
			size_t avail;
			uint8_t *dst = frame_decoder_space(&dec, &avail);
			ssize_t n = dst ? recv(up, dst, avail, 0) : -1;
			if (n <= 0)
				break;
			frame_decoder_commit(&dec, (size_t)n);
			const uint8_t *pl;
			size_t len;
			bool ok = true;
			while (ok && frame_decoder_next(&dec, &pl, &len) > 0) {
				uint8_t fr[FRAME_VARINT_MAX + 65536];
				size_t h = frame_put_varint(fr, (uint32_t)len);
				if (h + len > sizeof(fr))
					break;
				memcpy(fr + h, pl, len);
				ok = send_all(agent, fr, h + len);
				char why[160];
				Prof__Envelope *env = envelope_decode(pl, len, why, sizeof(why));
				bool tell = forge && !forged && env && env->body_case == PROF__ENVELOPE__BODY_ACK &&
					    env->ack->seq >= 20;
				if (env)
					prof__envelope__free_unpacked(env, NULL);
				if (ok && tell) {
					int n2 = ingest_pack_ack(FORGED, fr, sizeof(fr));
					ok = n2 > 0 && send_all(agent, fr, (size_t)n2);
					forged = true;
					forged_ns = clock_mono_ns();
				}
			}
			if (!ok)
				break;
		}
	}
	frame_decoder_free(&dec);
	close(agent);
	close(up);
}

/* The proxy process: listens on 127.0.0.1, one connection at a time, for at most 60 s. */
static pid_t proxy_start(int upstream_port, int *port)
{
	int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_true(lfd >= 0);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 8), 0);
	socklen_t sl = sizeof(a);
	getsockname(lfd, (struct sockaddr *)&a, &sl);
	*port = ntohs(a.sin_port);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid > 0) {
		close(lfd);
		return pid;
	}
	alarm(60);
	for (int conn = 0;; conn++) {
		int c = accept(lfd, NULL, NULL);
		if (c < 0)
			_exit(1);
		proxy_pair(c, upstream_port, conn == 0);
	}
}

static void test_forged_ack_refused_nothing_lost(void **state)
{
	struct tp_env *e = *state;
	int pport;
	pid_t proxy = proxy_start(e->port, &pport);
	char log[320];
	snprintf(log, sizeof(log), "%s/agent.log", e->dir);
	pid_t a = fl_start_agent(pport, e->spool, "forged", "10", "2", NULL, log, NULL);
	assert_true(a > 0);
	int rc = fl_wait_exit(a, 60000);
	kill(proxy, SIGKILL);
	tp_wait(proxy, 5000, &(int){0});
	if (rc != 0)
		tp_dump_file(log);
	assert_int_equal(rc, 0);
	int64_t created = fl_created(log);
	int complete = 0;
	int64_t stored = fl_records(e->db, "forged", &complete);
	fprintf(stderr, "forged: %lld created, %lld stored\n", (long long)created, (long long)stored);
	assert_true(created > 100);
	assert_int_equal(stored, created); /* every record, once */
	assert_true(complete);
	char summary[160];
	snprintf(summary, sizeof(summary), "%lld acked, 0 spooled (unacked), 0 dropped", (long long)created);
	assert_int_equal(tp_file_count(log, summary), 1); /* the summary tells the truth */
	char refused[96];
	snprintf(refused, sizeof(refused), "acked seq %u, but this agent's highest seq is", FORGED);
	assert_int_equal(tp_file_count(log, refused), 1);
	assert_int_equal(tp_file_count(log, " 1 ack(s) from the collector above this run's highest seq were refused"),
			 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_forged_ack_refused_nothing_lost, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
