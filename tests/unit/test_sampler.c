/* CPU sampling back ends on this machine, as root: a real busy child is
 * sampled at HZ; the samples counted for it must be HZ x its CPU seconds
 * (+-20%), from both back ends, in records of the same shape; plus the pure
 * aggregation and stack interning. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "generated/config.h"
#include "loop.h"
#include "sample_agg.h"
#include "sampler.h"
#include "testproc.h"
#include "validate.h"

#define HZ 500

struct capture {
	pid_t pid;
	uint64_t target_samples, all_samples, records, lost;
	uint32_t backend;
	bool invalid;
	bool busy_mapping; /* a mapping of the busy executable was declared */
	bool busy_has_build_id;
	size_t stacks, task_times;
	uint64_t target_on_cpu_ns;
	char err[256];
};

static int capture_emit(void *ctx, Prof__Envelope *env)
{
	struct capture *c = ctx;
	env->seq = c->records + 1;
	if (envelope_validate(env, c->err, sizeof(c->err)) < 0 || env->body_case != PROF__ENVELOPE__BODY_SAMPLES) {
		c->invalid = true;
		return 0;
	}
	const Prof__Samples *s = env->samples;
	c->records++;
	c->backend = s->backend;
	c->lost += s->lost;
	for (size_t i = 0; i < s->n_count; i++) {
		c->all_samples += s->count[i];
		if (s->pid[i] == c->pid)
			c->target_samples += s->count[i];
	}
	for (size_t i = 0; i < s->n_new_mappings; i++) {
		const char *p = s->new_mappings[i]->path;
		size_t n = strlen(p);
		if (s->new_mappings[i]->pid == c->pid && n >= 5 && strcmp(p + n - 5, "/busy") == 0) {
			c->busy_mapping = true;
			c->busy_has_build_id |= s->new_mappings[i]->build_id.len > 0;
		}
	}
	c->stacks += s->n_new_stacks;
	c->task_times += s->n_task_times;
	for (size_t i = 0; i < s->n_task_times; i++)
		if (s->task_times[i]->pid == c->pid)
			c->target_on_cpu_ns += s->task_times[i]->on_cpu_ns;
	return 0;
}

/* Fork busy blocked on a pipe; it execs when a byte arrives. */
static pid_t spawn_blocked(int *release_fd, const char *secs)
{
	char busy[512];
	tp_bin("workloads/busy", busy, sizeof(busy));
	int p[2];
	if (pipe(p) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char c;
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(126);
		int devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0)
			dup2(devnull, 1);
		execl(busy, busy, secs, "1", "0", (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*release_fd = p[1];
	return pid;
}

/* Sample busy (until it has had 1 s of CPU time, so a loaded machine cannot starve the
 * accuracy check) with the given back end; returns 0, or -1 when skipped. */
static int run_backend(enum sampler_backend be, bool callgraph, struct capture *c, double *cpu_s)
{
	if (geteuid() != 0) {
		printf("# sampling needs root here (perf_event_paranoid, CAP_BPF): skipping\n");
		return -1;
	}
	memset(c, 0, sizeof(*c));
	int rel = -1;
	pid_t pid = spawn_blocked(&rel, "-1.0");
	assert_true(pid > 0);
	c->pid = pid;
	struct sampler_opts o = {
		.backend = be,
		.freq_hz = HZ,
		.callgraph = callgraph,
		.kind = PERF_TARGET_EXEC,
		.pid = pid,
		.interval_ns = 200000000ull,
		.base_ns = 0,
		.emit = capture_emit,
		.ctx = c,
	};
	struct sampler *s;
	char err[512];
	int rc = sampler_open(&s, &o, err, sizeof(err));
	if (rc < 0) {
		close(rel);
		waitpid(pid, NULL, 0);
		printf("# %s back end cannot run here: %s: skipping\n", sampler_backend_name(be), err);
		return -1;
	}
	assert_int_equal(sampler_backend(s), be);
	struct loop *l;
	assert_int_equal(loop_create(&l), 0);
	struct loop_source src;
	sampler_loop_source(s, &src);
	assert_int_equal(loop_add(l, &src), 0);
	assert_int_equal(write(rel, "x", 1), 1);
	close(rel);
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	int status = -1, steps = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		loop_step(l, 50);
		steps++;
		if (wait4(pid, &status, WNOHANG, &ru) == pid)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (t1.tv_sec - t0.tv_sec > 30) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fail_msg("busy child did not finish in 30 s");
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double wall_s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("# %d loop steps in %.2f s\n", steps, wall_s);
	/* the sampler must not make the loop spin: a step per 50 ms timeout plus the
	 * sampler's own wake-ups (a few a second), however long a loaded machine took */
	assert_true(steps < 60 + 40 * wall_s);
	sampler_flush(s, 0);
	struct sampler_stats st;
	sampler_get_stats(s, &st);
	sampler_close(s);
	loop_destroy(l);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	*cpu_s = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	printf("# %s: child cpu %.3f s, %llu samples for it (expected %.0f), %llu records, %llu lost, stacks %zu\n",
	       sampler_backend_name(be), *cpu_s, (unsigned long long)c->target_samples, *cpu_s * HZ,
	       (unsigned long long)c->records, (unsigned long long)c->lost, c->stacks);
	if (c->invalid)
		fail_msg("invalid Samples record: %s", c->err);
	return 0;
}

static void assert_accurate(const struct capture *c, double cpu_s)
{
	double expect = cpu_s * HZ;
	assert_true(cpu_s > 0.5);
	assert_true(c->target_samples >= 0.8 * expect);
	assert_true(c->target_samples <= 1.2 * expect);
	assert_true(c->records >= 2);
	assert_true(c->busy_mapping); /* the executable's mapping was declared for the collector */
	assert_true(c->busy_has_build_id);
}

static void test_sampler_ring_counts_busy_child(void **state)
{
	struct capture c;
	double cpu;
	if (run_backend(SAMPLER_RING, false, &c, &cpu) < 0)
		skip();
	assert_int_equal(c.backend, SAMPLER_RING);
	assert_accurate(&c, cpu);
}

static void test_sampler_bpf_counts_busy_child(void **state)
{
	if (!sampler_bpf_compiled()) {
		printf("# bpf back end not compiled in (CONFIG_AGENT_BPF): skipping\n");
		skip();
	}
	struct capture c;
	double cpu;
	if (run_backend(SAMPLER_BPF, false, &c, &cpu) < 0)
		skip();
	assert_int_equal(c.backend, SAMPLER_BPF);
	assert_accurate(&c, cpu);
	/* sched_switch accounting saw the child on a CPU for about its CPU time. */
	printf("# bpf: %zu task-time rows, child on-CPU %.3f s\n", c.task_times, c.target_on_cpu_ns / 1e9);
	assert_true(c.task_times > 0);
	assert_true(c.target_on_cpu_ns / 1e9 > 0.5 * cpu);
}

/* Linux >= 5.17 runs the light skeleton's loader program (in-kernel CO-RE). */
static bool kernel_at_least(int maj, int min)
{
	struct utsname u;
	int a = 0, b = 0;
	return uname(&u) == 0 && sscanf(u.release, "%d.%d", &a, &b) == 2 && (a > maj || (a == maj && b >= min));
}

/* The bpf back end loaded one way only (PROF_BPF_LOADER), with call chains. */
static void run_bpf_loader(const char *loader)
{
	if (!sampler_bpf_compiled())
		skip();
	setenv("PROF_BPF_LOADER", loader, 1);
	struct capture c;
	double cpu;
	int rc = run_backend(SAMPLER_BPF, true, &c, &cpu);
	unsetenv("PROF_BPF_LOADER");
	if (rc < 0) {
		/* the light skeleton must load on kernels that have a loader program */
		if (strcmp(loader, "light") == 0 && geteuid() == 0 && kernel_at_least(5, 17))
			fail_msg("light skeleton did not load on Linux >= 5.17");
		skip();
	}
	assert_int_equal(c.backend, SAMPLER_BPF);
	assert_accurate(&c, cpu);
	assert_true(c.stacks >= 1);
	assert_true(c.task_times > 0);
}

static void test_sampler_bpf_light_loader_counts_busy_child(void **state)
{
	run_bpf_loader("light");
}

static void test_sampler_bpf_libbpf_loader_counts_busy_child(void **state)
{
#ifndef CONFIG_AGENT_BPF_LIBBPF
	printf("# libbpf loader not compiled in (CONFIG_AGENT_BPF_LIBBPF): skipping\n");
	skip();
#endif
	run_bpf_loader("libbpf");
}

/* Without the libbpf fallback, asking for it fails and says which option it needs. */
static void test_sampler_bpf_without_libbpf_says_so(void **state)
{
#if !defined(CONFIG_AGENT_BPF) || defined(CONFIG_AGENT_BPF_LIBBPF)
	skip();
#endif
	struct capture c;
	memset(&c, 0, sizeof(c));
	struct sampler_opts o = {
	    .backend = SAMPLER_BPF,
	    .freq_hz = HZ,
	    .kind = PERF_TARGET_SYSTEM,
	    .interval_ns = 200000000ull,
	    .emit = capture_emit,
	    .ctx = &c,
	};
	struct sampler *s = NULL;
	char err[512] = "";
	setenv("PROF_BPF_LOADER", "libbpf", 1);
	int rc = sampler_open(&s, &o, err, sizeof(err));
	unsetenv("PROF_BPF_LOADER");
	if (rc == 0)
		sampler_close(s);
	printf("# %s\n", err);
	assert_true(rc < 0);
	/* without root or BTF it stops earlier, for that reason */
	if (geteuid() == 0 && access("/sys/kernel/btf/vmlinux", R_OK) == 0)
		assert_non_null(strstr(err, "CONFIG_AGENT_BPF_LIBBPF"));
}

static void test_sampler_callchains_both_backends(void **state)
{
	enum sampler_backend bes[] = {SAMPLER_RING, SAMPLER_BPF};
	int ran = 0;
	for (size_t i = 0; i < 2; i++) {
		if (bes[i] == SAMPLER_BPF && !sampler_bpf_compiled())
			continue;
		struct capture c;
		double cpu;
		if (run_backend(bes[i], true, &c, &cpu) < 0)
			continue;
		ran++;
		assert_true(c.stacks >= 1);
		assert_true(c.target_samples >= 0.8 * cpu * HZ && c.target_samples <= 1.2 * cpu * HZ);
	}
	if (!ran)
		skip();
}

static void test_sample_agg_aggregates_and_caps(void **state)
{
	struct sample_agg a;
	assert_int_equal(sample_agg_init(&a), 0);
	struct sample_key k = {.pid = 1, .tid = 2, .ip = 0x1000};
	assert_int_equal(sample_agg_add(&a, &k, 3), 1);
	assert_int_equal(sample_agg_add(&a, &k, 2), 0);
	k.kip = 0xffffffff81000000ull;
	assert_int_equal(sample_agg_add(&a, &k, 1), 1);
	assert_int_equal(a.n, 2);
	assert_int_equal(a.total, 6);
	for (uint32_t i = 0; a.n < SAMPLE_AGG_MAX_KEYS; i++) {
		struct sample_key x = {.pid = 7, .tid = 7, .ip = 0x400000 + i};
		assert_true(sample_agg_add(&a, &x, 1) >= 0);
	}
	struct sample_key y = {.pid = 8, .ip = 1};
	assert_int_equal(sample_agg_add(&a, &y, 1), -ENOSPC);
	assert_int_equal(sample_agg_add(&a, &k, 1), 0); /* existing keys still count */
	sample_agg_reset(&a);
	assert_int_equal(a.n, 0);
	sample_agg_free(&a);
}

static void test_stack_table_interns_chains(void **state)
{
	struct stack_table t;
	assert_int_equal(stack_table_init(&t), 0);
	uint64_t a[] = {1, 2, 3}, b[] = {1, 2, 4};
	uint32_t ia = stack_table_intern(&t, a, 3), ib = stack_table_intern(&t, b, 3);
	assert_true(ia >= 1 && ib >= 1 && ia != ib);
	assert_int_equal(stack_table_intern(&t, a, 3), ia);
	assert_int_equal(stack_table_intern(&t, a, 0), 0);
	for (uint64_t i = 0; i < 5000; i++) {
		uint64_t c[2] = {i, i + 1};
		assert_true(stack_table_intern(&t, c, 2) > 0);
	}
	assert_int_equal(stack_table_intern(&t, b, 3), ib);
	size_t n;
	const uint64_t *got = stack_table_get(&t, ib, &n);
	assert_int_equal(n, 3);
	assert_int_equal(got[2], 4);
	assert_false(stack_table_declared(&t, ia));
	stack_table_set_declared(&t, ia);
	assert_true(stack_table_declared(&t, ia));
	stack_table_redeclare(&t);
	assert_false(stack_table_declared(&t, ia));
	stack_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sample_agg_aggregates_and_caps),
		cmocka_unit_test(test_stack_table_interns_chains),
		cmocka_unit_test(test_sampler_ring_counts_busy_child),
		cmocka_unit_test(test_sampler_bpf_counts_busy_child),
		cmocka_unit_test(test_sampler_bpf_light_loader_counts_busy_child),
		cmocka_unit_test(test_sampler_bpf_libbpf_loader_counts_busy_child),
		cmocka_unit_test(test_sampler_bpf_without_libbpf_says_so),
		cmocka_unit_test(test_sampler_callchains_both_backends),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
