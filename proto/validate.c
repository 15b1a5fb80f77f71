#include "validate.h"
#include "fail.h"
#include "validate_calib.h"
#include "validate_gpu.h"
#include "validate_kallsyms.h"
#include "validate_opencl.h"
#include "validate_perf_map.h"
#include "validate_snapshot.h"
#include "validate_samples.h"
#include "validate_target.h"
#include "validate_trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int str_ok(const char *s)
{
	return s == NULL || strlen(s) <= VALIDATE_MAX_STRING;
}

const char *envelope_kind(const Prof__Envelope *env)
{
	switch (env->body_case) {
	case PROF__ENVELOPE__BODY_HELLO: return "hello";
	case PROF__ENVELOPE__BODY_COUNTERS: return "counters";
	case PROF__ENVELOPE__BODY_HEARTBEAT: return "heartbeat";
	case PROF__ENVELOPE__BODY_ACK: return "ack";
	case PROF__ENVELOPE__BODY_ERROR: return "error";
	case PROF__ENVELOPE__BODY_SAMPLES: return "samples";
	case PROF__ENVELOPE__BODY_CL_COMMAND: return "cl_command";
	case PROF__ENVELOPE__BODY_CALIBRATION: return "calibration";
	case PROF__ENVELOPE__BODY_TRACE_WINDOW: return "trace_window";
	case PROF__ENVELOPE__BODY_CHALLENGE: return "challenge";
	case PROF__ENVELOPE__BODY_GPU_COUNTERS: return "gpu_counters";
	case PROF__ENVELOPE__BODY_CL_BATCH: return "cl_batch";
	case PROF__ENVELOPE__BODY_TARGET_END: return "target_end";
	case PROF__ENVELOPE__BODY_KERNEL_SYMBOLS: return "kernel_symbols";
	case PROF__ENVELOPE__BODY_VDSO: return "vdso";
	case PROF__ENVELOPE__BODY_PERF_MAP: return "perf_map";
	case PROF__ENVELOPE__BODY_TRACE_SNAPSHOT: return "trace_snapshot";
	case PROF__ENVELOPE__BODY_PAGE_REQUEST: return "page_request";
	case PROF__ENVELOPE__BODY_PAGES: return "pages";
	case PROF__ENVELOPE__BODY_SNAPSHOT_DONE: return "snapshot_done";
	default: return "unknown";
	}
}

static int validate_hello(const Prof__Hello *h, char *err, size_t errlen)
{
	if (!h->agent_id || !h->agent_id[0])
		return fail(err, errlen, "hello: empty agent_id");
	const char *strs[] = {h->agent_id, h->board, h->kernel_release, h->hostname,
			      h->machine, h->agent_version, h->features, h->target};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!str_ok(strs[i]))
			return fail(err, errlen, "hello: string field longer than %u bytes", VALIDATE_MAX_STRING);
	if (h->auth.len > VALIDATE_MAX_AUTH)
		return fail(err, errlen, "hello: auth of %zu bytes (max %u)", h->auth.len, VALIDATE_MAX_AUTH);
	if (h->n_cpus > VALIDATE_MAX_CPUS)
		return fail(err, errlen, "hello: %zu cpus (max %u)", h->n_cpus, VALIDATE_MAX_CPUS);
	for (size_t i = 0; i < h->n_cpus; i++)
		if (!str_ok(h->cpus[i]->model))
			return fail(err, errlen, "hello: cpu %zu model too long", i);
	if (h->n_gpus > VALIDATE_MAX_GPUS)
		return fail(err, errlen, "hello: %zu gpus (max %u)", h->n_gpus, VALIDATE_MAX_GPUS);
	for (size_t i = 0; i < h->n_gpus; i++) {
		const Prof__GpuDevice *g = h->gpus[i];
		if (!str_ok(g->platform) || !str_ok(g->name) || !str_ok(g->vendor) || !str_ok(g->version) ||
		    !str_ok(g->driver))
			return fail(err, errlen, "hello: gpu %zu string too long", i);
	}
	return 0;
}

static int validate_counters(const Prof__Counters *c, char *err, size_t errlen)
{
	if (c->n_new_events > VALIDATE_MAX_EVENTS)
		return fail(err, errlen, "counters: %zu new events (max %u)", c->n_new_events, VALIDATE_MAX_EVENTS);
	for (size_t i = 0; i < c->n_new_events; i++) {
		const Prof__EventDesc *e = c->new_events[i];
		if (!e->name || !e->name[0] || strlen(e->name) > 128)
			return fail(err, errlen, "counters: event %u has an empty or overlong name", e->id);
		if (!str_ok(e->unit))
			return fail(err, errlen, "counters: event %u unit too long", e->id);
		for (size_t j = 0; j < i; j++)
			if (c->new_events[j]->id == e->id)
				return fail(err, errlen, "counters: event id %u declared twice", e->id);
	}
	if (c->n_event_ids == 0 || c->n_event_ids > VALIDATE_MAX_EVENTS)
		return fail(err, errlen, "counters: %zu columns (need 1..%u)", c->n_event_ids, VALIDATE_MAX_EVENTS);
	if (c->n_t_ns == 0)
		return fail(err, errlen, "counters: no rows");
	if (c->n_values != c->n_t_ns * c->n_event_ids)
		return fail(err, errlen, "counters: %zu values for %zu rows x %zu columns", c->n_values, c->n_t_ns,
			    c->n_event_ids);
	if (c->n_running_pct != 0 && c->n_running_pct != c->n_values)
		return fail(err, errlen, "counters: %zu running_pct entries for %zu values", c->n_running_pct,
			    c->n_values);
	for (size_t i = 0; i < c->n_running_pct; i++)
		if (c->running_pct[i] > 100)
			return fail(err, errlen, "counters: running_pct %u above 100", c->running_pct[i]);
	return 0;
}

int envelope_validate(const Prof__Envelope *env, char *err, size_t errlen)
{
	switch (env->body_case) {
	case PROF__ENVELOPE__BODY_HELLO:
		if (env->seq != 0)
			return fail(err, errlen, "hello with seq %llu (must be 0)", (unsigned long long)env->seq);
		return validate_hello(env->hello, err, errlen);
	case PROF__ENVELOPE__BODY_COUNTERS:
		if (env->seq == 0)
			return fail(err, errlen, "counters record with seq 0");
		return validate_counters(env->counters, err, errlen);
	case PROF__ENVELOPE__BODY_SAMPLES:
		if (env->seq == 0)
			return fail(err, errlen, "samples record with seq 0");
		return validate_samples(env->samples, err, errlen);
	case PROF__ENVELOPE__BODY_CL_COMMAND:
		if (env->seq == 0)
			return fail(err, errlen, "cl_command record with seq 0");
		return validate_cl_command(env->cl_command, err, errlen);
	case PROF__ENVELOPE__BODY_CALIBRATION:
		if (env->seq == 0)
			return fail(err, errlen, "calibration record with seq 0");
		return validate_calibration(env->calibration, err, errlen);
	case PROF__ENVELOPE__BODY_TRACE_WINDOW:
		if (env->seq == 0)
			return fail(err, errlen, "%s record with seq 0", envelope_kind(env));
		return validate_trace_window(env->trace_window, err, errlen);
	case PROF__ENVELOPE__BODY_GPU_COUNTERS:
		if (env->seq == 0)
			return fail(err, errlen, "%s record with seq 0", envelope_kind(env));
		return validate_gpu_counters(env->gpu_counters, err, errlen);
	case PROF__ENVELOPE__BODY_CL_BATCH:
		if (env->seq == 0)
			return fail(err, errlen, "%s record with seq 0", envelope_kind(env));
		return validate_cl_batch(env->cl_batch, err, errlen);
	case PROF__ENVELOPE__BODY_TARGET_END:
		if (env->seq == 0)
			return fail(err, errlen, "%s record with seq 0", envelope_kind(env));
		return validate_target_end(env->target_end, err, errlen);
	case PROF__ENVELOPE__BODY_KERNEL_SYMBOLS:
		if (env->seq == 0)
			return fail(err, errlen, "%s record with seq 0", envelope_kind(env));
		return validate_kernel_symbols(env->kernel_symbols, err, errlen);
	case PROF__ENVELOPE__BODY_VDSO: /* the agent's vdso image: an ELF of 64 KiB at most */
		if (env->seq == 0)
			return fail(err, errlen, "%s record with seq 0", envelope_kind(env));
		if (env->vdso->image.len < 64 || env->vdso->image.len > 65536 ||
		    memcmp(env->vdso->image.data, "\x7f" "ELF", 4) != 0)
			return fail(err, errlen, "vdso: not an ELF image of 64 B to 64 KiB (%zu bytes)",
				    env->vdso->image.len);
		return 0;
	case PROF__ENVELOPE__BODY_PERF_MAP:
		if (env->seq == 0)
			return fail(err, errlen, "%s record with seq 0", envelope_kind(env));
		return validate_perf_map(env->perf_map, err, errlen);
	case PROF__ENVELOPE__BODY_TRACE_SNAPSHOT: /* live, never spooled: seq 0 (snapshot.proto) */
	case PROF__ENVELOPE__BODY_PAGE_REQUEST:
	case PROF__ENVELOPE__BODY_PAGES:
	case PROF__ENVELOPE__BODY_SNAPSHOT_DONE:
		if (env->seq != 0)
			return fail(err, errlen, "%s with seq %llu (live: must be 0)", envelope_kind(env),
				    (unsigned long long)env->seq);
		if (env->body_case == PROF__ENVELOPE__BODY_TRACE_SNAPSHOT)
			return validate_trace_snapshot(env->trace_snapshot, err, errlen);
		if (env->body_case == PROF__ENVELOPE__BODY_PAGE_REQUEST)
			return validate_page_request(env->page_request, 0, err, errlen);
		if (env->body_case == PROF__ENVELOPE__BODY_PAGES)
			return validate_pages(env->pages, 0, err, errlen);
		return env->snapshot_done->snapshot_id ? 0 : fail(err, errlen, "snapshot_done: snapshot id 0");
	case PROF__ENVELOPE__BODY_HEARTBEAT:
		return 0;
	case PROF__ENVELOPE__BODY_ACK:
		return str_ok(env->ack->store_id) && strlen(env->ack->store_id) < 64
			       ? 0
			       : fail(err, errlen, "ack: store id too long");
	case PROF__ENVELOPE__BODY_CHALLENGE:
		if (env->challenge->nonce.len < VALIDATE_MIN_NONCE || env->challenge->nonce.len > VALIDATE_MAX_AUTH)
			return fail(err, errlen, "challenge: nonce of %zu bytes (need %u..%u)",
				    env->challenge->nonce.len, VALIDATE_MIN_NONCE, VALIDATE_MAX_AUTH);
		return 0;
	case PROF__ENVELOPE__BODY_ERROR:
		return str_ok(env->error->message) ? 0 : fail(err, errlen, "error: message too long");
	default:
		return fail(err, errlen, "envelope without a body (unknown record type?)");
	}
}
