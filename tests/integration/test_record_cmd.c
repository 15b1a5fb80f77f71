/* agent record end to end: a real collector, the real agent sampling the busy
 * workload with each back end; the stored samples match HZ x the workload's
 * CPU time, both back ends store the same record kind, and `collector report
 * --top` names busy's spin() as the top function. */
#include <errno.h>
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
#include <linux/bpf.h>

#include "bpf_progs.h"
#include "host_use.h"
#include "testproc.h"

#define HZ 500

struct env {
	struct tp_env t;
	char rlog[300];
};

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "record", true) < 0)
		return -1;
	struct env *e = *state;
	tp_env_path(&e->t, "report.txt", e->rlog, sizeof(e->rlog));
	return 0;
}

/* The bpf back end's run, watched (issue 43): it stored 338 and 438 of 500 samples in two make
 * checks (499-500 in eight others; the ring back end 495-499 in the same runs). Its per-CPU timer
 * events sample whatever runs when they fire, busy's share being its CPU time only as the host
 * schedules the VM's CPUs: at load 9-10 they gave 604 and 579 for busy's 1 s (the second with
 * another agent's 999 Hz system-wide bpf sampler beside it, which therefore is not what shortens
 * the count here). A short count is a failure on a quiet host (host_use.h) and a skip with the
 * figures on a busy one, naming every other perf_event BPF program seen while the agent ran
 * (listed every 100 ms; ours: the ids the agent was seen holding, /proc/PID/fdinfo). */
#define OTHERS_MAX 16
struct bpf_others {
	struct tp_bpf_prog seen[OTHERS_MAX], ours[OTHERS_MAX];
	size_t n_seen, n_ours;
	int err; /* < 0: the programs could not be listed */
	struct host_use use;
};

static bool prog_in(const struct tp_bpf_prog *v, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].id == id)
			return true;
	return false;
}

static void watch_bpf(struct bpf_others *o, pid_t agent)
{
	struct tp_bpf_prog now[OTHERS_MAX];
	int n = tp_bpf_progs(BPF_PROG_TYPE_PERF_EVENT, now, OTHERS_MAX);
	if (n < 0) {
		o->err = n;
		return;
	}
	for (int i = 0; i < n && i < OTHERS_MAX; i++) {
		if (tp_bpf_prog_held_by(agent, now[i].id)) {
			if (!prog_in(o->ours, o->n_ours, now[i].id) && o->n_ours < OTHERS_MAX)
				o->ours[o->n_ours++] = now[i];
		} else if (!prog_in(o->seen, o->n_seen, now[i].id) && o->n_seen < OTHERS_MAX) {
			o->seen[o->n_seen++] = now[i];
		}
	}
}

/* Seen and never held by our agent: another process's. */
static size_t others_list(const struct bpf_others *o, char *buf, size_t len)
{
	size_t n = 0, off = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < o->n_seen; i++) {
		if (prog_in(o->ours, o->n_ours, o->seen[i].id))
			continue;
		n++;
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%u '%s'", n > 1 ? ", " : "", o->seen[i].id,
						o->seen[i].name);
	}
	return n;
}

/* Runs agent record on busy until it has had 1 s of CPU time (not 1.5 s of wall time: under
 * load it got 0.24-0.29 s of CPU there and the cpu > 0.3 check failed; issue 43); returns the agent's exit status or -1 if skipped.
 * With o: the perf_event BPF programs on the machine are listed every 100 ms meanwhile. */
static int run_record_watched(struct env *e, const char *backend, const char *agent_id, struct bpf_others *o)
{
	char agent[512], busy[512], coll[64];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("workloads/busy", busy, sizeof(busy));
	snprintf(coll, sizeof(coll), "127.0.0.1:%d", e->t.port);
	unlink(e->t.alog);
	char *argv[] = {agent, "record", "--collector", coll, "--spool", e->t.spool, "--agent-id", (char *)agent_id,
			"-F", "500", "-I", "300", "--backend", (char *)backend, "--", busy, "-1", "1", "0", NULL};
	if (o)
		host_use_begin(&o->use);
	pid_t pid = tp_spawn(argv, e->t.alog);
	int status;
	if (o) {
		int rc = -ETIMEDOUT;
		for (int i = 0; i < 900 && rc == -ETIMEDOUT; i++) { /* 90 s, as tp_wait below */
			watch_bpf(o, pid);
			rc = tp_wait(pid, 100, &status);
		}
		assert_int_equal(rc, 0);
		host_use_end(&o->use);
	} else {
		assert_int_equal(tp_wait(pid, 90000, &status), 0);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *log = tp_slurp(e->t.alog);
		bool perm = log && (strstr(log, "run as root") || strstr(log, "not compiled in"));
		free(log);
		if (perm) {
			tp_dump_file(e->t.alog);
			return -1;
		}
		tp_dump_file(e->t.alog);
		fail_msg("agent record --backend %s failed (status 0x%x)", backend, status);
	}
	return 0;
}

static int run_record(struct env *e, const char *backend, const char *agent_id)
{
	return run_record_watched(e, backend, agent_id, NULL);
}

static double busy_cpu(struct env *e)
{
	char *log = tp_slurp(e->t.alog);
	assert_non_null(log);
	double wall = 0, cpu = -1;
	char *p = strstr(log, "busy: wall ");
	if (p)
		sscanf(p, "busy: wall %lf s cpu %lf s", &wall, &cpu);
	free(log);
	return cpu;
}

static int64_t session_of(struct env *e, const char *agent_id)
{
	return tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='%s'", agent_id);
}

/* o: the bpf back end's run, where a short count with another process's perf_event BPF program
 * on the machine is a skip naming them (the kernel skipped our program, see struct bpf_others) */
static void check_session(struct env *e, const char *agent_id, int backend, const struct bpf_others *o)
{
	double cpu = busy_cpu(e);
	int64_t sid = session_of(e, agent_id);
	assert_true(sid > 0);
	/* samples for busy's own threads (the agent also sees what runs after its exit print: allow it) */
	int64_t busy_samples = tp_db_int(e->t.db,
		"SELECT SUM(count) FROM block_keys WHERE session_id=%lld AND pid=(SELECT pid FROM map_rows"
		" WHERE session_id=%lld AND path LIKE '%%/busy' LIMIT 1)", (long long)sid, (long long)sid);
	/* samples, the agent's vdso image (one Vdso record, issue 39) and its kernel symbols, where it
	 * sees kernel addresses */
	int64_t kinds = tp_db_int(e->t.db, "SELECT COUNT(DISTINCT kind) FROM records WHERE session_id=%lld AND kind<>'heartbeat'",
				  (long long)sid);
	int64_t be = tp_db_int(e->t.db, "SELECT MIN(backend) FROM block_keys WHERE session_id=%lld", (long long)sid);
	int64_t be2 = tp_db_int(e->t.db, "SELECT MAX(backend) FROM block_keys WHERE session_id=%lld", (long long)sid);
	int64_t samples_kind = tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='samples'",
					 (long long)sid);
	fprintf(stderr, "# %s: busy cpu %.3f s -> expected %.0f samples, stored %lld; %lld samples records\n",
		agent_id, cpu, cpu * HZ, (long long)busy_samples, (long long)samples_kind);
	assert_true(cpu > 0.3);
	if (o) {
		char names[512], use[256];
		size_t others = others_list(o, names, sizeof(names));
		host_use_format(&o->use, use, sizeof(use));
		fprintf(stderr, "# %s: agent run %s; %zu other perf_event BPF program(s) meanwhile%s%s%s%s\n", agent_id, use,
			others, others ? ": " : "", names, o->err < 0 ? "; not listed: " : "", o->err < 0 ? strerror(-o->err) : "");
		if (busy_samples < 0.8 * cpu * HZ && !o->use.quiet) {
			fprintf(stderr, "# SKIP: %lld of %.0f expected samples stored on a busy host (figures above)\n",
				(long long)busy_samples, cpu * HZ);
			skip();
		}
	}
	assert_true(busy_samples >= 0.8 * cpu * HZ);
	assert_true(busy_samples <= 1.2 * cpu * HZ + 0.2 * HZ); /* + ASan's exit-time leak scan after the print */
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='vdso'",
				   (long long)sid),
			 1);
	assert_int_equal(kinds, 2 + (tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND"
						     " kind='kernel_symbols'", (long long)sid) > 0));
	assert_true(samples_kind >= 2);
	assert_int_equal(be, backend);
	assert_int_equal(be2, backend);

	/* collector report --top: spin is the top function */
	char coll[512], sidbuf[32];
	tp_bin("collector", coll, sizeof(coll));
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *argv[] = {coll, "report", "--store", e->t.db, "--session", sidbuf, "--top", "--limit", "5", NULL};
	unlink(e->rlog);
	pid_t pid = tp_spawn(argv, e->rlog);
	int status;
	assert_int_equal(tp_wait(pid, 20000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *out = tp_slurp(e->rlog);
	assert_non_null(out);
	fprintf(stderr, "%s", out);
	/* the header's total is every stored sample of the session (the store is the oracle) */
	unsigned long long top_total = 0, spin_top = 0, spin_fleet = 0;
	assert_int_equal(sscanf(out, "top functions: %llu samples of", &top_total), 1);
	assert_int_equal((long long)top_total,
			 tp_db_int(e->t.db, "SELECT SUM(count) FROM block_keys WHERE session_id=%lld", (long long)sid));
	char *first = tp_top_first_row(out);
	assert_non_null(first);
	assert_non_null(strstr(first, " spin"));
	assert_non_null(strstr(first, "busy"));
	double share;
	assert_int_equal(sscanf(first, " %lf%% %llu", &share, &spin_top), 2);
	free(out);
	/* --top and the query's function table (collector report --session N --by function) are one
	 * model (collector/query/): spin's samples are its self samples there */
	char *fleet[] = {coll, "report", "--store", e->t.db, "--session", sidbuf, "--by", "function", "--limit", "1", NULL};
	unlink(e->rlog);
	pid = tp_spawn(fleet, e->rlog);
	assert_int_equal(tp_wait(pid, 20000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	out = tp_slurp(e->rlog);
	assert_non_null(out);
	char *row = strstr(out, "function\n");
	assert_non_null(row);
	assert_non_null(strstr(row, " spin"));
	assert_int_equal(sscanf(row + strlen("function\n"), " %lf%% %llu", &share, &spin_fleet), 2);
	assert_int_equal(spin_top, spin_fleet);
	free(out);
}

static void test_record_ring_backend_busy(void **state)
{
	struct env *e = *state;
	if (run_record(e, "ring", "rec-ring") < 0)
		skip();
	check_session(e, "rec-ring", 2, NULL);
}

static void test_record_bpf_backend_busy(void **state)
{
	struct env *e = *state;
	struct bpf_others o;
	memset(&o, 0, sizeof(o));
	if (run_record_watched(e, "bpf", "rec-bpf", &o) < 0)
		skip();
	check_session(e, "rec-bpf", 1, &o);
	int64_t sid = session_of(e, "rec-bpf");
	int64_t tt = tp_db_int(e->t.db, "SELECT COUNT(*) FROM task_times WHERE session_id=%lld", (long long)sid);
	assert_true(tt > 0);
}

/* A program that lives ~100 ms exits before the agent would read its
 * /proc/PID/maps: its mappings must come from the mmap records, and its hot
 * function must still resolve by name. */
static void short_program(struct env *e, const char *backend, const char *agent_id)
{
	char agent[512], busy[512], coll_bin[512], sidbuf[32];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("workloads/busy", busy, sizeof(busy));
	tp_bin("collector", coll_bin, sizeof(coll_bin));
	unlink(e->t.alog);
	char *argv[] = {agent, "record", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", (char *)agent_id,
			"-F", "2000", "-I", "5000", "--backend", (char *)backend, "--", busy, "0.1", "1", "0", NULL};
	pid_t pid = tp_spawn(argv, e->t.alog);
	int status;
	assert_int_equal(tp_wait(pid, 30000, &status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *log = tp_slurp(e->t.alog);
		bool skip_it = log && (strstr(log, "run as root") || strstr(log, "not compiled in"));
		free(log);
		tp_dump_file(e->t.alog);
		if (skip_it)
			skip();
		fail_msg("agent record --backend %s failed (status 0x%x)", backend, status);
	}
	int64_t sid = session_of(e, agent_id);
	assert_true(sid > 0);
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rep[] = {coll_bin, "report", "--store", e->t.db, "--session", sidbuf, "--top", "--limit", "5", NULL};
	unlink(e->rlog);
	pid = tp_spawn(rep, e->rlog);
	assert_int_equal(tp_wait(pid, 20000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *out = tp_slurp(e->rlog);
	assert_non_null(out);
	fprintf(stderr, "%s", out);
	char *first = tp_top_first_row(out);
	bool named = first && strstr(first, " spin") && strstr(first, "busy");
	if (!named) {
		tp_dump_file(e->t.alog);
		free(out);
		fail_msg("the hot function of a 100 ms program is not resolved (--backend %s): see above", backend);
	}
	free(out);
}

static void test_record_ring_short_program_symbolized(void **state)
{
	short_program(*state, "ring", "rec-short-ring");
}

static void test_record_bpf_short_program_symbolized(void **state)
{
	short_program(*state, "bpf", "rec-short-bpf");
}

/* Kernel call chains (-g): dd copying /dev/zero spends its time in read(2) and
 * write(2); the samples that hit the kernel carry the kernel frames below the
 * user frames (Stack.kernel_ips), the innermost kernel frame being the
 * sample's own kernel ip (the oracle: the kernel's ip of the sample, which
 * the unwinder of either back end starts from). */
static void kernel_chains(struct env *e, const char *backend, const char *agent_id)
{
	char agent[512], coll_bin[512], sidbuf[32];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("collector", coll_bin, sizeof(coll_bin));
	unlink(e->t.alog);
	char *argv[] = {agent, "record", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", (char *)agent_id,
			"-F", "1000", "-I", "200", "-g", "--backend", (char *)backend, "--", "dd", "if=/dev/zero",
			"of=/dev/null", "bs=64k", "count=100000", NULL};
	pid_t pid = tp_spawn(argv, e->t.alog);
	int status;
	assert_int_equal(tp_wait(pid, 30000, &status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *log = tp_slurp(e->t.alog);
		bool skip_it = log && (strstr(log, "run as root") || strstr(log, "not compiled in"));
		free(log);
		tp_dump_file(e->t.alog);
		if (skip_it)
			skip();
		fail_msg("agent record -g --backend %s failed (status 0x%x)", backend, status);
	}
	int64_t sid = session_of(e, agent_id);
	assert_true(sid > 0);
	int64_t ksamples = tp_db_int(e->t.db, "SELECT COALESCE(SUM(count), 0) FROM block_keys WHERE session_id=%lld"
				     " AND kip<>0", (long long)sid);
	/* kernel samples with a chain that has kernel frames */
	static const char with_chain[] =
		"SELECT COALESCE(SUM(c.count), 0) FROM block_keys c JOIN sample_kernel_stacks k ON"
		" k.session_id = c.session_id AND k.stack_id = c.stack_id WHERE c.session_id=%lld AND c.kip<>0%s";
	int64_t kchained = tp_db_int(e->t.db, with_chain, (long long)sid, "");
	/* ... whose innermost kernel frame (little-endian u64 at the start of the blob) is the sample's kip */
	int64_t kleaf = tp_db_int(e->t.db, with_chain, (long long)sid,
				  " AND printf('%016X', c.kip) = hex(substr(k.ips, 8, 1)) || hex(substr(k.ips, 7, 1)) ||"
				  " hex(substr(k.ips, 6, 1)) || hex(substr(k.ips, 5, 1)) || hex(substr(k.ips, 4, 1)) ||"
				  " hex(substr(k.ips, 3, 1)) || hex(substr(k.ips, 2, 1)) || hex(substr(k.ips, 1, 1))");
	int64_t deep = tp_db_int(e->t.db, "SELECT COUNT(*) FROM sample_kernel_stacks WHERE session_id=%lld"
				 " AND length(ips) >= 16", (long long)sid);
	fprintf(stderr, "# %s: %lld kernel samples, %lld with kernel frames, %lld of them starting at their kip;"
		" %lld kernel chains of 2+ frames\n", backend, (long long)ksamples, (long long)kchained,
		(long long)kleaf, (long long)deep);
	assert_true(ksamples > 50);
	assert_true(kchained >= ksamples * 9 / 10); /* a walk may fail (stack map bucket taken, ...): rare */
	assert_int_equal(kleaf, kchained);
	assert_true(deep > 0);
	/* the query puts the kernel frames below dd's own (one [kernel] frame per address without kallsyms) */
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rep[] = {coll_bin, "report", "--store", e->t.db, "--session", sidbuf, "--by", "stack", "--limit", "1000",
		       "--json", NULL};
	unlink(e->rlog);
	pid = tp_spawn(rep, e->rlog);
	assert_int_equal(tp_wait(pid, 20000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *out = tp_slurp(e->rlog);
	assert_non_null(out);
	/* two kernel frames: unnamed without the agent's kallsyms, else /dev/zero's read function under its callers */
	if (!strstr(out, ";[kernel];[kernel]") && !strstr(out, ";read_zero\"") && !strstr(out, ";read_iter_zero\""))
		fail_msg("no stack with two kernel frames in the query's stacks (--backend %s):\n%.3000s", backend, out);
	free(out);
}

static void test_record_ring_kernel_call_chains(void **state)
{
	kernel_chains(*state, "ring", "rec-kchain-ring");
}

static void test_record_bpf_kernel_call_chains(void **state)
{
	kernel_chains(*state, "bpf", "rec-kchain-bpf");
}

/* Runs agent record (ring back end) on dd under agent_id; the session id. */
static int64_t record_dd(struct env *e, const char *agent_id, const char *extra_env)
{
	char agent[512];
	tp_bin("agent", agent, sizeof(agent));
	unlink(e->t.alog);
	if (extra_env)
		putenv((char *)extra_env);
	char *argv[] = {agent, "record", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", (char *)agent_id,
			"-F", "1000", "-I", "200", "--backend", "ring", "-v", "--", "dd", "if=/dev/zero", "of=/dev/null",
			"bs=64k", "count=50000", NULL};
	pid_t pid = tp_spawn(argv, e->t.alog);
	if (extra_env)
		unsetenv("PROF_AGENT_KALLSYMS");
	int status;
	assert_int_equal(tp_wait(pid, 30000, &status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tp_dump_file(e->t.alog);
		fail_msg("agent record failed (status 0x%x)", status);
	}
	return session_of(e, agent_id);
}

/* collector report --session sid --by function --json: its output; with kallsyms, collector
 * export --folded of the session with --kallsyms FILE. */
static char *functions_of(struct env *e, int64_t sid, const char *kallsyms)
{
	char coll_bin[512], sidbuf[32];
	tp_bin("collector", coll_bin, sizeof(coll_bin));
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rep[] = {coll_bin, "report", "--store", e->t.db, "--session", sidbuf, "--by", "function", "--limit", "50",
		       "--json", NULL};
	char folded[300];
	tp_env_path(&e->t, "folded.txt", folded, sizeof(folded));
	char *exp[] = {coll_bin, "export", "--store", e->t.db, "--session", sidbuf, "--folded", folded,
		       "--kallsyms", (char *)kallsyms, NULL};
	if (kallsyms)
		memcpy(rep, exp, sizeof(exp));
	unlink(e->rlog);
	pid_t pid = tp_spawn(rep, e->rlog);
	int status;
	assert_int_equal(tp_wait(pid, 20000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char *out = tp_slurp(kallsyms ? folded : e->rlog);
	assert_non_null(out);
	return out;
}

/* The name of the first row under module [kernel] that is a function (not "[kernel]"); NULL if none. */
static char *first_kernel_function(const char *json, char *buf, size_t len)
{
	for (const char *p = strstr(json, "{\"name\":\""); p; p = strstr(p + 1, "{\"name\":\"")) {
		const char *n = p + strlen("{\"name\":\""), *q = strchr(n, '"');
		if (!q || (size_t)(q - n) >= len)
			continue;
		if (strncmp(q, "\",\"module\":\"[kernel]\"", strlen("\",\"module\":\"[kernel]\"")) != 0 ||
		    strncmp(n, "[kernel]", 8) == 0)
			continue;
		memcpy(buf, n, (size_t)(q - n));
		buf[q - n] = 0;
		return buf;
	}
	return NULL;
}

/* Whether name is a text symbol of this host's /proc/kallsyms (the oracle). */
static bool in_proc_kallsyms(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	if (!f)
		return false;
	char line[600], n[512], type;
	unsigned long long a;
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx %c %511s", &a, &type, n) == 3 && strchr("tTwW", type) && strcmp(n, name) == 0;
	fclose(f);
	return found;
}

/* Kernel functions without a file from the user: the agent sends the boot's
 * /proc/kallsyms once (a marker after the ack; the next session of the same
 * boot sends a reference), the collector keeps one table per (agent, boot),
 * and the query names kernel frames from it; --kallsyms FILE overrides it;
 * an agent that sees no addresses says so in one line and sends nothing. */
static void test_record_kernel_functions_from_the_agent(void **state)
{
	struct env *e = *state;
	int64_t s1 = record_dd(e, "rec-ksyms", NULL);
	assert_true(s1 > 0);
	int64_t chunks = tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='kernel_symbols'",
				   (long long)s1);
	if (chunks == 0) {
		char *log = tp_slurp(e->t.alog);
		bool no_addr = log && strstr(log, "kernel functions not sent");
		free(log);
		if (no_addr) {
			fprintf(stderr, "skipped: /proc/kallsyms shows no addresses to the agent here\n");
			skip();
		}
		tp_dump_file(e->t.alog);
		fail_msg("the agent sent no kernel symbols");
	}
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM kernel_symbols WHERE agent_id='rec-ksyms'"), chunks);
	int64_t bytes = tp_db_int(e->t.db, "SELECT SUM(length(data)) FROM kernel_symbols WHERE agent_id='rec-ksyms'");
	/* the marker of this boot in the spool directory */
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "ls -a %s | grep -q '^.kernel-symbols.*rec-ksyms@'", e->t.spool);
	assert_int_equal(system(cmd), 0);
	char buf[512];
	char *out = functions_of(e, s1, NULL);
	char *fn = first_kernel_function(out, buf, sizeof(buf));
	if (!fn)
		fail_msg("no kernel function named in session %lld:\n%.3000s", (long long)s1, out);
	assert_true(in_proc_kallsyms(fn));
	free(out);

	/* a later session of the same boot: a reference record, the table kept once, its frames named */
	int64_t s2 = record_dd(e, "rec-ksyms", NULL);
	assert_true(s2 > s1);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='kernel_symbols'",
				   (long long)s2),
			 1);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM kernel_symbols WHERE agent_id='rec-ksyms'"), chunks);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(DISTINCT kernel_boot_id) FROM session_kernels WHERE"
				      " session_id IN (%lld, %lld)", (long long)s1, (long long)s2),
			 1);
	out = functions_of(e, s2, NULL);
	fn = first_kernel_function(out, buf, sizeof(buf));
	if (!fn)
		fail_msg("no kernel function named in the reference session %lld:\n%.3000s", (long long)s2, out);
	assert_true(in_proc_kallsyms(fn));
	free(out);
	fprintf(stderr, "# kernel symbols: %lld records, %lld bytes stored once; top kernel function %s\n",
		(long long)chunks, (long long)bytes, buf);

	/* --kallsyms FILE overrides the agent's table: the same addresses under other names */
	char ovr[300];
	tp_env_path(&e->t, "kallsyms.ovr", ovr, sizeof(ovr));
	snprintf(cmd, sizeof(cmd), "awk '$2 ~ /^[tTwW]$/ {print $1, $2, \"ovr_\" $3}' /proc/kallsyms > %s", ovr);
	assert_int_equal(system(cmd), 0);
	out = functions_of(e, s2, ovr);
	if (!strstr(out, ";ovr_"))
		fail_msg("--kallsyms did not override the agent's table:\n%.3000s", out);
	snprintf(buf, sizeof(buf), ";%s ", fn);
	if (strstr(out, buf))
		fail_msg("a kernel frame still has the agent's name with --kallsyms:\n%.3000s", out);
	free(out);
	/* collector report takes the symbol options its help lists (issue 39: it refused them) */
	{
		char coll_bin[512], sidbuf[32];
		tp_bin("collector", coll_bin, sizeof(coll_bin));
		snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)s2);
		char *rep[] = {coll_bin, "report", "--store", e->t.db, "--session", sidbuf, "--top", "--limit", "50",
			       "--kallsyms", ovr, "--debug-dir", e->t.dir, NULL};
		unlink(e->rlog);
		int status;
		pid_t pid = tp_spawn(rep, e->rlog);
		assert_int_equal(tp_wait(pid, 20000, &status), 0);
		out = tp_slurp(e->rlog);
		assert_non_null(out);
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(out, " ovr_"))
			fail_msg("report --top --kallsyms --debug-dir (status 0x%x):\n%.3000s", status, out);
		free(out);
	}

	/* an agent that sees no kernel addresses (kptr_restrict) says so and sends none */
	char zero[300], envs[400];
	tp_env_path(&e->t, "kallsyms.zero", zero, sizeof(zero));
	FILE *f = fopen(zero, "w");
	assert_non_null(f);
	fprintf(f, "0000000000000000 T _stext\n0000000000000000 t do_one_initcall\n");
	fclose(f);
	snprintf(envs, sizeof(envs), "PROF_AGENT_KALLSYMS=%s", zero);
	int64_t s3 = record_dd(e, "rec-ksyms-hidden", envs);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='kernel_symbols'",
				   (long long)s3),
			 0);
	assert_int_equal(tp_file_count(e->t.alog, "kernel functions not sent"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "shows no addresses"), 1);
	out = functions_of(e, s3, NULL);
	assert_null(first_kernel_function(out, buf, sizeof(buf))); /* its kernel frames stay [kernel] */
	free(out);
}

/* The store's identity, as its collector wrote it (16 hex digits; "" if none). */
static void store_id_of(const char *db, char *out, size_t len)
{
	char cmd[600], path[320];
	snprintf(path, sizeof(path), "%s.id", db);
	snprintf(cmd, sizeof(cmd), "sqlite3 -readonly %s 'SELECT id FROM store_identity' > %s 2>/dev/null", db, path);
	out[0] = 0;
	if (system(cmd) != 0)
		return;
	char *s = tp_slurp(path);
	if (s)
		snprintf(out, len, "%.*s", (int)strcspn(s, "\n"), s);
	free(s);
}

/* Issue 39, 3: the collector restarted on the same address with a fresh store between
 * two sessions of one boot. The marker names the store that acked the table; the new
 * store's acks name another, so the second session sends the table again, and both
 * sessions' kernel frames are named; a third session, acked by the same store, sends a
 * reference only. */
static void test_record_kernel_functions_after_new_store(void **state)
{
	struct env *e = *state;
	int64_t s1 = record_dd(e, "rec-newstore", NULL);
	if (tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='kernel_symbols'",
		      (long long)s1) == 0) {
		char *log = tp_slurp(e->t.alog);
		bool no_addr = log && strstr(log, "kernel functions not sent");
		free(log);
		if (no_addr) {
			fprintf(stderr, "skipped: /proc/kallsyms shows no addresses to the agent here\n");
			skip();
		}
		tp_dump_file(e->t.alog);
		fail_msg("the agent sent no kernel symbols");
	}
	char id1[64], id2[64], cmd[700], buf[512];
	store_id_of(e->t.db, id1, sizeof(id1));
	assert_int_equal(strlen(id1), 16);
	snprintf(cmd, sizeof(cmd), "grep -qx 'store %s' %s/.kernel-symbols.*rec-newstore@*", id1, e->t.spool);
	assert_int_equal(system(cmd), 0);
	char *out = functions_of(e, s1, NULL);
	assert_non_null(first_kernel_function(out, buf, sizeof(buf)));
	free(out);

	/* the same address, a new store */
	int port = e->t.port;
	tp_stop(e->t.collector, 10000);
	e->t.collector = 0;
	char db1[300];
	snprintf(db1, sizeof(db1), "%s", e->t.db);
	tp_env_path(&e->t, "store2.db", e->t.db, sizeof(e->t.db));
	assert_int_equal(tp_env_start_collector(&e->t, port, NULL), 0);
	int64_t s2 = record_dd(e, "rec-newstore", NULL);
	assert_true(s2 > 0);
	store_id_of(e->t.db, id2, sizeof(id2));
	assert_int_equal(strlen(id2), 16);
	assert_string_not_equal(id1, id2);
	int64_t chunks2 = tp_db_int(e->t.db, "SELECT COUNT(*) FROM kernel_symbols WHERE agent_id='rec-newstore'");
	fprintf(stderr, "# store %s -> %s: %lld kernel-symbol chunks in the new store\n", id1, id2, (long long)chunks2);
	if (chunks2 <= 0) {
		tp_dump_file(e->t.alog);
		fail_msg("the new store got no kernel symbols");
	}
	assert_int_equal(tp_file_count(e->t.alog, "is not the one that acked"), 1);
	out = functions_of(e, s2, NULL);
	char *fn = first_kernel_function(out, buf, sizeof(buf));
	if (!fn)
		fail_msg("no kernel function named in session %lld of the new store:\n%.3000s", (long long)s2, out);
	assert_true(in_proc_kallsyms(fn));
	free(out);
	snprintf(cmd, sizeof(cmd), "grep -qx 'store %s' %s/.kernel-symbols.*rec-newstore@*", id2, e->t.spool);
	assert_int_equal(system(cmd), 0);

	/* the same store again: a reference only */
	int64_t s3 = record_dd(e, "rec-newstore", NULL);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='kernel_symbols'",
				   (long long)s3),
			 1);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM kernel_symbols WHERE agent_id='rec-newstore'"), chunks2);
	out = functions_of(e, s3, NULL);
	assert_non_null(first_kernel_function(out, buf, sizeof(buf)));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_record_ring_backend_busy, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_record_bpf_backend_busy, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_record_ring_short_program_symbolized, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_record_bpf_short_program_symbolized, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_record_ring_kernel_call_chains, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_record_bpf_kernel_call_chains, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_record_kernel_functions_from_the_agent, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_record_kernel_functions_after_new_store, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
