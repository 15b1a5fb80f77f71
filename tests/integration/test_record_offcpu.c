/* collector report --offcpu (issue 39, 7): a program that spins and sleeps in
 * turn (tests/workloads/halfsleep.c: half of its time asleep on an idle
 * machine) is recorded by the bpf back end; the view's off-CPU share of the
 * program agrees with what the program measured itself (1 - CPU time / wall
 * time: on a loaded machine the time it waited for a CPU is off-CPU too) within
 * 5 points, and its on-CPU time with its CPU time within 10 %; `collector
 * flame --offcpu` shows the same share as the program's [off-CPU] frames. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testproc.h"

static void test_record_offcpu_half_sleeping_program(void **state)
{
	struct tp_env *e = *state;
	char agent[512], prog[512], coll[512], rlog[300];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("workloads/halfsleep", prog, sizeof(prog));
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(e, "offcpu.json", rlog, sizeof(rlog));
	char *argv[] = {agent, "record", "--collector", e->coll, "--spool", e->spool, "--agent-id", "offcpu", "-F", "99",
			"-I", "250", "--backend", "bpf", "--", prog, "2", "20", NULL};
	int status;
	pid_t pid = tp_spawn(argv, e->alog);
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	char *log = tp_slurp(e->alog);
	assert_non_null(log);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		bool skip_it = strstr(log, "run as root") || strstr(log, "not compiled in") || strstr(log, "bpf");
		tp_dump_file(e->alog);
		free(log);
		if (skip_it) {
			print_message("skipped: the bpf back end is not available here (see the agent's log above)\n");
			skip();
		}
		fail_msg("agent record --backend bpf failed (status 0x%x)", status);
	}
	double wall = 0, cpu = 0;
	const char *p = strstr(log, "halfsleep: wall ");
	assert_non_null(p);
	assert_int_equal(sscanf(p, "halfsleep: wall %lf s cpu %lf s", &wall, &cpu), 2);
	free(log);
	int64_t sid = tp_db_int(e->db, "SELECT MAX(id) FROM sessions WHERE agent_id='offcpu'");
	assert_true(sid > 0);
	char sidbuf[32];
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rep[] = {coll, "report", "--store", e->db, "--session", sidbuf, "--offcpu", "--json", NULL};
	pid = tp_spawn(rep, rlog);
	assert_int_equal(tp_wait(pid, 30000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *out = tp_slurp(rlog);
	assert_non_null(out);
	/* the program's process row: "comm":"halfsleep" with tid 0 */
	const char *row = strstr(out, "\"tid\":0,\"comm\":\"halfsleep\"");
	if (!row)
		fail_msg("no process row of halfsleep in report --offcpu:\n%.2000s", out);
	unsigned long long on_ns = 0, off_ns = 0;
	const char *q = strstr(row, "\"on_cpu_ns\":");
	assert_non_null(q);
	assert_int_equal(sscanf(q, "\"on_cpu_ns\":%llu,\"off_cpu_ns\":%llu", &on_ns, &off_ns), 2);
	double view = 100.0 * (double)off_ns / (double)(on_ns + off_ns), own = 100.0 * (1.0 - cpu / wall);
	fprintf(stderr, "# halfsleep: wall %.3f s, cpu %.3f s (off %.1f %%); view: on %.3f s, off %.3f s (off %.1f %%)\n",
		wall, cpu, own, on_ns / 1e9, off_ns / 1e9, view);
	free(out);
	assert_true(view > own - 5 && view < own + 5);
	assert_true(on_ns / 1e9 > cpu * 0.9 && on_ns / 1e9 < cpu * 1.1);
	/* collector flame --offcpu: the program's wall time, [off-CPU] beside its sampled functions */
	char svg[300];
	tp_env_path(e, "offcpu.svg", svg, sizeof(svg));
	char *fl[] = {coll, "flame", "--store", e->db, "--session", sidbuf, "--comm", "halfsleep", "--offcpu",
		      "-o", svg, NULL};
	pid = tp_spawn(fl, rlog);
	assert_int_equal(tp_wait(pid, 30000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	out = tp_slurp(svg);
	assert_non_null(out);
	double flame_off = 0, sh;
	unsigned long long ms, spins = 0;
	for (const char *t = out; (t = strstr(t, "<title>[off-CPU]: ")); t++) /* "[off-CPU]: N samples, P%" */
		if (sscanf(t, "<title>[off-CPU]: %llu samples, %lf%%", &ms, &sh) == 2)
			flame_off += sh;
	/* the on-CPU time is split over the sampled stacks (the program spins in spin_for) */
	for (const char *t = out; (t = strstr(t, "<title>spin_for (halfsleep): ")); t++)
		spins++;
	fprintf(stderr, "# flame --offcpu: [off-CPU] %.1f %% of halfsleep's wall time, %llu spin_for frame(s)\n",
		flame_off, spins);
	assert_null(strstr(out, "<title>[on-CPU]")); /* sampled: no thread without its functions */
	assert_true(spins >= 1);
	if (flame_off < own - 5 || flame_off > own + 5)
		fail_msg("flame --offcpu: [off-CPU] %.1f %%, the program measured %.1f %%:\n%.3000s", flame_off, own, out);
	free(out);
	/* the live page with offcpu=1: the same times as a wall-clock flame */
	tp_stop(e->collector, 5000);
	e->collector = 0;
	int port = 0;
	assert_int_equal(tp_env_start_collector_http(e, &port), 0);
	char *body = NULL;
	assert_int_equal(tp_http_get(port, "/profile?since=1h&agent=offcpu&offcpu=1", &body), 200);
	assert_non_null(strstr(body, "id=\"offcpu-flame\""));
	unsigned long long page_ms = 0, page_off = 0;
	const char *d = strstr(body, "id=\"offcpu-total\" data-ms=\"");
	assert_non_null(d);
	assert_int_equal(sscanf(d, "id=\"offcpu-total\" data-ms=\"%llu", &page_ms), 1);
	for (const char *t = body; (t = strstr(t, "[\"[off-CPU]\",")); t++) { /* [name, module, total, ...] */
		const char *c = strchr(t + 14, ',');
		if (c)
			page_off += strtoull(c + 1, NULL, 10);
	}
	fprintf(stderr, "# /profile?offcpu=1: %llu ms, [off-CPU] %llu ms; halfsleep off %.0f ms\n", page_ms, page_off,
		off_ns / 1e6);
	/* the session's tasks are the program's: the page's off-CPU share is the program's own */
	assert_true(page_off + 2 >= (unsigned long long)(off_ns / 1e6));
	assert_true(page_ms > 0);
	double page_share = 100.0 * (double)page_off / (double)page_ms;
	if (page_share < own - 5 || page_share > own + 5)
		fail_msg("/profile?offcpu=1: [off-CPU] %.1f %%, the program measured %.1f %%", page_share, own);
	free(body);
}

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "offcpu", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_offcpu_half_sleeping_program, setup, tp_env_free),
	};
	return cmocka_run_group_tests_name("record_offcpu", tests, NULL, NULL);
}
