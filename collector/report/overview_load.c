/* Loading a session for the overview: store reads, then the analyses
 * (collector/roofline, sensitivity.c; the eDAG section: overview_sens.c). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib/calib_io.h"
#include "cl_data.h"
#include "gpu.h"
#include "log.h"
#include "log_once.h"
#include "net.h"
#include "overview.h"
#include "program_name.h"
#include "report.h"
#include "store/store_opencl.h"
#include "store/store_target.h"
#include "signame.h"
#include "store/store_calib.h"
#include "store/store_trace.h"
#include "views/profile_page.h"
#include "work_model.h"

#define PERF_TYPE_HW 0u
#define PERF_TYPE_HW_CACHE 3u
#define PERF_TYPE_RAW_EV 4u

void overview_note(struct overview *ov, const char *fmt, ...)
{
	if (ov->nnotes >= OV_MAX_NOTES)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ov->notes[ov->nnotes++], OV_NOTE_MAX, fmt, ap);
	va_end(ap);
}

bool overview_past_deadline(const struct overview *ov)
{
	uint64_t d = ov->deadline_ns ? atomic_load(ov->deadline_ns) : 0;
	return d && clock_mono_ns() >= d;
}

static void copy(char *dst, size_t len, const char *s)
{
	snprintf(dst, len, "%s", s ? s : "");
}

static int read_text(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -errno;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			if (cap >= (8u << 20)) {
				rc = -EFBIG;
				break;
			}
			char *nb = realloc(buf, cap ? cap * 2 : 8192);
			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	if (ferror(f) && rc == 0)
		rc = -EIO;
	fclose(f);
	if (rc < 0) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

/* ---------------------------------------------------------------- board and kernel */

static int session_cb(const struct store_session_row *r, void *arg)
{
	struct overview *ov = arg;
	copy(ov->agent_id, sizeof(ov->agent_id), r->agent_id);
	copy(ov->board, sizeof(ov->board), r->board);
	copy(ov->kernel_release, sizeof(ov->kernel_release), r->kernel_release);
	copy(ov->hostname, sizeof(ov->hostname), r->hostname);
	copy(ov->arch, sizeof(ov->arch), r->machine);
	copy(ov->target, sizeof(ov->target), r->target);
	copy(ov->agent_version, sizeof(ov->agent_version), r->agent_version);
	ov->first_seen = r->first_seen;
	ov->last_seen = r->last_seen;
	ov->records = r->records;
	ov->realtime_ns = r->realtime_ns;
	return 0;
}

static int cpu_cb(const struct store_cpu_row *r, void *arg)
{
	struct overview *ov = arg;
	if (!ov->ncpus++)
		copy(ov->cpu_model, sizeof(ov->cpu_model), r->model);
	return 0;
}

static int gpu_cb(const struct store_gpu_row *r, void *arg)
{
	struct overview *ov = arg;
	if (!ov->ngpus++)
		snprintf(ov->gpu, sizeof(ov->gpu), "%.80s (%.60s, %u CUs)", r->name, r->platform, r->compute_units);
	return 0;
}

/* ---------------------------------------------------------------- calibration */

static int calib_cb(const struct store_calib_param_row *r, void *arg)
{
	struct calib_model *m = arg;
	struct calib_param p = {.value = r->value, .spread = r->spread, .confidence = r->confidence,
				.flagged = r->flagged};
	copy(p.name, sizeof(p.name), r->name);
	copy(p.unit, sizeof(p.unit), r->unit);
	copy(p.method, sizeof(p.method), r->method);
	if (!m->device[0] && r->device[0])
		copy(m->device, sizeof(m->device), r->device);
	calib_model_set(m, &p); /* a full or odd parameter is skipped: the rest still counts */
	return 0;
}

static struct calib_model *calib_of_session(struct store *st, int64_t sid, int *rc)
{
	struct calib_model *m = calloc(1, sizeof(*m));
	if (!m) {
		*rc = -ENOMEM;
		return NULL;
	}
	int n = store_calib_params(st, sid, calib_cb, m);
	if (n > 0 && m->nparams > 0) {
		copy(m->source, sizeof(m->source), "stored Calibration records");
		return m;
	}
	*rc = n < 0 && n != -ENOENT ? n : 0;
	free(m);
	return NULL;
}

/* The board's calibration before the one the report uses (same profile), compared with it:
 * a new calibration replaces the previous one for every later session, and the report
 * says when that moved its key figures beyond their spread (issue 42). */
static void calib_against_previous(struct store *st, struct overview *ov)
{
	int64_t prev = 0;
	bool later = false;
	int rc = 0;
	if (store_calib_for_session(st, ov->calib_session, &prev, &later) != 1 || later)
		return;
	struct calib_model *pm = calib_of_session(st, prev, &rc);
	if (!pm)
		return;
	ov->calib_drift.prev_session = prev;
	if (store_session_last_seen(st, prev, &ov->calib_drift.prev_time) < 0)
		ov->calib_drift.prev_time = 0;
	calib_drift_compare(pm, ov->calib, &ov->calib_drift);
	free(pm);
}

/* The calibration: --machine FILE (an override), else the session's own
 * Calibration records, else the latest calibration of its profile (same agent
 * id, board and machine: store_calib_for_session). */
static int load_calibration(struct store *st, int64_t sid, const struct overview_opts *o, struct overview *ov)
{
	int rc = 0;
	if (o->machine) {
		char *json = NULL;
		size_t len = 0;
		rc = read_text(o->machine, &json, &len);
		if (rc < 0) {
			log_error("cannot read the machine model %s: %s", o->machine, strerror(-rc));
			return -EINVAL;
		}
		char err[256];
		/* the EDAN part (alpha0, m, caches), whatever else the file holds */
		/* the warnings once per file (report --sensitivity loads it for every session) */
		char once[300];
		snprintf(once, sizeof(once), "machine %s", o->machine);
		bool say = log_once(once);
		if (edag_machine_parse(json, len, &ov->edag, err, sizeof(err)) < 0) {
			if (say)
				log_warn("%s: no eDAG machine parameters used: %s", o->machine, err);
		}
		else
			snprintf(ov->edag_source, sizeof(ov->edag_source), "--machine %.200s", o->machine);
		struct calib_model *m = calloc(1, sizeof(*m));
		if (!m) {
			free(json);
			return -ENOMEM;
		}
		int prc = calib_model_parse_json(json, len, m, err, sizeof(err));
		if (prc == 0 && m->nparams > 0) {
			snprintf(ov->calib_source, sizeof(ov->calib_source), "--machine %.200s (%zu parameters)",
				 o->machine, m->nparams);
			ov->calib = m;
		} else {
			/* parsed but without calibration parameters (an eDAG-only model): err was not set */
			if (say)
				log_warn("%s: not a calibrated machine model (%s): no roofline ceilings from it",
					 o->machine, prc < 0 ? err : "no calibration parameters");
			free(m);
		}
		free(json);
		if (ov->calib)
			return 0;
	}
	if ((ov->calib = calib_of_session(st, sid, &rc))) {
		ov->calib_session = sid;
		snprintf(ov->calib_source, sizeof(ov->calib_source), "this session's calibration records (%zu parameters)",
			 ov->calib->nparams);
		calib_against_previous(st, ov);
		return 0;
	}
	if (rc < 0)
		return rc;
	int64_t cs = 0;
	bool later = false;
	rc = store_calib_for_session(st, sid, &cs, &later);
	if (rc < 0)
		return rc;
	if (rc == 1 && (ov->calib = calib_of_session(st, cs, &rc))) {
		ov->calib_session = cs;
		char made[40] = "";
		if (store_session_last_seen(st, cs, &ov->calib_time) == 0 && ov->calib_time > 0) {
			struct tm tm;
			time_t t = (time_t)ov->calib_time;
			if (gmtime_r(&t, &tm))
				strftime(made, sizeof(made), "made %Y-%m-%dT%H:%M:%SZ; ", &tm);
		}
		snprintf(ov->calib_source, sizeof(ov->calib_source),
			 "session %lld, the %s calibration of this board (%sagent %.60s, board %.40s; %zu parameters)",
			 (long long)cs, later ? "first (made after this session)" : "latest", made, ov->agent_id,
			 ov->board[0] ? ov->board : "-", ov->calib->nparams);
		calib_against_previous(st, ov);
		return 0;
	}
	return rc < 0 ? rc : 0;
}

#define CAL_L3_MAX_BYTES (32u << 20) /* a larger last level is left out of the model (memory, time) */

/* The CPU's data caches of the calibration (cpu_cache_l*_*, from sysfs) as the
 * eDAG cache model, when no --machine gave one. Hit latencies are not
 * measured: 4, 12 and 40 cycles are assumed, and the source says so. */
static void caches_from_calib(struct overview *ov)
{
	static const uint32_t hit[3] = {4, 12, 40};
	struct edag_config cfg = ov->edag;
	cfg.nlevels = 0;
	for (int lv = 1; lv <= 3 && cfg.nlevels < EDAG_MAX_LEVELS; lv++) {
		char k[48];
		snprintf(k, sizeof(k), "cpu_cache_l%d_bytes", lv);
		double b = calib_model_value(ov->calib, k, NAN);
		snprintf(k, sizeof(k), "cpu_cache_l%d_ways", lv);
		double w = calib_model_value(ov->calib, k, NAN);
		snprintf(k, sizeof(k), "cpu_cache_l%d_line_bytes", lv);
		double l = calib_model_value(ov->calib, k, NAN);
		if (!(b > 0 && w > 0 && l > 0) || b > (lv == 3 ? CAL_L3_MAX_BYTES : (1u << 30)))
			break;
		struct edag_cache_level *c = &cfg.level[cfg.nlevels++];
		memset(c, 0, sizeof(*c));
		snprintf(c->name, sizeof(c->name), lv == 1 ? "L1d" : "L%d", lv);
		c->size = (uint64_t)b;
		c->assoc = (uint32_t)w;
		c->line = (uint32_t)l;
		c->latency = hit[lv - 1];
		char err[128];
		if (edag_config_check(&cfg, err, sizeof(err)) < 0) {
			cfg.nlevels--; /* keep the levels above it */
			break;
		}
	}
	if (cfg.nlevels == 0)
		return;
	ov->edag.nlevels = cfg.nlevels;
	memcpy(ov->edag.level, cfg.level, sizeof(cfg.level));
	snprintf(ov->edag_source, sizeof(ov->edag_source),
		 "the calibration's CPU caches (sizes from the kernel; hit latencies 4/12/40 cycles assumed)");
}

/* EDAN inputs from the calibration when no --machine gave them. */
static void edag_from_calib(struct overview *ov, bool machine_given)
{
	copy(ov->sens_unit, sizeof(ov->sens_unit), "cost units");
	if (machine_given && ov->edag_source[0])
		copy(ov->edag_params_from, sizeof(ov->edag_params_from), ov->edag_source);
	else
		snprintf(ov->edag_params_from, sizeof(ov->edag_params_from),
			 "the eDAG engine's defaults (alpha0 %u, m %g): no calibration gives mem_latency_cycles or "
			 "mem_issue_slots",
			 ov->edag.alpha0, ov->edag.m);
	if (!ov->calib)
		return;
	if (ov->edag.nlevels == 0) /* --machine gave no caches */
		caches_from_calib(ov);
	double a0 = calib_model_value(ov->calib, "mem_latency_cycles", NAN);
	double slots = calib_model_value(ov->calib, "mem_issue_slots", NAN);
	double ns = calib_model_value(ov->calib, "mem_latency_ns", NAN);
	if (!machine_given && isfinite(a0) && a0 >= 1 && a0 < (1u << 24))
		ov->edag.alpha0 = (uint32_t)lround(a0);
	if (!machine_given && isfinite(slots) && slots >= 1)
		ov->edag.m = slots;
	bool a0_ok = isfinite(a0) && a0 >= 1 && a0 < (1u << 24), m_ok = isfinite(slots) && slots >= 1;
	if (!machine_given && (a0_ok || m_ok)) {
		char sess[48] = "";
		if (ov->calib_session > 0)
			snprintf(sess, sizeof(sess), " of session %lld", (long long)ov->calib_session);
		snprintf(ov->edag_params_from, sizeof(ov->edag_params_from), "the calibration%s (%s%s%s)%s", sess,
			 a0_ok ? "mem_latency_cycles" : "", a0_ok && m_ok ? ", " : "", m_ok ? "mem_issue_slots" : "",
			 a0_ok && m_ok ? "" : a0_ok ? "; m: the engine's default" : "; alpha0: the engine's default");
	}
	ov->edag.alpha = ov->edag.alpha0;
	if (isfinite(a0) && a0 > 0 && (double)ov->edag.alpha0 == round(a0)) {
		copy(ov->sens_unit, sizeof(ov->sens_unit), "cycles");
		if (isfinite(ns) && ns > 0)
			ov->sens_ns_per_unit = ns / round(a0);
	}
}

/* ---------------------------------------------------------------- CPU dot */

struct cpu_acc {
	struct work_cpu w;
	int best;
	unsigned hw_events, nevents;
	char hw_names[128];
	uint64_t instructions; /* the hardware instructions counter's total, 0 if none */
};

static int event_cb(const struct store_event_summary *ev, void *arg)
{
	struct cpu_acc *a = arg;
	a->nevents++;
	if (ev->type == PERF_TYPE_HW || ev->type == PERF_TYPE_HW_CACHE || ev->type == PERF_TYPE_RAW_EV) {
		a->hw_events++;
		size_t n = strlen(a->hw_names);
		snprintf(a->hw_names + n, sizeof(a->hw_names) - n, "%s%s", n ? "," : "", ev->name);
	}
	if (ev->type == PERF_TYPE_HW && ev->config == 1 /* PERF_COUNT_HW_INSTRUCTIONS */)
		a->instructions = ev->total;
	work_cpu_add(&a->w, ev->name, ev->total, &a->best);
	return 0;
}

/* A reason into why (cut to fit, like overview_note). */
static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

/* The CPU dot from the session's counters: true when placed; else why not, into why (the
 * caller notes it, or, when the work model places a dot instead, says that). */
static bool cpu_dot(struct store *st, int64_t sid, struct overview *ov, char *why, size_t whylen)
{
	struct cpu_acc a;
	memset(&a, 0, sizeof(a));
	if (store_event_summaries(st, sid, event_cb, &a) < 0)
		return false;
	if (a.nevents == 0) {
		say(why, whylen, "no counters in this session: no CPU dot (capture with agent profile, or agent stat)");
		return false;
	}
	if (a.hw_events == 0) {
		say(why, whylen, "no hardware counters (the session has software events only)");
		return false;
	}
	if (!a.w.have_flops && a.instructions > 0 && ov->trace_insns > 0) {
		/* No FP event (an x86 host, a core without VFP_SPEC): the counted instructions x the share
		 * of floating-point instructions in the session's trace windows. */
		a.w.W = (double)a.instructions * (double)ov->trace_flops / (double)ov->trace_insns;
		a.w.have_flops = ov->trace_flops > 0;
		snprintf(a.w.flops_from, sizeof(a.w.flops_from), "instructions x FP share %.3g of %llu traced",
			 (double)ov->trace_flops / (double)ov->trace_insns, (unsigned long long)ov->trace_insns);
	}
	if (!a.w.have_flops || !a.w.have_bytes) {
		say(why, whylen,
			      "CPU dot: the counters (%s) have no %s events: record FP events (VFP_SPEC/ASE_SPEC, "
			      "fp_arith_inst_retired.*; or instructions plus trace windows, as agent profile does) and "
			      "L2D_CACHE_REFILL/LLC misses",
			      a.hw_names, !a.w.have_flops ? "floating-point" : "memory-traffic");
		return false;
	}
	double line = ov->calib ? calib_model_value(ov->calib, "cpu_line_bytes", 64) : 64;
	work_cpu_finish(&a.w, line);
	if (!(a.w.seconds > 0)) {
		say(why, whylen, "CPU dot: no task-clock event, so no CPU time to divide the work by");
		return false;
	}
	if (!(a.w.W > 0) || !(a.w.Q > 0)) {
		/* Issue 30, 7: the events were recorded but read 0 (an emulated PMU such as QEMU's,
		 * which counts only cycles and instructions, or a core without them): W/Q is no number. */
		say(why, whylen,
			      "CPU dot: %s read 0 (W = %.3g FLOP from %s, Q = %.3g bytes from %s): this core or the "
			      "emulator does not count them, so there is no intensity to place",
			      !(a.w.W > 0) && !(a.w.Q > 0) ? "the floating-point and traffic counters"
			      : !(a.w.W > 0)		   ? "the floating-point counters"
							   : "the traffic counters",
			      a.w.W, a.w.flops_from, a.w.Q, a.w.bytes_from);
		return false;
	}
	if (!roofline_complete(&ov->roof_cpu)) {
		say(why, whylen, "CPU dot: I = %.3g FLOP/byte, %.3g GFLOP/s, but no CPU roof (calibrate the CPU)",
			      a.w.W / a.w.Q, a.w.W / a.w.seconds / 1e9);
		return false;
	}
	struct rl_dot *d = &ov->dots[ov->ndots];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%.60s", ov->target[0] ? ov->target : "process");
	d->cpu = true;
	snprintf(d->source, sizeof(d->source), "counters: W from %.60s, Q from %.50s x %g B", a.w.flops_from,
		 a.w.bytes_from, line);
	int prc = roofline_place(&ov->roof_cpu, a.w.W, a.w.Q, a.w.seconds, &d->p);
	if (prc != 0) {
		say(why, whylen, "CPU dot: not placed (W = %.3g, Q = %.3g, %.3g s: %s)", a.w.W, a.w.Q, a.w.seconds,
			      strerror(-prc));
		return false;
	}
	ov->ndots++;
	return true;
}

/* No dot from counters (no hardware PMU, as in most VMs): the CPU functions of the work
 * model, "cpu:FUNCTION ops=N bytes=N" lines (totals over the run, not per work-item), over
 * the CPU time their samples show (each sample x its record's period). */
static void cpu_dot_from_model(struct store *st, int64_t sid, const struct overview_opts *o, struct overview *ov)
{
	if (!o->kernel_model)
		return;
	struct kernel_model_entry *e = NULL;
	size_t n = 0;
	char err[512];
	if (kernel_model_load(o->kernel_model, &e, &n, err, sizeof(err)) < 0)
		return; /* kernel_dots() says why */
	for (size_t i = 0; i < n && ov->ndots < OV_MAX_DOTS; i++) {
		const char *fn = e[i].name;
		if (strncmp(fn, "cpu:", 4) != 0)
			continue;
		fn += 4;
		uint64_t samples = 0;
		int64_t freq = 0;
		uint64_t ns = 0;
		if (report_function_samples(st, sid, o->symfs, fn, &samples, &freq, &ns) < 0 || samples == 0 || freq <= 0) {
			overview_note(ov, "CPU dot of %.60s: %s", fn,
				      freq <= 0 ? "no CPU samples at a known frequency in this session"
						: "no CPU samples resolved to that function");
			continue;
		}
		/* each sample at the period its record gives (a timer's: 1/128 longer than 1/freq,
		 * agent/sampler.c), as pprof */
		double seconds = (double)ns * 1e-9;
		if (!roofline_complete(&ov->roof_cpu)) {
			overview_note(ov, "CPU dot of %.60s: no CPU roof (calibrate the CPU)", fn);
			continue;
		}
		struct rl_dot *d = &ov->dots[ov->ndots];
		memset(d, 0, sizeof(*d));
		snprintf(d->name, sizeof(d->name), "%.50s (CPU)", fn);
		d->cpu = true;
		snprintf(d->source, sizeof(d->source),
			 "work model %.60s: %g ops, %g bytes; time from %llu CPU samples at %lld Hz (no FP or "
			 "memory-traffic counters)",
			 o->kernel_model, e[i].ops, e[i].bytes, (unsigned long long)samples, (long long)freq);
		if (roofline_place(&ov->roof_cpu, e[i].ops, e[i].bytes, seconds, &d->p) == 0)
			ov->ndots++;
	}
	free(e);
}



/* ---------------------------------------------------------------- kernel dots */

struct kmodel {
	struct kernel_model_entry *e;
	size_t n;
};

static int load_kernel_model(const char *path, struct kmodel *km)
{
	char err[512];
	int rc = kernel_model_load(path, &km->e, &km->n, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		return -EINVAL;
	}
	return 0;
}

/* The models sent with the kernel declarations (agent profile --kernel-model). */
static int stored_model_cb(const struct store_cl_kernel_row *r, void *arg)
{
	struct kmodel *km = arg;
	if (!(r->model_ops > 0 || r->model_bytes > 0) || km->n >= KERNEL_MODEL_MAX_ENTRIES)
		return 0;
	struct kernel_model_entry *ne = realloc(km->e, (km->n + 1) * sizeof(*ne));
	if (!ne)
		return -ENOMEM;
	km->e = ne;
	memset(&km->e[km->n], 0, sizeof(km->e[0]));
	copy(km->e[km->n].name, sizeof(km->e[0].name), r->name);
	km->e[km->n].ops = r->model_ops;
	km->e[km->n].bytes = r->model_bytes;
	km->n++;
	return 0;
}

struct kgroup {
	const char *name;
	double seconds, items;
	size_t n;
};

static int kernel_dots(struct store *st, int64_t sid, const struct overview_opts *o, struct overview *ov,
		       size_t *ncmds)
{
	struct cl_data d;
	int rc = cl_data_load(st, sid, &d);
	if (rc < 0)
		return rc == -ENOENT ? 0 : rc;
	*ncmds = d.n;
	struct kmodel km = {0}, stored = {0};
	if (o->kernel_model && (rc = load_kernel_model(o->kernel_model, &km)) < 0) {
		cl_data_free(&d);
		return rc;
	}
	if ((rc = store_cl_kernels(st, sid, stored_model_cb, &stored)) < 0) {
		free(km.e);
		free(stored.e);
		cl_data_free(&d);
		return rc;
	}
	struct kgroup *g = calloc(d.n + 1, sizeof(*g));
	size_t ng = 0;
	for (size_t i = 0; g && i < d.n; i++) {
		const struct cl_data_cmd *c = &d.cmds[i];
		if (c->r.kernel_id == 0)
			continue;
		size_t j = 0;
		while (j < ng && strcmp(g[j].name, c->name) != 0)
			j++;
		if (j == ng)
			g[ng++].name = c->name;
		double items = 1;
		for (uint32_t k = 0; k < c->r.work_dim && k < 3; k++)
			items *= (double)c->r.global_size[k];
		g[j].items += items;
		g[j].seconds += (double)cl_data_duration(c) / 1e9;
		g[j].n++;
	}
	if (!g)
		rc = -ENOMEM;
	if (rc == 0 && ng && !roofline_complete(&ov->roof_gpu))
		overview_note(ov, "OpenCL kernels: no GPU roof (no calibrated peak_gflops and peak_gbps)");
	for (size_t j = 0; rc == 0 && j < ng; j++) {
		const struct kernel_model_entry *e = kernel_model_find(km.e, km.n, g[j].name);
		const char *from = o->kernel_model;
		if (!e) {
			e = kernel_model_find(stored.e, stored.n, g[j].name);
			from = "of the session (agent profile --kernel-model)";
		}
		if (!e) {
			overview_note(ov, "kernel %.60s: no W/Q model: add \"%.60s ops=N bytes=N\" (per work-item) to a "
					  "--kernel-model FILE (of agent profile, or of this command)",
				      g[j].name, g[j].name);
			continue;
		}
		if (!(g[j].seconds > 0)) {
			overview_note(ov, "kernel %.60s: no device time recorded", g[j].name);
			continue;
		}
		if (!roofline_complete(&ov->roof_gpu) || ov->ndots >= OV_MAX_DOTS)
			continue;
		struct rl_dot *dot = &ov->dots[ov->ndots];
		memset(dot, 0, sizeof(*dot));
		copy(dot->name, sizeof(dot->name), g[j].name);
		snprintf(dot->source, sizeof(dot->source),
			 "kernel model %.80s: %g ops, %g bytes per work-item x %.0f work-items; time from %zu OpenCL "
			 "commands",
			 from, e->ops, e->bytes, g[j].items, g[j].n);
		if (roofline_place(&ov->roof_gpu, e->ops * g[j].items, e->bytes * g[j].items, g[j].seconds,
				   &dot->p) == 0)
			ov->ndots++;
		else
			overview_note(ov, "kernel %.60s: W or Q is zero in the model: no dot", g[j].name);
	}
	free(g);
	free(km.e);
	free(stored.e);
	cl_data_free(&d);
	return rc;
}

/* ---------------------------------------------------------------- sections */

static char *capture(int (*fn)(struct store *, int64_t, const struct report_opts *, FILE *), struct store *st,
		     int64_t sid, const struct overview_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	struct report_opts ro = {.json = o->json,
				 .symfs = o->symfs,
				 .debug_dir = o->debug_dir,
				 .kallsyms = o->kallsyms,
				 .limit = o->limit ? o->limit : 20};
	int rc = fn(st, sid, &ro, m);
	if (fclose(m) != 0 || rc < 0) {
		free(buf);
		return NULL;
	}
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	return buf;
}

/* What became of the program: a note when a signal ended it; why it has no OpenCL commands into why. */
static int program_end(struct store *st, int64_t sid, struct overview *ov, char *why, size_t len)
{
	struct store_target_end_row *te = calloc(1, sizeof(*te));
	int rc = te ? store_target_end(st, sid, te) : -ENOMEM;
	if (rc == 1 && te->signal)
		overview_note(ov, "the profiled program %s signal %u (%s)%s%.300s",
			      sig_is_crash((int)te->signal) ? "CRASHED:" : "was killed by", te->signal,
			      sig_name((int)te->signal),
			      te->capture_inside == 3 ? "; the OpenCL capture library was in a call of its own then: " : "",
			      te->capture_inside == 3 ? te->capture_detail : "");
	if (rc == 1)
		snprintf(why, len, "%s", te->opencl_note);
	free(te);
	return rc < 0 ? rc : 0;
}

int overview_edag_settings(struct store *st, int64_t sid, const char *machine, struct overview_edag_settings *out)
{
	memset(out, 0, sizeof(*out));
	struct overview *ov = calloc(1, sizeof(*ov));
	if (!ov)
		return -ENOMEM;
	ov->session = sid;
	edag_config_default(&ov->edag);
	int rc = store_get_session(st, sid, session_cb, ov);
	if (rc == 0)
		rc = load_calibration(st, sid, &(struct overview_opts){.machine = machine}, ov);
	if (rc == 0) {
		edag_from_calib(ov, machine != NULL);
		out->cfg = ov->edag;
		copy(out->unit, sizeof(out->unit), ov->sens_unit);
		copy(out->params_from, sizeof(out->params_from), ov->edag_params_from);
		copy(out->cache_from, sizeof(out->cache_from),
		     ov->edag_source[0] ? ov->edag_source : "no --machine FILE with caches");
	}
	overview_free(ov);
	free(ov);
	return rc;
}

/* What every load starts with: the options' budget and filters, the session's row. */
static int load_start(struct store *st, int64_t sid, const struct overview_opts *o, struct overview *ov)
{
	memset(ov, 0, sizeof(*ov));
	ov->session = sid;
	ov->deadline_ns = o->deadline_ns;
	ov->since_ns = o->since_ns;
	ov->until_ns = o->until_ns;
	ov->pids = o->pids;
	ov->npids = o->npids;
	ov->sens_sink = o->sens_sink;
	ov->sens_sink_arg = o->sens_sink_arg;
	edag_config_default(&ov->edag);
	return store_get_session(st, sid, session_cb, ov);
}

/* The caller's pointers, valid during the load only. */
static void load_end(struct overview *ov)
{
	ov->deadline_ns = NULL;
	ov->pids = NULL;
	ov->sens_sink = NULL;
}

int overview_load_sensitivity(struct store *st, int64_t sid, const struct overview_opts *o, struct overview *ov)
{
	int rc = load_start(st, sid, o, ov);
	if (rc == 0)
		rc = load_calibration(st, sid, o, ov);
	if (rc == 0) {
		edag_from_calib(ov, o->machine != NULL);
		ov->symfs = o->symfs;
		rc = overview_sensitivity(st, sid, ov);
	}
	load_end(ov);
	return rc;
}

int overview_load(struct store *st, int64_t sid, const struct overview_opts *o, struct overview *ov)
{
	int rc = load_start(st, sid, o, ov);
	if (rc < 0)
		return rc;
	store_list_cpus(st, sid, cpu_cb, ov);
	store_list_gpus(st, sid, gpu_cb, ov);
	if ((rc = load_calibration(st, sid, o, ov)) < 0)
		return rc;
	edag_from_calib(ov, o->machine != NULL);
	if (ov->calib) {
		roofline_from_calib(ov->calib, true, &ov->roof_cpu);
		roofline_from_calib(ov->calib, false, &ov->roof_gpu);
	} else {
		overview_note(ov,
			      "no calibration of this board (agent %.60s, board %.40s): run `agent calibrate --agent-id "
			      "%.60s` on it (its later sessions then use it), or pass --machine FILE",
			      ov->agent_id, ov->board[0] ? ov->board : "-", ov->agent_id);
	}
	size_t ncmds = 0;
	if ((rc = kernel_dots(st, sid, o, ov, &ncmds)) < 0)
		goto fail;
	char why_none[1025] = "";
	if ((rc = program_end(st, sid, ov, why_none, sizeof(why_none))) < 0)
		goto fail;
	ov->symfs = o->symfs;
	if (overview_past_deadline(ov) || (rc = overview_sensitivity(st, sid, ov)) < 0) {
		rc = rc < 0 ? rc : -ETIMEDOUT;
		goto fail;
	}
	char why_no_cpu[OV_NOTE_MAX] = "";
	if (!cpu_dot(st, sid, ov, why_no_cpu, sizeof(why_no_cpu))) { /* after the traces: their FP share may
								       * stand in for an FP counter */
		size_t dots0 = ov->ndots;
		cpu_dot_from_model(st, sid, o, ov);
		/* one statement about the CPU dot: where it came from, or why there is none */
		if (ov->ndots > dots0)
			overview_note(ov, "the CPU dot is from the work model (cpu: lines of --kernel-model), not from the "
					  "counters: %s", why_no_cpu);
		else if (strstr(why_no_cpu, "no hardware counters") == why_no_cpu)
			overview_note(ov, "%s: no CPU dot from counters (cpu:FUNCTION lines in --kernel-model place one "
					  "from a work model)", why_no_cpu);
		else if (why_no_cpu[0])
			overview_note(ov, "%s", why_no_cpu);
	}
	for (size_t i = 0; i < ov->ndots; i++)
		if (ov->dots[i].p.fraction > 1)
			overview_note(ov,
				      "%.60s is ABOVE its roof (%.3g%% of the attainable %.4g GFLOP/s): no program beats the "
				      "roof, so its W/Q model is wrong (%s) or the %s ceiling is too low (recalibrate)",
				      ov->dots[i].name, ov->dots[i].p.fraction * 100, ov->dots[i].p.attainable,
				      ov->dots[i].cpu ? "the FP or refill events over- or under-count"
						      : "check ops= and bytes= in the kernel model",
				      ov->dots[i].cpu ? "CPU" : "GPU");
	if (o->sections && overview_past_deadline(ov)) {
		rc = -ETIMEDOUT;
		goto fail;
	}
	if (o->sections) {
		ov->top = capture(report_top, st, sid, o);
		if (!o->json) {
			/* the flame graph and callers/callees of the session's CPU samples (HTML) */
			struct query_opts qo;
			query_opts_init(&qo, 0);
			qo.f.sessions[0] = sid;
			qo.f.nsessions = 1;
			qo.symfs = o->symfs;
			qo.debug_dir = o->debug_dir;
			qo.kallsyms = o->kallsyms;
			if (profile_flame_fragment(st, &qo, "flame", &ov->flame_html) < 0)
				overview_note(ov, "the flame graph could not be rendered");
			query_opts_free(&qo);
		}
		/* sessions without commands say why (what the agent found), or how to make some */
		const char *why = why_none[0] ? why_none : "capture them with `agent profile -- ./app`";
		if (ncmds)
			ov->opencl = capture(report_opencl, st, sid, o);
		else if (o->json)
			ov->opencl = strdup("{\"commands\":0}");
		else if (asprintf(&ov->opencl, "OpenCL: no commands in session %lld (%s)", (long long)sid, why) < 0)
			ov->opencl = NULL;
		if (report_gpu_present(st, sid)) {
			ov->gpu_counters = capture(report_gpu, st, sid, o);
			ov->gpu_svg = gpu_report_svg_string(st, sid);
			overview_note(ov, "Mali counters: per-kernel dots in arithmetic instruction words per DRAM byte "
					  "are in the GPU counters section (Mali counts instruction words, not FLOPs; "
					  "this FLOP chart takes them only through --kernel-model)");
		}
	}
	load_end(ov);
	return 0;
fail:
	load_end(ov);
	overview_free(ov);
	return rc;
}

void overview_free(struct overview *ov)
{
	free(ov->calib);
	free(ov->top);
	free(ov->opencl);
	free(ov->gpu_counters);
	free(ov->gpu_svg);
	free(ov->flame_html);
	ov->gpu_counters = ov->gpu_svg = ov->flame_html = NULL;
	ov->calib = NULL;
	ov->top = ov->opencl = NULL;
}
