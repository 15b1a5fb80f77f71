/* Field profiling queries end to end (issue 27): a real collector on
 * 127.0.0.1, two real agents (`agent record -a`, then `agent record -a -g`,
 * other agent ids), programs coming and going while they record (the busy
 * workload under two process names, fq_alpha and fq_beta; the second agent
 * on the ring back end, whose chains hold kernel frames). Then, one command
 * each, over the whole store:
 *   - the hottest processes across both agents (report --since 10m --by process),
 *     each process's samples matching its own CPU time (busy prints it) x HZ;
 *   - every --by grouping, --agent, --comm and --pid filters, --since/--until as
 *     epoch seconds and ISO-8601;
 *   - `collector sessions` counting the CPU samples;
 *   - prune --older-than between the two recordings: the first agent's rows go,
 *     the second's stay, row for row (nothing else is touched);
 *   - prune --session deletes a session whole.
 * System-wide sampling needs root: skipped with the agent's reason otherwise. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "collector_cli.h"
#include "testproc.h"

#define HZ 199

struct fleet {
	struct tp_env t;
	bool skipped;
	char why[256];
	char out[320];
	double cpu_alpha_a, cpu_alpha_b, cpu_beta_b; /* CPU seconds the programs measured */
	int pid_alpha_a;
	double t_mid; /* wall time between the two recordings, unix s */
};

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* busy's own CPU time from its log ("busy: wall X s cpu Y s"), -1 if none. */
static double busy_cpu(const char *log_path)
{
	char *log = tp_slurp(log_path);
	double wall = 0, cpu = -1;
	char *p = log ? strstr(log, "busy: wall ") : NULL;
	if (p)
		sscanf(p, "busy: wall %lf s cpu %lf s", &wall, &cpu);
	free(log);
	return cpu;
}

/* Start `agent record -a [-g]` for secs seconds under agent id. */
static pid_t start_agent(struct fleet *f, const char *id, bool callgraph, const char *secs, const char *log)
{
	char agent[512], spool[400];
	tp_bin("agent", agent, sizeof(agent));
	snprintf(spool, sizeof(spool), "%s-%s", f->t.spool, id);
	char *argv[20];
	int n = 0;
	argv[n++] = agent;
	argv[n++] = "record";
	argv[n++] = "--collector";
	argv[n++] = f->t.coll;
	argv[n++] = "--spool";
	argv[n++] = spool;
	argv[n++] = "--agent-id";
	argv[n++] = (char *)id;
	argv[n++] = "-a";
	if (callgraph) { /* the ring back end records kernel frames in the chains too */
		argv[n++] = "-g";
		argv[n++] = "--backend";
		argv[n++] = "ring";
	}
	argv[n++] = "-F";
	argv[n++] = "199";
	argv[n++] = "-I";
	argv[n++] = "500";
	argv[n++] = "--duration";
	argv[n++] = (char *)secs;
	argv[n] = NULL;
	return tp_spawn(argv, log);
}

/* Run a program under another name (a symlink: the kernel's comm is the name exec'd). */
static pid_t start_named(struct fleet *f, const char *name, const char *secs, const char *log)
{
	char rel[512], busy[PATH_MAX], link_path[400];
	tp_bin("workloads/busy", rel, sizeof(rel));
	assert_non_null(realpath(rel, busy)); /* the link must not be relative to its directory */
	tp_env_path(&f->t, name, link_path, sizeof(link_path));
	if (access(link_path, F_OK) != 0)
		assert_int_equal(symlink(busy, link_path), 0);
	char *argv[] = {link_path, (char *)secs, "1", "0", NULL};
	return tp_spawn(argv, log);
}

/* Wait for an agent; false (and the reason kept) when it cannot sample system-wide here. */
static bool agent_ok(struct fleet *f, pid_t pid, const char *log)
{
	int status;
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return true;
	char *text = tp_slurp(log);
	bool perm = text && (strstr(text, "run as root") || strstr(text, "not compiled in") ||
			     strstr(text, "perf_event_paranoid") || strstr(text, "Permission denied"));
	free(text);
	tp_dump_file(log);
	if (!perm)
		fail_msg("agent record -a failed (status 0x%x)", status);
	snprintf(f->why, sizeof(f->why), "agent record -a cannot sample system-wide here (see its log above)");
	return false;
}

/* Wait until the agent samples (its "sampling ... Hz with the ..." line, tp_wait_sampling), at most 60 s; false (the agent reaped
 * and the reason kept, as agent_ok) when it ended without sampling. Issue 43: the programs start
 * once the agent samples, not after a fixed 400 ms that its start-up under ASan outlasted on a
 * loaded machine (15 samples stored where busy's CPU time gave 45). */
static bool agent_sampling(struct fleet *f, pid_t pid, const char *log)
{
	if (tp_wait_sampling(log, 60000))
		return true;
	kill(pid, SIGINT);
	if (agent_ok(f, pid, log))
		fail_msg("agent record -a ended without sampling");
	return false;
}

/* End an agent that samples (SIGINT: it flushes its last interval and exits 0) once the programs
 * it had to see have ended: its recording spans theirs whatever the machine's load. */
static bool agent_end(struct fleet *f, pid_t pid, const char *log)
{
	kill(pid, SIGINT);
	return agent_ok(f, pid, log);
}

static void wait_ok(pid_t pid)
{
	int status;
	assert_int_equal(tp_wait(pid, 90000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static int group_setup(void **state)
{
	if (tp_env_new(state, sizeof(struct fleet), "fleet", true) < 0)
		return -1;
	struct fleet *f = *state;
	tp_env_path(&f->t, "out.txt", f->out, sizeof(f->out));
	char alog_a[320], alog_b[320], wlog1[320], wlog2[320], wlog3[320];
	tp_env_path(&f->t, "agentA.log", alog_a, sizeof(alog_a));
	tp_env_path(&f->t, "agentB.log", alog_b, sizeof(alog_b));
	tp_env_path(&f->t, "alpha1.log", wlog1, sizeof(wlog1));
	tp_env_path(&f->t, "beta.log", wlog2, sizeof(wlog2));
	tp_env_path(&f->t, "alpha2.log", wlog3, sizeof(wlog3));

	/* Agent A: -a, fq_alpha comes and goes while it samples. The programs spin for an amount of
	 * CPU time (busy -S: bounded work, its wall time is the machine's business); the agents run
	 * until the programs have ended (--duration 120 only bounds a test gone wrong). */
	pid_t a = start_agent(f, "fleetA", false, "120", alog_a);
	if (!agent_sampling(f, a, alog_a)) {
		f->skipped = true;
		return 0;
	}
	pid_t w = start_named(f, "fq_alpha", "-0.6", wlog1);
	f->pid_alpha_a = (int)w;
	wait_ok(w);
	if (!agent_end(f, a, alog_a)) {
		f->skipped = true;
		return 0;
	}
	f->cpu_alpha_a = busy_cpu(wlog1);
	tp_sleep_ms(600);
	f->t_mid = wall_now();
	tp_sleep_ms(600);

	/* Agent B: -a -g, fq_beta then fq_alpha again, each briefly. */
	pid_t b = start_agent(f, "fleetB", true, "120", alog_b);
	if (!agent_sampling(f, b, alog_b)) {
		f->skipped = true;
		return 0;
	}
	w = start_named(f, "fq_beta", "-0.3", wlog2);
	wait_ok(w);
	w = start_named(f, "fq_alpha", "-0.2", wlog3);
	wait_ok(w);
	if (!agent_end(f, b, alog_b)) {
		f->skipped = true;
		return 0;
	}
	f->cpu_beta_b = busy_cpu(wlog2);
	f->cpu_alpha_b = busy_cpu(wlog3);
	fprintf(stderr, "CPU time: fq_alpha %.3f s (agent A) + %.3f s (agent B), fq_beta %.3f s (agent B)\n",
		f->cpu_alpha_a, f->cpu_alpha_b, f->cpu_beta_b);
	assert_true(f->cpu_alpha_a > 0 && f->cpu_beta_b > 0 && f->cpu_alpha_b > 0);
	return 0;
}

static int group_teardown(void **state)
{
	return tp_env_free(state);
}

static struct fleet *fleet_of(void **state)
{
	struct fleet *f = *state;
	if (f->skipped) {
		fprintf(stderr, "skipped: %s\n", f->why);
		skip();
	}
	return f;
}

static long long total_samples(const char *json)
{
	const char *p = strstr(json, "\"samples\":");
	return p ? strtoll(p + 10, NULL, 10) : -1;
}

static int count_rows(const char *json)
{
	int n = 0;
	for (const char *p = strstr(json, "{\"name\":"); p; p = strstr(p + 1, "{\"name\":"))
		n++;
	return n;
}

/* Samples stored for the processes named comm of agent id (SQL over the tables, as an oracle). A pid
 * used again within the session (w44a): a key of record seq is the pid's process of the highest
 * incarnation declared (sample_task_incs) up to seq, else its first (sample_tasks). */
static long long stored_for(struct fleet *f, const char *agent, const char *comm)
{
	return tp_db_int(f->t.db,
			 "SELECT COALESCE(SUM(c.count), 0) FROM block_keys c JOIN sessions s ON s.id = c.session_id"
			 " WHERE s.agent_id = '%s' AND CASE WHEN EXISTS (SELECT 1 FROM sample_task_incs i WHERE"
			 " i.session_id = c.session_id AND i.pid = c.pid AND i.seq <= c.seq)"
			 " THEN (SELECT i.comm FROM sample_task_incs i WHERE i.session_id = c.session_id AND"
			 " i.pid = c.pid AND i.seq <= c.seq ORDER BY i.incarnation DESC, i.tid <> i.pid LIMIT 1) = '%s'"
			 " ELSE c.pid IN (SELECT pid FROM sample_tasks t WHERE t.session_id = c.session_id AND"
			 " t.comm = '%s') END",
			 agent, comm, comm);
}

static void assert_near_cpu(long long samples, double cpu_s, const char *what)
{
	double expect = cpu_s * HZ;
	fprintf(stderr, "%s: %lld samples, its CPU time x %d Hz = %.0f\n", what, samples, HZ, expect);
	assert_true(samples >= 0.7 * expect - 3);
	assert_true(samples <= 1.3 * expect + 3);
}

static void test_fleet_hottest_processes_across_agents(void **state)
{
	struct fleet *f = fleet_of(state);
	char *out = tp_collector(f->out, "report", "--store", f->t.db, "--since", "10m", "--by", "process", "--limit", "500",
			      NULL);
	fprintf(stderr, "%s", out);
	assert_non_null(strstr(out, "top process: "));
	assert_non_null(strstr(out, "from 2 sessions"));
	free(out);
	out = tp_collector(f->out, "report", "--store", f->t.db, "--since", "10m", "--by", "process", "--limit", "500", "--json",
			NULL);
	long long alpha = tp_report_row_field(out, "fq_alpha", "self"), beta = tp_report_row_field(out, "fq_beta", "self");
	/* Each process's samples across both agents match the CPU time it measured itself. */
	assert_near_cpu(alpha, f->cpu_alpha_a + f->cpu_alpha_b, "fq_alpha, both agents");
	assert_near_cpu(beta, f->cpu_beta_b, "fq_beta, agent B");
	assert_int_equal(tp_report_row_field(out, "fq_alpha", "total"), alpha); /* a process row: total = self */
	/* ...and what the store holds for them (SQL over the tables). */
	assert_int_equal(alpha, stored_for(f, "fleetA", "fq_alpha") + stored_for(f, "fleetB", "fq_alpha"));
	assert_int_equal(beta, stored_for(f, "fleetB", "fq_beta"));
	long long sum = 0;
	for (const char *p = strstr(out, "\"self\":"); p; p = strstr(p + 1, "\"self\":"))
		sum += strtoll(p + 7, NULL, 10);
	assert_int_equal(sum, total_samples(out)); /* the rows cover every sample */
	assert_int_equal(total_samples(out),
			 tp_db_int(f->t.db, "SELECT SUM(count) FROM block_keys"));
	free(out);
}

static void test_fleet_groupings(void **state)
{
	struct fleet *f = fleet_of(state);
	/* by agent: both agents, adding up to the whole */
	char *out = tp_collector(f->out, "report", "--store", f->t.db, "--since", "10m", "--by", "agent", "--json", NULL);
	long long a = tp_report_row_field(out, "fleetA", "self"), b = tp_report_row_field(out, "fleetB", "self");
	assert_true(a > 0 && b > 0);
	assert_int_equal(a + b, total_samples(out));
	assert_int_equal(count_rows(out), 2);
	free(out);
	/* by function, one process: busy's spin() first, resolved through its mapping */
	out = tp_collector(f->out, "report", "--store", f->t.db, "--comm", "fq_alpha", "--limit", "3", NULL);
	fprintf(stderr, "%s", out);
	char *first = tp_top_first_row(out);
	if (!first)
		fail_msg("no rows:\n%s", out);
	free(out);
	out = tp_collector(f->out, "report", "--store", f->t.db, "--comm", "fq_alpha", "--json", NULL);
	const char *row = strstr(out, "\"rows\":[{\"name\":\"spin\"");
	if (!row)
		fail_msg("spin is not the first function of fq_alpha:\n%s", out);
	assert_non_null(strstr(row, "\"module\":\"busy\",\"process\":\"fq_alpha\""));
	free(out);
	/* by module: the executable's file */
	out = tp_collector(f->out, "report", "--store", f->t.db, "--comm", "fq_beta", "--by", "module", "--json", NULL);
	assert_true(tp_report_row_field(out, "busy", "self") > 0);
	free(out);
	/* by thread: busy's one thread, named as its process */
	out = tp_collector(f->out, "report", "--store", f->t.db, "--pid", "1", "--by", "thread", "--json", NULL);
	assert_int_equal(total_samples(out), 0); /* init did not spin */
	free(out);
	char name[64], pid[16];
	snprintf(pid, sizeof(pid), "%d", f->pid_alpha_a);
	snprintf(name, sizeof(name), "fq_alpha (%d)", f->pid_alpha_a);
	out = tp_collector(f->out, "report", "--store", f->t.db, "--pid", pid, "--by", "thread", "--json", NULL);
	assert_int_equal(count_rows(out), 1);
	assert_int_equal(tp_report_row_field(out, name, "self"), total_samples(out));
	assert_int_equal(total_samples(out), stored_for(f, "fleetA", "fq_alpha"));
	free(out);
	/* by stack: agent B recorded call chains; the chains of fq_beta end in spin */
	out = tp_collector(f->out, "report", "--store", f->t.db, "--agent", "fleetB", "--comm", "fq_beta", "--by", "stack",
			"--json", NULL);
	fprintf(stderr, "%.600s\n", out);
	assert_non_null(strstr(out, "spin\",\"module\""));
	assert_true(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sample_stacks s JOIN sessions e ON e.id = s.session_id"
				       " WHERE e.agent_id = 'fleetB'") > 0);
	free(out);
	/* kernel frames below the user frames (system-wide, ring back end, as root: allowed) */
	assert_true(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sample_kernel_stacks s JOIN sessions e ON"
				       " e.id = s.session_id WHERE e.agent_id = 'fleetB'") > 0);
	out = tp_collector(f->out, "report", "--store", f->t.db, "--agent", "fleetB", "--by", "stack", "--limit", "1000", "--json",
			NULL);
	if (tp_db_int(f->t.db, "SELECT COUNT(*) FROM session_kernels k JOIN sessions e ON e.id = k.session_id"
			       " WHERE e.agent_id = 'fleetB'") == 0) {
		assert_non_null(strstr(out, ";[kernel]\",\"module\"")); /* no table from the agent: unnamed */
	} else {
		/* the agent sent its boot's kallsyms: kernel frames are named, a function row of module [kernel] */
		free(out);
		out = tp_collector(f->out, "report", "--store", f->t.db, "--agent", "fleetB", "--by", "function", "--limit", "1000",
				"--json", NULL);
		bool named = false;
		for (const char *p = strstr(out, "\"module\":\"[kernel]\""); p && !named;
		     p = strstr(p + 1, "\"module\":\"[kernel]\""))
			named = p - out > 11 && strncmp(p - 11, "\"[kernel]\",", 11) != 0;
		if (!named)
			fail_msg("no named kernel function although fleetB sent its kallsyms:\n%.3000s", out);
	}
	free(out);
}

static void test_fleet_filters(void **state)
{
	struct fleet *f = fleet_of(state);
	/* --agent: one agent's processes only */
	char *out = tp_collector(f->out, "report", "--store", f->t.db, "--agent", "fleetA", "--by", "process", "--limit",
			      "500", "--json", NULL);
	assert_int_equal(tp_report_row_field(out, "fq_beta", "self"), -1);
	assert_int_equal(tp_report_row_field(out, "fq_alpha", "self"), stored_for(f, "fleetA", "fq_alpha"));
	assert_null(strstr(out, "\"agent_id\":\"fleetB\""));
	free(out);
	/* --comm: every row of that process */
	out = tp_collector(f->out, "report", "--store", f->t.db, "--comm", "fq_beta", "--by", "agent", "--json", NULL);
	assert_int_equal(count_rows(out), 1);
	assert_int_equal(tp_report_row_field(out, "fleetB", "self"), stored_for(f, "fleetB", "fq_beta"));
	free(out);
	/* --pid and --comm select the same samples of that run */
	char pid[16];
	snprintf(pid, sizeof(pid), "%d", f->pid_alpha_a);
	out = tp_collector(f->out, "report", "--store", f->t.db, "--pid", pid, "--json", NULL);
	assert_int_equal(total_samples(out), stored_for(f, "fleetA", "fq_alpha"));
	free(out);
	/* --session lists and the other filters together */
	out = tp_collector(f->out, "report", "--store", f->t.db, "--session", "1,2", "--comm", "fq_alpha", "--by", "agent",
			"--json", NULL);
	assert_true(tp_report_row_field(out, "fleetA", "self") > 0 && tp_report_row_field(out, "fleetB", "self") > 0);
	free(out);
	/* bad values: a clear error, exit 2 */
	char bin[512];
	tp_bin("collector", bin, sizeof(bin));
	char *bad[] = {bin, "report", "--store", f->t.db, "--since", "yesterday", NULL};
	unlink(f->out);
	pid_t p = tp_spawn(bad, f->out);
	int status;
	assert_int_equal(tp_wait(p, 30000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	char *err = tp_slurp(f->out);
	assert_non_null(strstr(err, "--since wants a duration"));
	free(err);
}

static void test_fleet_time_range(void **state)
{
	struct fleet *f = fleet_of(state);
	char mid[64], iso[64], old[64];
	snprintf(mid, sizeof(mid), "%.3f", f->t_mid);
	time_t t = (time_t)f->t_mid;
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(iso + strlen(iso), sizeof(iso) - strlen(iso), ".%03dZ", (int)((f->t_mid - (double)t) * 1000));
	snprintf(old, sizeof(old), "%lld", (long long)f->t_mid - 3600);
	/* since the middle (epoch seconds): agent B only */
	char *out = tp_collector(f->out, "report", "--store", f->t.db, "--since", mid, "--by", "agent", "--json", NULL);
	assert_int_equal(count_rows(out), 1);
	assert_true(tp_report_row_field(out, "fleetB", "self") > 0);
	free(out);
	/* until the middle (ISO-8601): agent A only */
	out = tp_collector(f->out, "report", "--store", f->t.db, "--until", iso, "--by", "agent", "--json", NULL);
	assert_int_equal(count_rows(out), 1);
	assert_true(tp_report_row_field(out, "fleetA", "self") > 0);
	free(out);
	/* an hour ago for a minute: nothing */
	out = tp_collector(f->out, "report", "--store", f->t.db, "--until", old, NULL);
	assert_non_null(strstr(out, "no CPU samples match"));
	free(out);
}

static void test_fleet_sessions_count_cpu_samples(void **state)
{
	struct fleet *f = fleet_of(state);
	char *out = tp_collector(f->out, "sessions", "--store", f->t.db, "--json", NULL);
	assert_non_null(strstr(out, "{\"sessions\":[{\"id\":1,"));
	char want[96];
	long long stored = tp_db_int(f->t.db, "SELECT SUM(count) FROM block_keys WHERE session_id = 1");
	snprintf(want, sizeof(want), "\"cpu_samples\":%lld", stored);
	assert_non_null(strstr(out, want));
	free(out);
	/* collector dump --keys: the session's keys as stored, one per line, for scripts (#40: no rows to sum) */
	out = tp_collector(f->out, "dump", "--store", f->t.db, "--session", "1", "--keys", NULL);
	assert_true(strncmp(out, "# seq t_ns pid tid ip kip stack_id count\n", 40) == 0);
	long long sum = 0, keys = 0;
	for (char *line = strchr(out, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
		unsigned long long seq, ip, kip, count;
		long long t_ns;
		int pid, tid;
		unsigned stack;
		assert_int_equal(sscanf(line + 1, "%llu %lld %d %d %llu %llu %u %llu", &seq, &t_ns, &pid, &tid, &ip, &kip,
					&stack, &count),
				 8);
		sum += (long long)count;
		keys++;
	}
	assert_int_equal(sum, stored);
	assert_int_equal(keys, tp_db_int(f->t.db, "SELECT COUNT(*) FROM block_keys WHERE session_id = 1"));
	free(out);
}

static void test_fleet_prune_removes_older_only(void **state)
{
	struct fleet *f = fleet_of(state);
	long long b_rows = tp_db_int(f->t.db, "SELECT COUNT(*) FROM block_keys WHERE session_id = 2");
	long long b_iv = tp_db_int(f->t.db, "SELECT COUNT(*) FROM sample_intervals WHERE session_id = 2");
	long long b_maps = tp_db_int(f->t.db, "SELECT COUNT(*) FROM map_rows");
	assert_true(tp_db_int(f->t.db, "SELECT COUNT(*) FROM block_keys WHERE session_id = 1") > 0);
	char older[32];
	snprintf(older, sizeof(older), "%lldms", (long long)((wall_now() - f->t_mid) * 1000));
	/* --live-grace 3600: the grace (120 s by default) counts from the agents' last record, and the
	 * suites before this one can take longer than that on a loaded machine (issue 43: 157 s from
	 * the recordings to here at load 17, and session 1 went whole) */
	char *out = tp_collector(f->out, "prune", "--store", f->t.db, "--older-than", older, "--live-grace", "3600", NULL);
	fprintf(stderr, "%s", out);
	free(out);
	/* agent A's samples are older: gone; its session (seen a moment ago) stays, with its names */
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM block_keys WHERE session_id = 1"), 0);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sample_intervals WHERE session_id = 1"), 0);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sessions"), 2);
	/* agent B's: all there */
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM block_keys WHERE session_id = 2"), b_rows);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sample_intervals WHERE session_id = 2"), b_iv);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM map_rows"), b_maps);
	out = tp_collector(f->out, "report", "--store", f->t.db, "--since", "10m", "--by", "agent", "--json", NULL);
	assert_int_equal(count_rows(out), 1);
	assert_true(tp_report_row_field(out, "fleetB", "self") > 0);
	free(out);
	/* --session: a session seen within the grace is being written: refused */
	char bin[512];
	tp_bin("collector", bin, sizeof(bin));
	char *argv[] = {bin, "prune", "--store", f->t.db, "--session", "2", "--live-grace", "3600", NULL};
	unlink(f->out);
	pid_t p = tp_spawn(argv, f->out);
	int status;
	assert_int_equal(tp_wait(p, 30000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM block_keys WHERE session_id = 2"), b_rows);
	/* its agent is gone (it exited): with no grace it goes whole */
	out = tp_collector(f->out, "prune", "--store", f->t.db, "--session", "2", "--live-grace", "0", NULL);
	assert_non_null(strstr(out, "deleted session 2"));
	free(out);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sessions WHERE id = 2"), 0);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM block_keys WHERE session_id = 2"), 0);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sample_stacks WHERE session_id = 2"), 0);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sessions WHERE id = 1"), 1);
}

/* The listening collector's --retain: a recording's rows go once older than it, while its session,
 * names and mappings stay (its agent was seen a moment ago). */
static void test_fleet_retain_while_listening(void **state)
{
	struct fleet *f = fleet_of(state);
	const char *extra[] = {"--retain", "3s", NULL};
	assert_int_equal(tp_env_start_collector(&f->t, 0, extra), 0);
	char log[320];
	tp_env_path(&f->t, "agentC.log", log, sizeof(log));
	pid_t c = start_agent(f, "fleetC", false, "1.5", log);
	if (!agent_ok(f, c, log))
		fail_msg("agent C failed where A and B worked");
	long long sid = tp_db_int(f->t.db, "SELECT id FROM sessions WHERE agent_id = 'fleetC'");
	assert_true(sid > 0);
	assert_true(tp_db_int(f->t.db, "SELECT records FROM sessions WHERE id = %lld", sid) >= 2);
	long long left = -1;
	for (int i = 0; i < 100 && left != 0; i++) { /* 3 s of age + a pass a second: within 10 s */
		tp_sleep_ms(100);
		left = tp_db_int(f->t.db, "SELECT COUNT(*) FROM block_keys WHERE session_id = %lld", sid);
	}
	fprintf(stderr, "--retain 3s: %lld rows of session %lld left\n", left, sid);
	assert_int_equal(left, 0);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sample_blocks WHERE session_id = %lld", sid), 0);
	assert_int_equal(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sessions WHERE id = %lld", sid), 1);
	assert_true(tp_db_int(f->t.db, "SELECT COUNT(*) FROM map_rows WHERE session_id = %lld", sid) > 0);
	assert_true(tp_db_int(f->t.db, "SELECT COUNT(*) FROM sample_tasks WHERE session_id = %lld", sid) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fleet_hottest_processes_across_agents),
		cmocka_unit_test(test_fleet_groupings),
		cmocka_unit_test(test_fleet_filters),
		cmocka_unit_test(test_fleet_time_range),
		cmocka_unit_test(test_fleet_sessions_count_cpu_samples),
		cmocka_unit_test(test_fleet_prune_removes_older_only), /* deletes */
		cmocka_unit_test(test_fleet_retain_while_listening),   /* restarts the collector with --retain */
	};
	return cmocka_run_group_tests_name("fleet_query", tests, group_setup, group_teardown);
}
