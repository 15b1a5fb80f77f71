/* agent/sampler.c's interval (sampler_flush) with a scripted back end instead of the kernel's: the
 * keys a bpf back end's drain would add (sampler_inc_of with the process's start stamp, then
 * sampler_add) and the task records the mapping watch would read, in the order a flush reads them
 * (watch, drain, watch). The records sent are captured: their keys and TaskNames.
 *
 * A pid's exited process stays known for the interval after its EXIT (w45c): its samples taken between
 * the drain and its exit are in the next drain, and must still be that process's, even where the first
 * interval sent two records (a pid used again, its two processes split: one reap per record evicted the
 * entry then, and those samples became a new incarnation of the pid with whatever /proc held). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "sampler_priv.h"
#include "testproc.h"

#define KIP 0xffffffff81000000ull /* a kernel ip: no mapping, no /proc scan, no perf map */
#define MAXN 16

struct rec {
	size_t nkeys, ntasks;
	int32_t key_pid[MAXN];
	uint64_t key_count[MAXN];
	int32_t task_pid[MAXN];
	uint32_t task_inc[MAXN], task_fm[MAXN];
	char task_comm[MAXN][TASK_NAME_LEN];
};

struct script {
	int flush; /* drains so far */
	struct rec recs[8];
	size_t nrecs;
};

static struct script sc;

static int capture(void *ctx, Prof__Envelope *env)
{
	(void)ctx;
	assert_true(sc.nrecs < 8);
	const Prof__Samples *sm = env->samples;
	struct rec *r = &sc.recs[sc.nrecs++];
	memset(r, 0, sizeof(*r));
	for (size_t i = 0; i < sm->n_pid && r->nkeys < MAXN; i++, r->nkeys++) {
		r->key_pid[r->nkeys] = sm->pid[i];
		r->key_count[r->nkeys] = sm->count[i];
	}
	for (size_t i = 0; i < sm->n_new_tasks && r->ntasks < MAXN; i++, r->ntasks++) {
		r->task_pid[r->ntasks] = sm->new_tasks[i]->pid;
		r->task_inc[r->ntasks] = sm->new_tasks[i]->incarnation;
		r->task_fm[r->ntasks] = sm->new_tasks[i]->first_map_id;
		snprintf(r->task_comm[r->ntasks], TASK_NAME_LEN, "%s", sm->new_tasks[i]->comm);
	}
	return 0;
}

/* One key of pid, its process started at start (the bpf key's stamp), count samples. */
static void key(struct sampler *s, int32_t pid, uint64_t start, uint64_t count)
{
	struct sample_key k = {.pid = pid, .tid = pid, .kip = KIP};
	k.inc = sampler_inc_of(s, pid, start);
	assert_int_equal(sampler_add(s, &k, count, 1), 0);
}

/* Interval 1: alpha (pid 40, started at 100) runs; on pid 50 xproc (started at 100, gone at 200) and
 * yproc (started at 300) both have samples: two records. alpha's EXIT (at 400) is read after the
 * drain. Interval 2: alpha's last samples, taken between the first drain and its exit. */
static int drain(struct sampler *s, uint64_t now)
{
	(void)now;
	if (++sc.flush == 1) {
		key(s, 40, 100, 30);
		key(s, 50, 100, 5);
		key(s, 50, 300, 7);
		task_names_exit(&s->tasks, 40, 40, 400); /* the watch's second read of the interval */
	} else if (sc.flush == 2) {
		key(s, 40, 100, 3);
	}
	return 0;
}

static const struct sampler_ops scripted = {.id = SAMPLER_BPF, .drain = drain};

static void put_comm(const char *root, int pid, const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/comm", root, pid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", name);
	fclose(f);
}

static struct sampler *scripted_sampler(const char *root)
{
	struct sampler *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->o.emit = capture;
	s->o.interval_ns = 500000000ull;
	s->o.freq_hz = 199;
	s->ops = &scripted;
	snprintf(s->ev.name, sizeof(s->ev.name), "cpu-clock");
	proc_maps_init(&s->maps);
	perf_maps_init(&s->jit);
	task_names_init(&s->tasks, root);
	assert_int_equal(sample_agg_init(&s->agg), 0);
	assert_int_equal(stack_table_init(&s->stacks), 0);
	return s;
}

/* The TaskName of pid in record r with incarnation inc: its index, -1 if none. */
static int task_in(const struct rec *r, int32_t pid, uint32_t inc)
{
	for (size_t i = 0; i < r->ntasks; i++)
		if (r->task_pid[i] == pid && r->task_inc[i] == inc)
			return (int)i;
	return -1;
}

static uint64_t count_of(const struct rec *r, int32_t pid)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->nkeys; i++)
		n += r->key_pid[i] == pid ? r->key_count[i] : 0;
	return n;
}

static void test_sampler_flush_keeps_exited_process_for_next_drain(void **state)
{
	(void)state;
	char root[256];
	assert_int_equal(tp_tmpdir(root, sizeof(root), "samplerflush"), 0);
	put_comm(root, 10, "bash");
	memset(&sc, 0, sizeof(sc));
	struct sampler *s = scripted_sampler(root);
	/* what the watch read before interval 1's drain */
	struct task_names *t = &s->tasks;
	assert_int_equal(task_names_fork(t, 40, 40, 10, 10, 100), 0);
	assert_int_equal(task_names_set(t, 40, 40, "alpha"), 0);
	assert_int_equal(task_names_fork(t, 50, 50, 10, 10, 100), 0);
	assert_int_equal(task_names_set(t, 50, 50, "xproc"), 0);
	task_names_exit(t, 50, 50, 200);
	t->next_map_id = 5;
	assert_int_equal(task_names_fork(t, 50, 50, 10, 10, 300), 0);
	assert_int_equal(task_names_set(t, 50, 50, "yproc"), 0);
	uint32_t yinc = task_names_find(t, 50, 50)->inc;
	assert_true(yinc > 0);
	put_comm(root, 40, "newcomer"); /* what /proc says of pid 40 once alpha is gone */

	assert_int_equal(sampler_flush(s, 1000), 0);
	/* pid 50's two processes: xproc's keys first, yproc's in a record of their own */
	assert_int_equal(sc.nrecs, 2);
	assert_int_equal(count_of(&sc.recs[0], 50), 5);
	assert_int_equal(count_of(&sc.recs[1], 50), 7);
	int x = task_in(&sc.recs[0], 50, 0), y = task_in(&sc.recs[1], 50, yinc);
	assert_true(x >= 0 && y >= 0);
	assert_string_equal(sc.recs[0].task_comm[x], "xproc");
	assert_int_equal(sc.recs[0].task_fm[x], 0);
	assert_string_equal(sc.recs[1].task_comm[y], "yproc");
	assert_int_equal(sc.recs[1].task_fm[y], 5);
	assert_int_equal(count_of(&sc.recs[0], 40), 30);
	assert_true(task_in(&sc.recs[0], 40, 0) >= 0);
	/* alpha exited after the drain: still known for the next one */
	assert_non_null(task_names_find(t, 40, 40));

	assert_int_equal(sampler_flush(s, 2000), 0);
	assert_int_equal(sc.nrecs, 3);
	assert_int_equal(count_of(&sc.recs[2], 40), 3);
	for (size_t i = 0; i < sc.recs[2].ntasks; i++) /* alpha's samples, no new process of pid 40 */
		assert_false(sc.recs[2].task_pid[i] == 40 && sc.recs[2].task_inc[i] != 0);
	/* two intervals after its EXIT, the entry goes */
	assert_null(task_names_find(t, 40, 40));
	sampler_close(s);
	tp_rm_rf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sampler_flush_keeps_exited_process_for_next_drain),
	};
	return cmocka_run_group_tests_name("sampler_flush", tests, NULL, NULL);
}
