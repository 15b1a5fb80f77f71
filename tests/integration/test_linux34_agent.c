/* Every agent subcommand under Linux 3.4's rules (the Arndale Octa's kernel): the agent runs
 * under build/<board>/tools/linux34 (tests/linux34/linux34.c), which answers perf_event_open,
 * the perf ioctls, every system call 3.4 did not have and the sysfs/procfs files it lacked
 * as 3.4 did (tests/lib/linux34.c, from 3.4's kernel/events/core.c and syscall tables). Each
 * subcommand must either work with what 3.4 has, or say in one line what the kernel lacks
 * and go on; and the interposer's log must show that 3.4's answers were met (a run that
 * never met them proves nothing). Against a real collector on 127.0.0.1. */
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

#include "generated/config.h"
#include "testproc.h"
#include "tp_cl.h"
#include "trace_gen.h"

struct env {
	struct tp_env t;
	char l34[512];	    /* the interposer */
	char l34log[300];   /* its log of 3.4's answers */
	const char *l34opt; /* an extra interposer option for the next run34, or NULL */
};

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "linux34", true) < 0)
		return -1;
	struct env *e = *state;
	tp_bin("tools/linux34", e->l34, sizeof(e->l34));
	tp_env_path(&e->t, "linux34.log", e->l34log, sizeof(e->l34log));
	return 0;
}

static bool have_interposer(const struct env *e)
{
	if (access(e->l34, X_OK) != 0) {
		fprintf(stderr, "skipping: %s not built (x86_64 hosts only)\n", e->l34);
		return false;
	}
	/* seccomp user notification with CONTINUE: Linux 5.5 on the host */
	char out[400];
	tp_env_path(&e->t, "probe.log", out, sizeof(out));
	char *argv[] = {(char *)e->l34, "--quiet", "--", "true", NULL};
	pid_t pid = tp_spawn(argv, out);
	int status = -1;
	if (pid <= 0 || tp_wait(pid, 10000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr,
			"skipping: linux34 cannot run here (needs seccomp user notification, Linux 5.5+):\n");
		tp_dump_file(out);
		return false;
	}
	return true;
}

/* Run `linux34 --log L -- agent ARGS...` (args NULL-terminated) to its end; the exit code. */
static int run34(struct env *e, const char *const *args, int timeout_ms)
{
	char agent[512];
	tp_bin("agent", agent, sizeof(agent));
	char *argv[48];
	size_t n = 0;
	argv[n++] = e->l34;
	argv[n++] = "--log";
	argv[n++] = e->l34log;
	if (e->l34opt)
		argv[n++] = (char *)e->l34opt;
	argv[n++] = "--";
	argv[n++] = agent;
	for (size_t i = 0; args[i] && n < 47; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	unlink(e->t.alog);
	unlink(e->l34log);
	pid_t pid = tp_spawn(argv, e->t.alog);
	assert_true(pid > 0);
	int status;
	if (tp_wait(pid, timeout_ms, &status) < 0) {
		tp_stop(pid, 2000);
		tp_dump_file(e->t.alog);
		fail_msg("agent %s under linux34: no exit within %d ms", args[0], timeout_ms);
	}
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (rc != 0 && rc != 3) {
		tp_dump_file(e->t.alog);
		tp_dump_file(e->l34log);
	}
	return rc;
}

/* The interposer's log holds needle (one of 3.4's answers). */
static void expect_34(const struct env *e, const char *needle)
{
	if (tp_file_count(e->l34log, needle) < 1) {
		tp_dump_file(e->l34log);
		fail_msg("linux34 log: no \"%s\"", needle);
	}
}

static void expect_agent(const struct env *e, const char *needle)
{
	if (tp_file_count(e->t.alog, needle) < 1) {
		tp_dump_file(e->t.alog);
		fail_msg("agent log: no \"%s\"", needle);
	}
}

static int64_t session_of(const struct env *e, const char *agent_id)
{
	return tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='%s'", agent_id);
}

static int64_t records_of(const struct env *e, int64_t sid, const char *kind)
{
	return tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='%s'",
			 (long long)sid, kind);
}

/* stat: close-on-exec refused (3.14) and the inherited group refused (4.13): one fd per
 * event, counters stored; an error names the event's own answer, not the flag's EINVAL.
 * -p PID: no pidfd_open (5.3), the process is polled. */
static void test_linux34_stat(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
	char busy[512];
	tp_bin("workloads/busy", busy, sizeof(busy));
	const char *args[] = {"stat",	    "--collector", e->t.coll, "--spool", e->t.spool,
			      "--agent-id", "l34-stat",	   "--",      busy,	 NULL};
	assert_int_equal(run34(e, args, 60000), 0);
	/* The flag is learned from the first open that works without it: before that, the
	 * cycles probe (no PMU: ENOENT without the flag too) and the inherited group (EINVAL
	 * without it too) try it; the four events' own opens no longer do. */
	int refused = tp_file_count(e->l34log, "= EINVAL: flags outside PERF_FLAG_ALL");
	assert_true(refused >= 1 && refused <= 3);
	expect_34(e, "= EINVAL: inherit with PERF_FORMAT_GROUP");
	assert_int_equal(tp_file_count(e->t.alog, "cycles: Invalid argument"), 0); /* the flag's answer */
	int64_t sid = session_of(e, "l34-stat");
	assert_true(sid > 0);
	assert_true(records_of(e, sid, "counters") > 0);
	assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM counter_samples WHERE session_id=%lld",
			      (long long)sid) > 0);

	char sl[512];
	tp_bin("workloads/sleep_loop", sl, sizeof(sl));
	char *wargv[] = {sl, "3", NULL};
	pid_t w = tp_spawn(wargv, NULL);
	assert_true(w > 0);
	char pidbuf[16];
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)w);
	const char *pargs[] = {"stat",	     "--collector", e->t.coll, "--spool", e->t.spool,
			       "--agent-id", "l34-stat-p",  "-p",      pidbuf,	  "-I",
			       "200",	     "--duration",  "1",       NULL};
	int rc = run34(e, pargs, 60000);
	tp_stop(w, 1000);
	assert_int_equal(rc, 0);
	expect_34(e, "pidfd_open = ENOSYS");
	assert_true(records_of(e, session_of(e, "l34-stat-p"), "counters") > 0);

	/* -a: per-CPU groups (no inherit: 3.4 takes PERF_FORMAT_GROUP there) */
	const char *aargs[] = {"stat",	     "--collector", e->t.coll, "--spool", e->t.spool,
			       "--agent-id", "l34-stat-a",  "-a",      "-I",	  "200",
			       "--duration", "1",	    NULL};
	assert_int_equal(run34(e, aargs, 60000), 0);
	assert_int_equal(tp_file_count(e->l34log, "inherit with PERF_FORMAT_GROUP"), 0);
	assert_true(records_of(e, session_of(e, "l34-stat-a"), "counters") > 0);
}

/* record -g: bpf() missing (3.18): the ring back end, said in one line; the dummy event
 * missing (3.12): mappings through a counting event, said; samples and their chains
 * stored (the agent never sets exclude_callchain_kernel, 3.7). */
static void test_linux34_record_callchains(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
	char busy[512];
	tp_bin("workloads/busy", busy, sizeof(busy));
	const char *args[] = {"record",	    "--collector", e->t.coll, "--spool", e->t.spool,
			      "--agent-id", "l34-record",  "-F",      "199",	 "-g",
			      "--",	    busy,	   NULL};
	assert_int_equal(run34(e, args, 60000), 0);
	expect_34(e, "PERF_COUNT_SW_DUMMY is Linux 3.12");
	expect_34(e, "= EINVAL: attr flag bits 3.4 reserves");
#ifdef CONFIG_AGENT_BPF
	/* the first thing the bpf back end misses on 3.4: BTF (5.4), then bpf() (3.18) */
	expect_34(e, "/sys/kernel/btf/vmlinux = ENOENT");
	expect_agent(e, "bpf back end unavailable (the kernel has no BTF");
#endif
	/* The ring back end asks for kernel frames too (issue 27) and never sets
	 * exclude_callchain_kernel (3.7): the chains arrive on 3.4 as they are */
	expect_agent(e, "no dummy event");
	int64_t sid = session_of(e, "l34-record");
	assert_true(sid > 0);
	assert_true(records_of(e, sid, "samples") > 0);
	assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM sample_stacks WHERE session_id=%lld", (long long)sid) > 0);

	/* -p PID of a running program: one event per thread and CPU, redirected into the CPU's
	 * ring with PERF_EVENT_IOC_SET_OUTPUT, which 3.4 has: no ioctl refused */
	char sl[512];
	tp_bin("workloads/busy", sl, sizeof(sl));
	char *wargv[] = {sl, "3", NULL};
	pid_t w = tp_spawn(wargv, NULL);
	assert_true(w > 0);
	char pidbuf[16];
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)w);
	const char *pargs[] = {"record",     "--collector",  e->t.coll,	  "--spool", e->t.spool,
			       "--agent-id", "l34-record-p", "--backend", "ring",    "-p",
			       pidbuf,	     "--duration",   "1",	  NULL};
	int rc = run34(e, pargs, 60000);
	tp_stop(w, 1000);
	assert_int_equal(rc, 0);
	assert_int_equal(tp_file_count(e->l34log, "ENOTTY"), 0);
	assert_true(records_of(e, session_of(e, "l34-record-p"), "samples") > 0);
}

/* A program of ~100 ms exits before the agent reads its /proc/PID/maps: its mappings come
 * from the mmap watch, on 3.4 the counting context-switches event (no dummy event), and its
 * hot function must resolve by name (as test_record_cmd's short program on today's kernels). */
static void test_linux34_record_short_program_symbolized(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
	char busy[512], coll_bin[512], sidbuf[32], rlog[300];
	tp_bin("workloads/busy", busy, sizeof(busy));
	tp_bin("collector", coll_bin, sizeof(coll_bin));
	const char *args[] = {"record",	    "--collector", e->t.coll, "--spool", e->t.spool,
			      "--agent-id", "l34-short",   "-F",      "2000",	 "-I",
			      "5000",	    "--backend",   "ring",    "--",	 busy,
			      "0.1",	    "1",	   "0",	      NULL};
	assert_int_equal(run34(e, args, 30000), 0);
	expect_agent(e, "no dummy event");
	int64_t sid = session_of(e, "l34-short");
	assert_true(sid > 0);
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	tp_env_path(&e->t, "report.txt", rlog, sizeof(rlog));
	char *rep[] = {coll_bin, "report", "--store", e->t.db, "--session",
		       sidbuf,	 "--top",  "--limit", "5",     NULL};
	pid_t pid = tp_spawn(rep, rlog);
	int status;
	assert_int_equal(tp_wait(pid, 20000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *out = tp_slurp(rlog);
	assert_non_null(out);
	char *first = tp_top_first_row(out);
	bool named = first && strstr(first, " spin") && strstr(first, "busy");
	if (!named) {
		fprintf(stderr, "%s", out);
		tp_dump_file(e->t.alog);
		free(out);
		fail_msg("the hot function of a 100 ms program is not resolved under 3.4's rules");
	}
	free(out);
}

/* run: OpenCL timing through the layer; the layer's process under 3.4 too. */
static void test_linux34_run_opencl(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
#ifndef CONFIG_AGENT_OPENCL
	skip();
#endif
	char mm[512];
	tp_bin("cl-workloads/cl_matmul", mm, sizeof(mm));
	const char *args[] = {"run",	 "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id",
			      "l34-run", "--",		mm,	   "128",     "4",	  NULL};
	assert_int_equal(run34(e, args, 120000), 0);
	expect_34(e, "ENOSYS: not in Linux 3.4's syscall table");
	int64_t sid = session_of(e, "l34-run");
	assert_true(sid > 0);
	assert_int_equal(tp_cl_int(e->t.db,
				   "SELECT COUNT(*) FROM cl_commands WHERE session_id=%lld AND kernel_id>0",
				   (long long)sid),
			 4);
}

/* trace: the agent's own ptrace of the program works under the personality (the
 * interposer lets the program go when the agent attaches); windows stored. */
static void test_linux34_trace(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
#ifndef CONFIG_AGENT_TRACER
	skip();
#endif
	char loop[512];
	tp_bin("workloads/trace_loop", loop, sizeof(loop));
	const char *args[] = {"trace",	    "--collector", e->t.coll,	"--spool",    e->t.spool,
			      "--agent-id", "l34-trace",   "--capture", "step",	      "--window",
			      "2000",	    "--every",	   "0.2",	"--max-duty", "50",
			      "--",	    loop,	   "2",		"3",	      NULL};
	assert_int_equal(run34(e, args, 60000), 3); /* the loop's own exit code */
	expect_agent(e, "signals 0");
	int64_t sid = session_of(e, "l34-trace");
	assert_true(sid > 0);
	int64_t w =
	    tp_db_int(e->t.db, "SELECT COUNT(*) FROM trace_windows WHERE session_id=%lld", (long long)sid);
	if (w < 1)
		tp_dump_file(e->t.alog);
	assert_true(w >= 1);
}

/* trace, replay windows: the personality is a seccomp filter on the agent and the program
 * (tests/linux34/linux34.c), but it answers as 3.4 did, which had no filters: uname() says
 * 3.4.89 and /proc/PID/status has no Seccomp line (3.8), so the agent takes its snapshots
 * (the injected clone: a call 3.4 had, which the filter lets through) and replays windows
 * from them; windows stored, the program's exit code its own. */
static void test_linux34_trace_replay_from_snapshots(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
#if !defined(CONFIG_AGENT_TRACER) || !defined(CONFIG_AGENT_TRACE_REPLAY) || !defined(__x86_64__)
	skip();
#endif
	char loop[512];
	tp_bin("workloads/trace_loop", loop, sizeof(loop));
	const char *args[] = {"trace",	    "--collector", e->t.coll, "--spool",  e->t.spool, "--agent-id",
			      "l34-replay", "--capture",   "replay",  "--window", "2000",	  "--warmup",
			      "20000",	    "--every",	   "0.2",     "--max-duty", "50",	  "--",
			      loop,	    "2",	   "3",	      NULL};
	assert_int_equal(run34(e, args, 60000), 3);
	expect_34(e, "uname() = 0: release 3.4.89");
	expect_34(e, "/status: its Seccomp lines left out");
	expect_agent(e, " replayed from a snapshot, 0 in place)");
	assert_int_equal(tp_file_count(e->t.alog, "no snapshot of thread"), 0);
	assert_int_equal(tp_file_count(e->t.alog, " 0 replayed from a snapshot"), 0);
	int64_t sid = session_of(e, "l34-replay");
	assert_true(sid > 0);
	int64_t w =
	    tp_db_int(e->t.db, "SELECT COUNT(*) FROM trace_windows WHERE session_id=%lld", (long long)sid);
	if (w < 1)
		tp_dump_file(e->t.alog);
	assert_true(w >= 1);
}

/* trace-import: a synthetic full trace, cut into windows. */
static void test_linux34_trace_import(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
#ifndef CONFIG_AGENT_TRACE_IMPORT
	skip();
#else
	size_t n = 20000;
	struct edag_insn *ins = calloc(n, sizeof(*ins));
	assert_non_null(ins);
	trace_gen(ins, n, 7);
	char path[400];
	tp_env_path(&e->t, "syn.bin", path, sizeof(path));
	assert_int_equal(trace_gen_write_bin(path, EDAG_ARCH_RISCV64, ins, n), 0);
	free(ins);
	const char *args[] = {"trace-import", "--collector", e->t.coll,	  "--spool", e->t.spool,
			      "--agent-id",   "l34-import",  "--window",  "1000",    "--tracer",
			      "test",	      "--what",	     "synthetic", path,	     NULL};
	assert_int_equal(run34(e, args, 60000), 0);
	int64_t sid = session_of(e, "l34-import");
	assert_int_equal(
	    tp_db_int(e->t.db, "SELECT COUNT(*) FROM trace_windows WHERE session_id=%lld", (long long)sid),
	    20);
#endif
}

/* profile: counters, samples, OpenCL and trace windows in one session under 3.4. */
static void test_linux34_profile(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
#ifndef CONFIG_AGENT_OPENCL
	skip();
#endif
	char mm[512];
	tp_bin("cl-workloads/cl_matmul", mm, sizeof(mm));
	const char *args[] = {"profile",    "--collector", e->t.coll, "--spool",    e->t.spool,
			      "--agent-id", "l34-profile", "--every", "0.2",	    "--window",
			      "400",	    "--warmup",	   "20000",   "--max-duty", "20",
			      "-F",	    "999",	   "--",      mm,	    "256",
			      "6",	    "cpu",	   NULL};
	assert_int_equal(run34(e, args, 180000), 0);
	expect_34(e, "PERF_COUNT_SW_DUMMY is Linux 3.12");
	int64_t sid = session_of(e, "l34-profile");
	assert_true(sid > 0);
	assert_true(records_of(e, sid, "counters") > 0);
	assert_true(records_of(e, sid, "samples") > 0);
	assert_int_equal(tp_cl_int(e->t.db,
				   "SELECT COUNT(*) FROM cl_commands WHERE session_id=%lld AND kernel_id>0",
				   (long long)sid),
			 6);
}

/* calibrate: the OpenCL device and the CPU roofline; then the memory benchmark on 3.4's
 * ARM sysfs, without CPU cache directories (3.19): measured, and the missing cache model
 * said in one line (the OpenCL runtime here, PoCL, needs those directories, hence apart). */
static void test_linux34_calibrate(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
	const char *args[] = {"calibrate",  "--collector",     e->t.coll, "--spool", e->t.spool,
			      "--agent-id", "l34-calib",       "--quick", "--reps",  "1",
			      "--only",	    "device,cpu_peak", NULL};
	assert_int_equal(run34(e, args, 120000), 0);
	expect_34(e, "ENOSYS: not in Linux 3.4's syscall table");
	int64_t sid = session_of(e, "l34-calib");
	assert_true(sid > 0);
	assert_int_equal(records_of(e, sid, "calibration"), 2);

	const char *mem[] = {"calibrate",  "--collector",   e->t.coll, "--spool", e->t.spool,
			     "--agent-id", "l34-calib-mem", "--quick", "--reps",  "1",
			     "--only",	   "mem_slots",	    NULL};
	e->l34opt = "--no-cpu-caches";
	int rc = run34(e, mem, 120000);
	e->l34opt = NULL;
	assert_int_equal(rc, 0);
	expect_34(e, "/sys/devices/system/cpu/cpu0/cache/index0");
	expect_agent(e, "no CPU caches reported");
	sid = session_of(e, "l34-calib-mem");
	assert_int_equal(records_of(e, sid, "calibration"), 1);
	assert_int_equal(
	    tp_db_int(e->t.db,
		      "SELECT COUNT(*) FROM calib_params WHERE session_id=%lld AND name LIKE 'cpu_cache_%%'",
		      (long long)sid),
	    0);
	assert_int_equal(
	    tp_db_int(e->t.db,
		      "SELECT COUNT(*) FROM calib_params WHERE session_id=%lld AND name='mem_latency_ns'",
		      (long long)sid),
	    1);
}

/* spool ls / send / drop, --features and --help. */
static void test_linux34_spool_features_help(void **state)
{
	struct env *e = *state;
	if (!have_interposer(e))
		skip();
	const char *ls[] = {"spool", "ls", "--spool", e->t.spool, NULL};
	assert_int_equal(run34(e, ls, 30000), 0);
	const char *send[] = {"spool",	  "send",      "--collector", e->t.coll, "--spool",
			      e->t.spool, "--timeout", "1",	      NULL};
	assert_int_equal(run34(e, send, 30000), 0);
	const char *drop[] = {"spool", "drop", "--spool", e->t.spool, NULL};
	assert_int_equal(run34(e, drop, 30000), 0);
	const char *feat[] = {"--features", NULL};
	assert_int_equal(run34(e, feat, 30000), 0);
	expect_agent(e, "running kernel:");
	expect_34(e, "call(s) answered as Linux 3.4");
	const char *help[] = {"--help", NULL};
	assert_int_equal(run34(e, help, 30000), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linux34_stat),
		cmocka_unit_test(test_linux34_record_callchains),
		cmocka_unit_test(test_linux34_record_short_program_symbolized),
		cmocka_unit_test(test_linux34_run_opencl),
		cmocka_unit_test(test_linux34_trace),
		cmocka_unit_test(test_linux34_trace_replay_from_snapshots),
		cmocka_unit_test(test_linux34_trace_import),
		cmocka_unit_test(test_linux34_profile),
		cmocka_unit_test(test_linux34_calibrate),
		cmocka_unit_test(test_linux34_spool_features_help),
	};
	return cmocka_run_group_tests(tests, setup, tp_env_free);
}
