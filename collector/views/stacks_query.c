/* stack_set_from_query(): copy a query result's stacks, frames and points. */
#include "stacks_query.h"

#include <stdio.h>
#include <string.h>

#include "sat.h"

int stack_set_from_query(const struct query_result *r, struct stack_set *out)
{
	stack_set_init(out);
	struct sym_frame fr[STACKS_MAX_FRAMES];
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < r->nstacks; i++) {
		const struct query_stack *k = &r->stacks[i];
		size_t n = k->nframes < STACKS_MAX_FRAMES ? k->nframes : STACKS_MAX_FRAMES;
		for (size_t j = 0; j < n; j++) {
			const struct query_frame *f = &r->frames[k->frames[j]];
			fr[j] = (struct sym_frame){.name = f->function, .raw = f->raw && f->raw[0] ? f->raw : NULL,
						   .module = f->kernel ? "[kernel]" : f->module, .ip = f->ip,
						   .file_off = f->file_off, .resolved = f->resolved,
						   .path = f->path, .build_id = f->build_id,
						   .src_file = f->src_file, .src_line = f->src_line};
		}
		struct stack_keys keys = {.comm = k->comm, .thread = k->thread, .agent = k->agent_id,
					  .pid = k->pid, .tid = k->tid};
		rc = n ? stack_set_add(out, fr, n, k->count, &keys) : 0;
		/* its time at its own session's period: sessions of one frequency differ (an older
		 * agent's timer period is 1/F, a newer one's 1/F + 1/128 of it) */
		if (rc == 0 && n)
			out->stacks[out->nstacks - 1].ns = sat_mul_u64(k->count, k->sample_ns ? k->sample_ns : 1);
	}
	for (size_t i = 0; rc == 0 && i < r->npoints; i++) {
		const struct query_point *p = &r->points[i];
		char track[300];
		snprintf(track, sizeof(track), "%s (%s)", p->comm[0] ? p->comm : "?", p->agent_id ? p->agent_id : "?");
		rc = stack_set_add_point(out, p->t_ns, 0, p->count, track);
	}
	out->freq_hz = (int64_t)r->freq_hz;
	out->period = (int64_t)r->period;
	out->t0_ns = r->first_ns;
	out->t1_ns = r->last_ns;
	snprintf(out->event, sizeof(out->event), "%s", r->event);
	if (rc < 0)
		stack_set_free(out);
	return rc;
}
