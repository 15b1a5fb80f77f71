/* query_task_times(): a session's on/off-CPU times per task and process (query.h), each reused pid's
 * processes apart (pid reuse, #40 w47a). The rows of task_times carry their record's seq; the process
 * of pid a record's times are of is the one its samples' keys would be (query_incs.c, qm_inc_of: the
 * highest incarnation of the pid declared up to that record). One pass over task_times
 * (store_task_times): summed per task by the store where the session has no reused pid (every older
 * store, most sessions), else a reused pid's tasks per record, resolved here and summed per
 * (pid, tid, incarnation) as they come (by pid, tid, seq: a task's incarnations are consecutive).
 * Memory: the session's sample_task_incs rows (one per later process's task) and one pending row,
 * whatever the number of tasks or records. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "query_priv.h"
#include "sat.h"
#include "store/store_task_times.h"

struct tt_pass {
	const struct sess *se;
	query_task_time_cb cb;
	void *arg;
	bool have; /* t holds a task not yet handed on */
	struct query_task_time t;
	char comm[64], thread[64];
};

static int hand_on(struct tt_pass *p)
{
	if (!p->have)
		return 0;
	p->have = false;
	p->t.comm = p->comm;
	p->t.thread = p->thread;
	return p->cb(&p->t, p->arg);
}

static int take(const struct store_task_time_row *r, void *arg)
{
	struct tt_pass *p = arg;
	uint32_t inc = r->seq < 0 ? 0 : qm_inc_of(p->se, r->pid, r->seq);
	bool same_task = p->have && p->t.pid == r->pid && p->t.tid == r->tid;
	if (same_task && p->t.inc == inc) {
		sat_inc_u64(&p->t.on_ns, r->on_ns);
		sat_inc_u64(&p->t.off_ns, r->off_ns);
		sat_inc_u64(&p->t.switches, r->switches);
		return 0;
	}
	if (same_task && inc < p->t.inc) {
		/* rows not in seq order within a task (the statement's ORDER BY): a process's task
		 * would come out as several rows (review r13 F5) */
		log_error("task times of pid %d tid %d out of record order (process %u after %u)", r->pid, r->tid,
			  (unsigned)inc, (unsigned)p->t.inc);
		return -EPROTO;
	}
	int rc = hand_on(p);
	if (rc < 0)
		return rc;
	p->t = (struct query_task_time){.pid = r->pid,
					.tid = r->tid,
					.inc = inc,
					.on_ns = r->on_ns,
					.off_ns = r->off_ns,
					.switches = r->switches};
	const char *comm = r->comm, *thread = r->thread; /* sample_tasks: incarnation 0's */
	if (inc > 0) {
		comm = thread = "";
		qm_inc_names(p->se, r->pid, r->tid, inc, &comm, &thread);
	}
	snprintf(p->comm, sizeof(p->comm), "%s", comm ? comm : "");
	snprintf(p->thread, sizeof(p->thread), "%s", thread ? thread : "");
	p->have = true;
	return 0;
}

int query_task_times(struct store *s, int64_t sid, query_task_time_cb cb, void *arg)
{
	int reading = store_read_begin(s); /* the later processes and the times of one state */
	if (reading < 0)
		return reading;
	struct build b = {.have_incs = store_has_table(s, "sample_task_incs")};
	struct sess se = {.id = sid};
	int rc = qm_load_incs(s, &b, &se);
	if (rc == 0)
		rc = qm_incs_sort(&se);
	struct tt_pass p = {.se = &se, .cb = cb, .arg = arg};
	if (rc == 0)
		rc = store_task_times(s, sid, se.nstarts > 0, take, &p);
	if (rc == 0)
		rc = hand_on(&p);
	qm_sess_free(&se);
	str_pool_free(&b.pool);
	store_read_end(s, reading);
	return rc;
}
