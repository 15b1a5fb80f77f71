/* --idle-timeout against --max-rate (collector/server/server_limits.c, issue 25
 * item 8): a throttled connection that resumes and reads in the same loop
 * iteration as the idle sweep stamps its last receive time after the
 * iteration's clock reading; the sweep computed now - last_rx_ns below zero
 * ("nothing received for 18446744073 s") and closed an agent that was
 * sending all along. In process, real sockets on 127.0.0.1. The sweep is made
 * due in that iteration through the loop's internals (server_priv.h): in the
 * wild it coincides by chance. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "net.h"
#include "server/server.h"
#include "server/server_priv.h"
#include "srvclient.h"

#define RATE 100u
/* records over the bucket: reading pauses for up to OVER / RATE s. 2 over (20 ms) was not
 * enough on a loaded machine: reading them took longer than the bucket took to refill. */
#define OVER 50u

static int setup(void **state)
{
	return srv_fixture_open(state, (struct server_options){.max_rate = RATE, .idle_timeout_ms = 60000});
}

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void test_server_idle_sweep_after_throttle_resume(void **state)
{
	struct srv_fixture *f = *state;
	struct server *s = f->srv;
	struct client c;
	client_open(&c, s);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = "idle", .boot = 1});
	send_and_free(&c, &buf, &len);
	assert_int_equal(expect_ack(&c, s), 0);
	/* OVER records over the bucket: reading pauses for up to OVER / RATE s. */
	for (uint64_t q = 1; q <= RATE + OVER; q++)
		add_counters(&buf, &len, q);
	send_and_free(&c, &buf, &len);
	for (int i = 0; i < 200 && !s->nthrottled; i++)
		server_step(s, 10);
	assert_int_equal(s->nthrottled, 1);
	/* More records wait in the socket while it is throttled. */
	for (uint64_t q = RATE + OVER + 1; q <= RATE + OVER + 3; q++)
		add_counters(&buf, &len, q);
	send_and_free(&c, &buf, &len);
	sleep_ms(OVER * 1000 / RATE + 100); /* past the resume time */
	s->next_sweep_ns = 0; /* the idle sweep is due in the iteration that resumes the connection */
	assert_int_equal(server_step(s, 0), 0);
	struct server_stats st;
	server_get_stats(s, &st);
	assert_int_equal(st.idle_timeouts, 0);
	expect_ack_reaching(&c, s, RATE + OVER + 3); /* still connected, every record committed */
	server_get_stats(s, &st);
	assert_int_equal(st.idle_timeouts, 0);
	assert_int_equal(st.records, RATE + OVER + 3);
	client_close(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_server_idle_sweep_after_throttle_resume, setup, srv_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
