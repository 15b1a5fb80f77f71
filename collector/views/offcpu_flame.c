/* Wall-clock flame from task_times (offcpu_flame.h): a task per process of its pid (pid reuse:
 * query_task_times), its on-CPU time spread over that process's own sampled stacks. */
#include "offcpu_flame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct task {
	int32_t pid, tid;
	uint32_t inc; /* which of the pid's processes */
	uint64_t on_ns, off_ns;
	char comm[32], thread[32];
};

struct tasks {
	struct task *v;
	size_t n, cap;
	const struct query_filter *f;
};

static bool wanted(const struct query_filter *f, const struct query_task_time *r)
{
	bool ok = f->ncomms == 0;
	for (size_t i = 0; i < f->ncomms && !ok; i++)
		ok = strcmp(f->comms[i], r->comm) == 0;
	bool pid = f->npids == 0;
	for (size_t i = 0; i < f->npids && !pid; i++)
		pid = f->pids[i] == r->pid;
	return ok && pid;
}

static int take(const struct query_task_time *r, void *arg)
{
	struct tasks *t = arg;
	if (!wanted(t->f, r))
		return 0;
	if (t->n == t->cap) {
		size_t nc = t->cap ? 2 * t->cap : 64;
		struct task *nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = nc;
	}
	struct task *k = &t->v[t->n++];
	*k = (struct task){
	    .pid = r->pid, .tid = r->tid, .inc = r->inc, .on_ns = r->on_ns, .off_ns = r->off_ns};
	snprintf(k->comm, sizeof(k->comm), "%s", r->comm);
	snprintf(k->thread, sizeof(k->thread), "%s", r->thread[0] ? r->thread : r->comm);
	return 0;
}

/* A frame of our own (thread, [off-CPU], [on-CPU]): no module. */
static struct sym_frame own(const char *name)
{
	return (struct sym_frame){.name = name, .module = "", .resolved = 1};
}

/* A sampled stack of k's: its task in its process (a reused pid's other processes are not it). */
static bool own_stack(const struct query_stack *s, const struct task *k)
{
	return s->tid == k->tid && s->pid == k->pid && s->inc == k->inc && !s->other;
}

/* One task's stacks: off-CPU, and its on-CPU time over its sampled stacks. */
static int add_task(const struct task *k, const struct query_result *r, struct stack_set *out)
{
	char thread[80];
	snprintf(thread, sizeof(thread), "%s (tid %d)", k->thread[0] ? k->thread : "?", k->tid);
	struct stack_keys keys = {.comm = k->comm[0] ? k->comm : "?", .thread = k->thread, .pid = k->pid,
				  .tid = k->tid};
	struct sym_frame fr[STACKS_MAX_FRAMES]; /* leaf first; the thread last */
	int rc = 0;
	uint64_t off_ms = (k->off_ns + 500000) / 1000000, on_ms = (k->on_ns + 500000) / 1000000;
	if (off_ms) {
		fr[0] = own(OFFCPU_FRAME);
		fr[1] = own(thread);
		rc = stack_set_add(out, fr, 2, off_ms, &keys);
	}
	uint64_t sampled = 0;
	for (size_t i = 0; r && i < r->nstacks; i++)
		if (own_stack(&r->stacks[i], k))
			sampled += r->stacks[i].count;
	if (rc < 0 || !on_ms)
		return rc;
	if (!sampled) {
		fr[0] = own(ONCPU_FRAME);
		fr[1] = own(thread);
		return stack_set_add(out, fr, 2, on_ms, &keys);
	}
	/* cumulative rounding: the parts add up to on_ms exactly */
	uint64_t cum = 0, given = 0;
	for (size_t i = 0; rc == 0 && i < r->nstacks; i++) {
		const struct query_stack *s = &r->stacks[i];
		if (!own_stack(s, k))
			continue;
		cum += s->count;
		uint64_t upto = (uint64_t)((double)on_ms * (double)cum / (double)sampled + 0.5), ms = upto - given;
		given = upto;
		if (!ms)
			continue;
		size_t n = 0;
		for (size_t j = 0; j < s->nframes && n + 1 < STACKS_MAX_FRAMES; j++) {
			const struct query_frame *q = &r->frames[s->frames[j]];
			fr[n++] = (struct sym_frame){.name = q->function, .module = q->module, .resolved = q->resolved,
						     .ip = q->ip, .file_off = q->file_off};
		}
		fr[n++] = own(thread);
		rc = stack_set_add(out, fr, n, ms, &keys);
	}
	return rc;
}

static int add_session(struct store *st, const struct query_opts *qo, int64_t sid, struct stack_set *out)
{
	struct tasks t = {.f = &qo->f};
	int rc = query_task_times(st, sid, take, &t);
	struct query_result *r = NULL;
	if (rc == 0 && t.n) {
		struct query_opts one = *qo; /* shares qo's strings; not freed */
		one.f.nsessions = 1;
		one.f.sessions[0] = sid;
		one.f.since_ns = one.f.until_ns = 0; /* task_times are the whole session's */
		one.series = false;
		rc = query_run(st, &one, &r);
	}
	for (size_t i = 0; rc == 0 && i < t.n; i++)
		rc = add_task(&t.v[i], r, out);
	query_result_free(r);
	free(t.v);
	return rc;
}

static int flame_set(struct store *st, const struct query_opts *qo, struct stack_set *out)
{
	if (qo->f.nsessions) {
		int rc = 0;
		for (size_t i = 0; rc == 0 && i < qo->f.nsessions; i++)
			rc = add_session(st, qo, qo->f.sessions[i], out);
		return rc;
	}
	struct query_result *r = NULL;
	int rc = query_run(st, qo, &r);
	for (size_t i = 0; rc == 0 && i < r->nsessions; i++)
		rc = add_session(st, qo, r->sessions[i].id, out);
	query_result_free(r);
	return rc;
}

int offcpu_flame_set(struct store *st, const struct query_opts *qo, struct stack_set *out)
{
	int reading = store_read_begin(st); /* its queries in one snapshot (#40 w46b) */
	if (reading < 0)
		return reading;
	int rc = flame_set(st, qo, out);
	store_read_end(st, reading);
	return rc;
}
