#include "validate_samples.h"
#include "fail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "validate.h"

int validate_samples(const Prof__Samples *s, char *err, size_t errlen)
{
	if (s->backend < 1 || s->backend > 2)
		return fail(err, errlen, "samples: unknown backend %u", s->backend);
	if (s->event_id == 0)
		return fail(err, errlen, "samples: event_id 0");
	if (s->n_new_events > VALIDATE_MAX_EVENTS)
		return fail(err, errlen, "samples: %zu new events (max %u, VALIDATE_MAX_EVENTS)",
			    s->n_new_events, VALIDATE_MAX_EVENTS);
	for (size_t i = 0; i < s->n_new_events; i++) {
		const Prof__EventDesc *e = s->new_events[i];
		if (!e->name || !e->name[0] || strlen(e->name) > 128 || (e->unit && strlen(e->unit) > 128))
			return fail(err, errlen, "samples: event %u has an empty or overlong name", e->id);
	}
	if (s->n_new_mappings > VALIDATE_MAX_MAPPINGS)
		return fail(err, errlen, "samples: %zu new mappings (max %u, VALIDATE_MAX_MAPPINGS)",
			    s->n_new_mappings, VALIDATE_MAX_MAPPINGS);
	for (size_t i = 0; i < s->n_new_mappings; i++) {
		const Prof__Mapping *m = s->new_mappings[i];
		if (m->id == 0 || m->end <= m->start)
			return fail(err, errlen, "samples: mapping %u: id 0 or empty range", m->id);
		if (m->path && strlen(m->path) > VALIDATE_MAX_STRING)
			return fail(err, errlen,
				    "samples: mapping %u path longer than %u bytes (VALIDATE_MAX_STRING)",
				    m->id, VALIDATE_MAX_STRING);
		if (m->build_id.len > 64)
			return fail(err, errlen, "samples: mapping %u build-id of %zu bytes", m->id, m->build_id.len);
	}
	if (s->n_new_stacks > VALIDATE_MAX_STACKS)
		return fail(err, errlen, "samples: %zu new stacks (max %u, VALIDATE_MAX_STACKS)",
			    s->n_new_stacks, VALIDATE_MAX_STACKS);
	for (size_t i = 0; i < s->n_new_stacks; i++) {
		const Prof__Stack *st = s->new_stacks[i];
		if (st->id == 0 || st->n_ips + st->n_kernel_ips == 0 || st->n_ips > VALIDATE_MAX_STACK_DEPTH ||
		    st->n_kernel_ips > VALIDATE_MAX_STACK_DEPTH)
			return fail(err, errlen,
				    "samples: stack %u: id 0 or %zu user and %zu kernel frames (1..%u each, "
				    "VALIDATE_MAX_STACK_DEPTH)",
				    st->id, st->n_ips, st->n_kernel_ips, VALIDATE_MAX_STACK_DEPTH);
	}
	size_t n = s->n_count;
	if (n > VALIDATE_MAX_SAMPLE_KEYS)
		return fail(err, errlen, "samples: %zu keys (max %u, VALIDATE_MAX_SAMPLE_KEYS)", n,
			    VALIDATE_MAX_SAMPLE_KEYS);
	if (s->n_pid != n || s->n_tid != n || s->n_ip != n || s->n_stack_id != n || (s->n_kip != 0 && s->n_kip != n))
		return fail(err, errlen, "samples: columns of different lengths (pid %zu tid %zu ip %zu kip %zu stack %zu count %zu)",
			    s->n_pid, s->n_tid, s->n_ip, s->n_kip, s->n_stack_id, n);
	for (size_t i = 0; i < n; i++)
		if (s->count[i] > VALIDATE_MAX_SAMPLE_COUNT)
			return fail(err, errlen,
				    "samples: key %zu: count %llu (max %llu, VALIDATE_MAX_SAMPLE_COUNT)", i,
				    (unsigned long long)s->count[i], VALIDATE_MAX_SAMPLE_COUNT);
	if (s->lost > VALIDATE_MAX_SAMPLE_LOST)
		return fail(err, errlen, "samples: lost %llu (max %llu, VALIDATE_MAX_SAMPLE_LOST)",
			    (unsigned long long)s->lost, VALIDATE_MAX_SAMPLE_LOST);
	if (s->interval_ns > VALIDATE_MAX_INTERVAL_NS)
		return fail(err, errlen, "samples: interval of %llu ns (max %llu, VALIDATE_MAX_INTERVAL_NS)",
			    (unsigned long long)s->interval_ns, VALIDATE_MAX_INTERVAL_NS);
	if (s->n_task_times > VALIDATE_MAX_TASK_TIMES)
		return fail(err, errlen, "samples: %zu task times (max %u, VALIDATE_MAX_TASK_TIMES)",
			    s->n_task_times, VALIDATE_MAX_TASK_TIMES);
	if (s->n_new_tasks > VALIDATE_MAX_SAMPLE_KEYS)
		return fail(err, errlen, "samples: %zu task names (max %u, VALIDATE_MAX_SAMPLE_KEYS)",
			    s->n_new_tasks, VALIDATE_MAX_SAMPLE_KEYS);
	for (size_t i = 0; i < s->n_new_tasks; i++) {
		const Prof__TaskName *t = s->new_tasks[i];
		if ((t->comm && strlen(t->comm) > VALIDATE_MAX_TASK_NAME) ||
		    (t->thread && strlen(t->thread) > VALIDATE_MAX_TASK_NAME))
			return fail(err, errlen,
				    "samples: task %d/%d: name longer than %u bytes (VALIDATE_MAX_TASK_NAME)",
				    t->pid, t->tid, VALIDATE_MAX_TASK_NAME);
	}
	return 0;
}
