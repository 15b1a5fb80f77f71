/* Fixture session for the report tests (see report_fixture.h). */
#include "report_fixture.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"
#include "frame.h"
#include "profiler.pb-c.h"
#include "validate.h"

#define RF_INSNS 400

/* A linked-list walk: load p = [p] (memory), an add and a float op per step. */
static size_t chase(struct edag_insn *ins, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; k + 3 <= n; i++) {
		struct edag_insn *in = &ins[k++];
		memset(in, 0, sizeof(*in));
		in->pc = 0x1000;
		in->cls = EDAG_LOAD;
		in->mem = EDAG_MEM_READ;
		in->addr = 0x100000 + (i * 4096) % (1 << 20);
		in->size = 8;
		in->rd[in->nread++] = 9;
		in->wr[in->nwrite++] = 9;
		in = &ins[k++];
		memset(in, 0, sizeof(*in));
		in->pc = 0x1004;
		in->cls = EDAG_INT;
		in->rd[in->nread++] = 10;
		in->wr[in->nwrite++] = 10;
		in = &ins[k++];
		memset(in, 0, sizeof(*in));
		in->pc = 0x1008;
		in->cls = EDAG_FLOAT;
		in->rd[in->nread++] = 40;
		in->wr[in->nwrite++] = 40;
	}
	return k;
}

static int put(struct store *st, int64_t sid, Prof__Envelope *env)
{
	char err[200];
	if (envelope_validate(env, err, sizeof(err)) < 0)
		return -EINVAL;
	int rc = store_put_record(st, sid, env, 100);
	return rc < 0 ? rc : 0;
}

static const char *or_default(const char *s, const char *def)
{
	return s ? s : def;
}

/* One NDRange launch of kernel name (declared with it), 1 ms on the device. */
static int put_kernel(struct store *st, int64_t sid, uint64_t seq, const char *name)
{
	Prof__ClKernelDesc k = PROF__CL_KERNEL_DESC__INIT, *kp = &k;
	k.id = 1;
	k.name = (char *)name;
	uint64_t gs = 1024;
	Prof__ClCommand c = PROF__CL_COMMAND__INIT;
	c.id = 1;
	c.pid = 100;
	c.queue_id = 1;
	c.type = 0x11F0; /* CL_COMMAND_NDRANGE_KERNEL */
	c.kernel_id = 1;
	c.work_dim = 1;
	c.n_global_size = 1;
	c.global_size = &gs;
	c.queued_ns = 1000000;
	c.submit_ns = 1100000;
	c.start_ns = 1200000;
	c.end_ns = 2200000;
	c.host_enqueue_ns = 1000000;
	c.host_complete_ns = 2300000;
	c.n_new_kernels = 1;
	c.new_kernels = &kp;
	Prof__Envelope e = PROF__ENVELOPE__INIT;
	e.seq = seq;
	e.body_case = PROF__ENVELOPE__BODY_CL_COMMAND;
	e.cl_command = &c;
	return put(st, sid, &e);
}

int rf_make_session(struct store *st, int64_t *sid)
{
	return rf_make_session_names(st, &(struct rf_names){0}, sid);
}

int rf_make_session_names(struct store *st, const struct rf_names *nm, int64_t *sid)
{
	Prof__Hello h;
	prof__hello__init(&h);
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)or_default(nm->agent_id, "report-test");
	h.boot_id = nm->boot_id ? nm->boot_id : 42;
	h.board = (char *)or_default(nm->board, "host");
	h.kernel_release = "6.1.0-test";
	h.hostname = (char *)or_default(nm->hostname, "testhost");
	h.machine = "x86_64";
	h.agent_version = "0.1.0";
	h.features = "tracer";
	h.target = (char *)or_default(nm->target, "cmd ./fixture");
	h.clock_id = 1;
	uint64_t max_seq;
	int rc = store_session_open(st, &h, "test", sid, &max_seq, NULL);
	if (rc < 0)
		return rc;
	static const struct {
		const char *name, *unit;
		double v;
	} pv[] = {
		{"peak_gflops", "GFLOP/s", 100}, {"peak_gbps", "GB/s", 10}, {"bw_triad_gbps", "GB/s", 8},
		{"gflops_float1", "GFLOP/s", 25}, {"cpu_peak_gflops", "GFLOP/s", 20}, {"cpu_peak_gbps", "GB/s", 5},
		{"mem_latency_cycles", "cycles", 100}, {"mem_latency_ns", "ns", 50}, {"mem_issue_slots", "chains", 2},
		{NULL, "GB/s", 7}, /* names->calib_param, when given */
	};
	size_t np = sizeof(pv) / sizeof(pv[0]) - (nm->calib_param ? 0 : 1);
	Prof__CalibParam p[sizeof(pv) / sizeof(pv[0])], *pp[sizeof(pv) / sizeof(pv[0])];
	for (size_t i = 0; i < np; i++) {
		prof__calib_param__init(&p[i]);
		p[i].name = (char *)(pv[i].name ? pv[i].name : nm->calib_param);
		p[i].unit = (char *)pv[i].unit;
		p[i].value = pv[i].v;
		p[i].method = (char *)or_default(nm->calib_method, "fixture");
		p[i].confidence = 1;
		pp[i] = &p[i];
	}
	Prof__Calibration cal = PROF__CALIBRATION__INIT;
	cal.device = (char *)or_default(nm->calib_device, "TestGPU");
	cal.benchmark = "peak";
	cal.n_params = np;
	cal.params = pp;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_CALIBRATION;
	env.calibration = &cal;
	if ((rc = put(st, *sid, &env)) < 0)
		return rc;
	static struct edag_insn ins[RF_INSNS];
	size_t n = chase(ins, RF_INSNS);
	for (int w = 0; w < 2; w++) {
		Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
		if ((rc = edag_window_encode(ins, n, &tw)) < 0)
			return rc;
		tw.arch = EDAG_ARCH_X86_64;
		tw.pid = 100;
		tw.tid = 101;
		tw.window_index = (uint32_t)w;
		tw.sampled_share = 0.5;
		tw.represented_insns = 2 * n;
		tw.t_ns = 1000000u * (unsigned)w;
		Prof__Envelope e = PROF__ENVELOPE__INIT;
		e.seq = 2 + (uint64_t)w;
		e.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
		e.trace_window = &tw;
		rc = put(st, *sid, &e);
		edag_window_encode_free(&tw);
		if (rc < 0)
			return rc;
	}
	if (nm->kernel && (rc = put_kernel(st, *sid, 4, nm->kernel)) < 0)
		return rc;
	return store_commit(st);
}

int rf_make_trace_session(struct store *st, const char *agent_id, unsigned nwin, unsigned per, int64_t *sid)
{
	Prof__Hello h;
	prof__hello__init(&h);
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)agent_id;
	h.boot_id = 1;
	h.board = "host";
	h.target = "cmd ./chase";
	uint64_t max_seq;
	int rc = store_session_open(st, &h, "test", sid, &max_seq, NULL);
	if (rc < 0)
		return rc;
	struct edag_insn *ins = calloc(per, sizeof(*ins));
	if (!ins)
		return -ENOMEM;
	size_t n = chase(ins, per);
	for (unsigned w = 0; w < nwin && rc >= 0; w++) {
		Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
		if ((rc = edag_window_encode(ins, n, &tw)) < 0)
			break;
		tw.arch = EDAG_ARCH_X86_64;
		tw.pid = 200;
		tw.tid = 201;
		tw.window_index = w;
		tw.sampled_share = 1;
		tw.represented_insns = n;
		tw.t_ns = 1000000u * (uint64_t)w;
		Prof__Envelope e = PROF__ENVELOPE__INIT;
		e.seq = 1 + (uint64_t)w;
		e.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
		e.trace_window = &tw;
		rc = put(st, *sid, &e);
		edag_window_encode_free(&tw);
		if (rc >= 0 && w % 64 == 63)
			rc = store_commit(st);
	}
	free(ins);
	return rc < 0 ? rc : store_commit(st);
}

int rf_add_trace_window(struct store *st, int64_t sid, uint64_t seq, int32_t tid, unsigned per, uint32_t capture,
			uint32_t end_reason)
{
	struct edag_insn *ins = calloc(per + 3, sizeof(*ins));
	if (!ins)
		return -ENOMEM;
	size_t n = chase(ins, per + 3);
	if (n > per)
		n = per;
	Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
	int rc = edag_window_encode(ins, n, &tw);
	free(ins);
	if (rc < 0)
		return rc;
	tw.arch = EDAG_ARCH_X86_64;
	tw.pid = 100;
	tw.tid = tid;
	tw.window_index = (uint32_t)seq;
	tw.sampled_share = 1;
	tw.capture = capture;
	tw.end_reason = end_reason;
	Prof__Envelope e = PROF__ENVELOPE__INIT;
	e.seq = seq;
	e.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
	e.trace_window = &tw;
	rc = put(st, sid, &e);
	edag_window_encode_free(&tw);
	return rc < 0 ? rc : store_commit(st);
}

int rf_add_mapping(struct store *st, int64_t sid, uint64_t seq, int32_t pid, uint64_t start, uint64_t end,
		   const char *path)
{
	Prof__Mapping m = PROF__MAPPING__INIT, *mp[1] = {&m};
	m.id = 1;
	m.pid = pid;
	m.start = start;
	m.end = end;
	m.path = (char *)path;
	Prof__Samples sm = PROF__SAMPLES__INIT;
	sm.n_new_mappings = 1;
	sm.new_mappings = mp;
	Prof__Envelope e = PROF__ENVELOPE__INIT;
	e.seq = seq;
	e.body_case = PROF__ENVELOPE__BODY_SAMPLES;
	e.samples = &sm;
	int rc = store_put_record(st, sid, &e, 100);
	return rc < 0 ? rc : store_commit(st);
}

int rf_add_heartbeat(struct store *st, int64_t sid, uint64_t seq)
{
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	int rc = store_put_record(st, sid, &env, 10);
	return rc < 0 ? rc : store_commit(st);
}
