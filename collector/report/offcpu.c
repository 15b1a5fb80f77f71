/* collector report --offcpu: where a session's tasks spent their wall time, on
 * and off the CPU, from the BPF back end's sched_switch accounting (task_times),
 * per process and per thread (report.h): a pid used again within the session (pid reuse) is
 * one row per process, each with its own times and names (query_task_times). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "query/query.h"
#include "report.h"
#include "text_safe.h"

struct trow {
	int32_t pid, tid;
	uint32_t inc; /* which of the pid's processes */
	uint64_t on_ns, off_ns, switches;
	char comm[16], thread[16];
	bool process; /* a per-process total (tid 0) */
};

struct tset {
	struct trow *v;
	size_t n, cap;
};

static int push(struct tset *t, const struct trow *r)
{
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 64;
		struct trow *nv = realloc(t->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
		t->cap = nc;
	}
	t->v[t->n++] = *r;
	return 0;
}

static int take(const struct query_task_time *row, void *arg)
{
	struct trow r = {.pid = row->pid,
			 .tid = row->tid,
			 .inc = row->inc,
			 .on_ns = row->on_ns,
			 .off_ns = row->off_ns,
			 .switches = row->switches};
	snprintf(r.comm, sizeof(r.comm), "%.15s", row->comm);
	snprintf(r.thread, sizeof(r.thread), "%.15s", row->thread);
	return push(arg, &r);
}

/* Processes by off-CPU time, each followed by its threads (by off-CPU time). */
static int cmp_off(const void *a, const void *b)
{
	const struct trow *x = a, *y = b;
	if (x->off_ns != y->off_ns)
		return x->off_ns < y->off_ns ? 1 : -1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void row_text(const struct trow *r, FILE *out)
{
	char name[64], safe[40]; /* names come from the agent: control characters become '?' */
	if (r->process)
		snprintf(name, sizeof(name), "%s", text_safe_copy(safe, sizeof(safe), r->comm[0] ? r->comm : "?"));
	else
		snprintf(name, sizeof(name), "  %s",
			 text_safe_copy(safe, sizeof(safe), r->thread[0] ? r->thread : r->comm[0] ? r->comm : "?"));
	char pid[24]; /* a reused pid's later process as pid/incarnation (r13 F4: the same name twice otherwise) */
	if (r->inc)
		snprintf(pid, sizeof(pid), "%d/%u", r->pid, (unsigned)r->inc);
	else
		snprintf(pid, sizeof(pid), "%d", r->pid);
	fprintf(out, "  %6.1f%% %11.3f %11.3f %9llu  %-18s %7s %7d\n", pct(r->off_ns, r->on_ns + r->off_ns),
		(double)r->on_ns / 1e9, (double)r->off_ns / 1e9, (unsigned long long)r->switches, name, pid,
		r->process ? 0 : r->tid);
}

static void row_json(const struct trow *r, bool first, FILE *out)
{
	fprintf(out, "%s{\"pid\":%d,\"incarnation\":%u,\"tid\":%d,\"comm\":", first ? "" : ",", r->pid,
		(unsigned)r->inc, r->process ? 0 : r->tid);
	json_string(out, r->comm);
	fputs(",\"thread\":", out);
	json_string(out, r->process ? "" : r->thread);
	fprintf(out, ",\"on_cpu_ns\":%llu,\"off_cpu_ns\":%llu,\"switches\":%llu,\"off_pct\":%.2f}",
		(unsigned long long)r->on_ns, (unsigned long long)r->off_ns, (unsigned long long)r->switches,
		pct(r->off_ns, r->on_ns + r->off_ns));
}

int report_offcpu(struct store *st, int64_t sid, const struct report_opts *o, FILE *out)
{
	struct tset t = {0}, procs = {0};
	int rc = query_task_times(st, sid, take, &t);
	for (size_t i = 0; rc == 0 && i < t.n; i++) { /* per-process totals: rows by (pid, tid, inc) */
		size_t j = procs.n; /* procs in pid order: only the last pid's processes are looked at */
		while (j > 0 && procs.v[j - 1].pid == t.v[i].pid && procs.v[j - 1].inc != t.v[i].inc)
			j--;
		if (j > 0 && procs.v[j - 1].pid == t.v[i].pid) {
			j--;
		} else {
			j = procs.n;
			struct trow p = {.pid = t.v[i].pid, .inc = t.v[i].inc, .process = true};
			rc = push(&procs, &p);
			if (rc < 0)
				break;
		}
		struct trow *p = &procs.v[j];
		p->on_ns += t.v[i].on_ns;
		p->off_ns += t.v[i].off_ns;
		p->switches += t.v[i].switches;
		if (t.v[i].tid == t.v[i].pid || !p->comm[0])
			snprintf(p->comm, sizeof(p->comm), "%s", t.v[i].comm);
	}
	if (rc < 0) {
		log_error("report --offcpu: %s", strerror(-rc));
		goto out;
	}
	qsort(procs.v, procs.n, sizeof(*procs.v), cmp_off);
	qsort(t.v, t.n, sizeof(*t.v), cmp_off);
	unsigned limit = o->limit ? o->limit : 20;
	if (o->json) {
		fputs("{\"offcpu\":[", out);
		bool first = true;
		for (size_t i = 0; i < procs.n && i < limit; i++) {
			row_json(&procs.v[i], first, out);
			first = false;
			for (size_t j = 0; j < t.n; j++)
				if (t.v[j].pid == procs.v[i].pid && t.v[j].inc == procs.v[i].inc)
					row_json(&t.v[j], false, out);
		}
		fputs("]}\n", out);
		goto out;
	}
	if (t.n == 0) {
		fprintf(out, "no on/off-CPU times in session %lld: the bpf back end records them "
			     "(agent record --backend bpf, Linux >= 5.x with BTF, root)\n",
			(long long)sid);
		goto out;
	}
	fprintf(out, "off-CPU time (sched_switch accounting): %zu processes, %zu threads; off%% = off / (on + off)\n",
		procs.n, t.n);
	fprintf(out, "  %7s %11s %11s %9s  %-18s %7s %7s\n", "off%", "on-CPU s", "off-CPU s", "switches",
		"process / thread", "pid", "tid");
	for (size_t i = 0; i < procs.n && i < limit; i++) {
		row_text(&procs.v[i], out);
		for (size_t j = 0; j < t.n; j++)
			if (t.v[j].pid == procs.v[i].pid && t.v[j].inc == procs.v[i].inc)
				row_text(&t.v[j], out);
	}
out:
	free(t.v);
	free(procs.v);
	return rc;
}
