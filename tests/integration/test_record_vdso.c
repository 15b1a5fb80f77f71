/* The vdso symbolized (issue 39): a program that calls clock_gettime in a loop
 * (tests/workloads/clock_loop.c) is recorded; the agent sends its own vdso
 * image (getauxval(AT_SYSINFO_EHDR), the same for every process of the boot)
 * and its [vdso] mappings carry the image's build-id, so `collector report`
 * puts those samples in module [vdso] (not [unknown]) and names the vdso's
 * exported function __vdso_clock_gettime from the image's dynamic symbols. As
 * with perf (the oracle: `perf report --sort dso,sym` on this host names the
 * same function and leaves the vdso's internal helpers, which have no symbol,
 * as addresses), the helpers stay "[[vdso]]". */
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

static void test_record_vdso_clock_gettime_named(void **state)
{
	struct tp_env *e = *state;
	char agent[512], prog[512], coll[512], rlog[300];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("workloads/clock_loop", prog, sizeof(prog));
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(e, "top.txt", rlog, sizeof(rlog));
	char *argv[] = {agent, "record", "--collector", e->coll, "--spool", e->spool, "--agent-id", "vdso", "-F", "999",
			"--", prog, "10", NULL};
	int status;
	pid_t pid = tp_spawn(argv, e->alog);
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tp_dump_file(e->alog);
		fail_msg("agent record failed (status 0x%x)", status);
	}
	int64_t sid = tp_db_int(e->db, "SELECT MAX(id) FROM sessions WHERE agent_id='vdso'");
	assert_true(sid > 0);
	assert_true(tp_db_int(e->db, "SELECT COUNT(*) FROM vdso_images") >= 1);
	char sidbuf[32];
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rep[] = {coll, "report", "--store", e->db, "--session", sidbuf, "--top", "--limit", "50", NULL};
	pid = tp_spawn(rep, rlog);
	assert_int_equal(tp_wait(pid, 30000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *out = tp_slurp(rlog);
	assert_non_null(out);
	long all = tp_top_samples(out, NULL, NULL), vdso = tp_top_samples(out, "[vdso]", NULL),
	     named = tp_top_samples(out, "[vdso]", "__vdso_clock_gettime") + tp_top_samples(out, "[vdso]", "clock_gettime"),
	     unknown = tp_top_samples(out, "[unknown]", NULL);
	fprintf(stderr, "# clock_loop: %ld samples, [vdso] %ld (named __vdso_clock_gettime %ld), [unknown] %ld\n", all,
		vdso, named, unknown);
	/* without the vdso's image its samples are [unknown]: the skip looks at both */
	if ((vdso + unknown) * 10 < all) {
		char cs[64] = "?";
		FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
		if (f) {
			if (!fgets(cs, sizeof(cs), f))
				cs[0] = 0;
			fclose(f);
		}
		free(out);
		print_message("skipped: clock_gettime hardly runs in the vdso here (clock source %s): "
			      "nothing to name\n", cs);
		skip();
	}
	if (named == 0)
		fail_msg("no __vdso_clock_gettime in the report:\n%s", out);
	assert_true(unknown * 10 < all);
	free(out);
}

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "vdso", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_vdso_clock_gettime_named, setup, tp_env_free),
	};
	return cmocka_run_group_tests_name("record_vdso", tests, NULL, NULL);
}
