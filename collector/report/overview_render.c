/* Text and JSON renderings of the overview (see overview.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "overview.h"
#include "report/cache_model.h"
#include "report/text_safe.h"

/* Calibration parameters shown in the summary, in this order. */
static const char *const calib_keys[] = {
	"clock_mhz", "compute_units", "peak_gflops", "phys_peak_gflops", "peak_gflops_of_physical", "peak_gbps",
	"phys_peak_gbps", "peak_gbps_of_physical", "cpu_clock_mhz", "cpu_clock_base_mhz", "cpu_peak_gflops",
	"cpu_phys_peak_gflops", "cpu_peak_gflops_of_physical", "cpu_peak_gbps", "cpu_phys_peak_gbps",
	"cpu_peak_gbps_of_physical", "mem_latency_cycles", "mem_latency_ns", "mem_issue_slots", "l1_line_bytes",
	"l1_size_bytes", "l2_size_bytes", "regs_per_work_item",
};
#define N_CALIB_KEYS (sizeof(calib_keys) / sizeof(calib_keys[0]))

static size_t calib_flagged(const struct calib_model *m)
{
	size_t n = 0;
	for (size_t i = 0; m && i < m->nparams; i++)
		n += m->params[i].flagged;
	return n;
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

/* ---------------------------------------------------------------- text */

static void roof_text(const struct roofline *r, FILE *f)
{
	if (!roofline_complete(r)) {
		fprintf(f, "  %s: no roof (%zu ceilings calibrated, a compute and a bandwidth one are needed)\n",
			r->device, r->n);
		return;
	}
	fprintf(f, "  %s: pi = %.4g GFLOP/s, beta = %.4g GB/s, ridge point pi/beta = %.4g FLOP/byte\n", r->device,
		roofline_pi(r), roofline_beta(r), roofline_ridge(r));
	for (size_t i = 0; i < r->n; i++)
		fprintf(f, "    %-9s %-28s %10.4g %-7s (%s)\n",
			r->c[i].kind == ROOFLINE_COMPUTE ? "compute" : "bandwidth", r->c[i].name, r->c[i].value,
			r->c[i].kind == ROOFLINE_COMPUTE ? "GFLOP/s" : "GB/s", r->c[i].source);
}

static void roofline_text(const struct overview *ov, FILE *f)
{
	fprintf(f, "roofline (P = min(pi, beta*I)):\n");
	fprintf(f, "  ceilings from: %s\n", ov->calib ? ov->calib_source : "no calibration (run agent calibrate on the board, or pass --machine FILE)");
	calib_drift_text(&ov->calib_drift, ov->calib_session, "  ", f);
	if (ov->calib) {
		roof_text(&ov->roof_gpu, f);
		roof_text(&ov->roof_cpu, f);
	}
	for (size_t i = 0; i < ov->nwalls; i++)
		fprintf(f, "  locality wall %s: I = %.4g FLOP/byte (traffic missing %s, eDAG cache model)\n",
			ov->walls[i].name, ov->walls[i].intensity, ov->walls[i].name);
	if (ov->ndots)
		fprintf(f, "  %-24s %-4s %11s %11s %11s %9s  %s\n", "dot", "roof", "I FLOP/B", "P GFLOP/s",
			"attainable", "achieved", "bound");
	for (size_t i = 0; i < ov->ndots; i++) {
		const struct rl_dot *d = &ov->dots[i];
		fprintf(f, "  %-24.24s %-4s %11.4g %11.4g %11.4g %8.1f%%  %s%s\n", d->name, d->cpu ? "CPU" : "GPU",
			d->p.intensity, d->p.achieved, d->p.attainable, d->p.fraction * 100,
			roofline_bound_name(d->p.bound), d->p.fraction > 1 ? "  ABOVE ITS ROOF (see the note)" : "");
		fprintf(f, "      W = %.4g FLOP, Q = %.4g B, t = %.4g s; %s\n", d->p.W, d->p.Q, d->p.seconds, d->source);
	}
	for (size_t i = 0; i < ov->nnotes; i++)
		fprintf(f, "  note: %s\n", ov->notes[i]);
}

static void delta_text(const struct overview *ov, const struct sens_row *r, char *buf, size_t len)
{
	if (!isfinite(r->delta10))
		snprintf(buf, len, "never");
	else if (ov->sens_ns_per_unit > 0)
		snprintf(buf, len, "+%.4g %s (%.4g ns)", r->delta10, ov->sens_unit, r->delta10 * ov->sens_ns_per_unit);
	else
		snprintf(buf, len, "+%.4g %s", r->delta10, ov->sens_unit);
}

void overview_edag_params_line(const struct edag_config *cfg, const char *unit, const char *from, char *buf,
			       size_t len)
{
	snprintf(buf, len, "alpha0 = %u %s, m = %g (from %s)", cfg->alpha0, unit, cfg->m, from);
}

static void sensitivity_text(const struct overview *ov, FILE *f)
{
	fprintf(f, "latency sensitivity (eDAG, alpha0 = %u %s, m = %g):\n", ov->edag.alpha0, ov->sens_unit,
		ov->edag.m);
	/* the same settings as `collector edag --store --session` (overview_edag_settings) */
	fprintf(f, "  alpha0 and m from: %s\n", ov->edag_params_from);
	char cm[512];
	cache_model_describe(&ov->edag, ov->edag_source[0] ? ov->edag_source : "no --machine FILE with caches", cm,
			     sizeof(cm));
	fprintf(f, "  cache model: %s\n", cm);
	if (!ov->nsens) {
		fprintf(f, "  %s\n", ov->sens_note[0] ? ov->sens_note : "no traced threads");
		return;
	}
	fprintf(f, "  %-20s %7s %12s %12s %8s %12s %10s %9s  %s\n", "thread", "windows", "W", "D", "W/D", "lambda",
		"Lambda", "Lambda*a0", "added latency costing 10%");
	bool bound = false;
	for (size_t i = 0; i < ov->nsens; i++) {
		const struct sens_row *r = &ov->sens[i];
		char d10[64], share[16];
		delta_text(ov, r, d10, sizeof(d10));
		snprintf(share, sizeof(share), "%s%.3f", r->upper_bound ? "<=" : "", r->mem_share);
		fprintf(f, "  %-20.20s %7zu %12.4g %12.4g %8.3g %12.4g %10.4g %9s  %s%s\n", r->name, r->windows, r->W,
			r->D, r->w_over_d, r->lambda, r->Lambda, share, r->upper_bound ? ">=" : "", d10);
		bound |= r->upper_bound;
	}
	fprintf(f, "  (Lambda*a0 is the relative sensitivity: 0.2 means +50%% latency costs 10%%)\n");
	fprintf(f, "  how each row was obtained (95%% intervals over the windows):\n");
	for (size_t i = 0; i < ov->nsens; i++) {
		const struct sens_row *r = &ov->sens[i];
		fprintf(f, "    %s: %s; lambda %.4g [%.4g, %.4g], Lambda*a0 %.3f [%.3f, %.3f]", r->name, r->how, r->lambda,
			r->lambda_lo, r->lambda_hi, r->mem_share, r->Lambda_lo * r->alpha0, r->Lambda_hi * r->alpha0);
		if (ov->edag.nlevels)
			fprintf(f, "; cold misses %.3g per instruction", r->cold_per_insn);
		if (r->upper_bound)
			fprintf(f, ": UPPER BOUND, the windows cannot support the cache model's W (with the cold misses "
				   "as hits Lambda*a0 would be %.3f)",
				r->Lambda_cold_hits * r->alpha0);
		fputc('\n', f);
	}
	if (ov->nsensf) {
		fprintf(f, "  by function (a thread's Lambda*a0 split by lambda_f; top %zu):\n", ov->nsensf);
		fprintf(f, "    %-32s %-20s %10s %8s %12s %9s  %s\n", "function", "thread", "insns", "W share",
			"lambda/insn", "Lambda*a0", "interval");
		for (size_t i = 0; i < ov->nsensf; i++) {
			const struct sens_func_row *r = &ov->sensf[i];
			char share[16];
			snprintf(share, sizeof(share), "%s%.3f", r->upper_bound ? "<=" : "", r->mem_share);
			bound |= r->upper_bound; /* a row's own cold misses flag it (its thread's may not) */
			fprintf(f, "    %-32.32s %-20.20s %10llu %8.3f %12.4g %9s  [%.3f, %.3f]\n", r->name, r->thread,
				(unsigned long long)r->insns, r->W_share, r->lambda_per_insn, share, r->mem_lo, r->mem_hi);
		}
	}
	if (ov->sens_note[0])
		fprintf(f, "  %s\n", ov->sens_note);
	if (bound)
		fprintf(f, "  (<=: cold misses above 10%% of W: windows that started with an empty cache model; "
			   "replay windows warm it first, agent trace --capture replay; the bound takes the "
			   "windows' D in series, D's upper side)\n");
}

static void section_text(FILE *f, const char *title, const char *body)
{
	fprintf(f, "%s\n", body ? body : title);
}

static void overview_text_raw(const struct overview *ov, FILE *f)
{
	fprintf(f, "session %lld: %s on %s (%s), kernel %s, agent %s %s\n", (long long)ov->session,
		or_dash(ov->target), or_dash(ov->hostname), or_dash(ov->board), or_dash(ov->kernel_release),
		or_dash(ov->agent_id), or_dash(ov->agent_version));
	fprintf(f, "  CPU: %u x %s (%s); GPU: %s; %llu records\n", ov->ncpus, or_dash(ov->cpu_model), or_dash(ov->arch),
		ov->ngpus ? ov->gpu : "none reported", (unsigned long long)ov->records);
	fputc('\n', f);
	section_text(f, "top functions: not available", ov->top);
	fputc('\n', f);
	section_text(f, "OpenCL: not available", ov->opencl);
	fputc('\n', f);
	if (ov->gpu_counters) {
		section_text(f, "", ov->gpu_counters);
		fputc('\n', f);
	}
	roofline_text(ov, f);
	fputc('\n', f);
	sensitivity_text(ov, f);
	fputc('\n', f);
	fprintf(f, "calibration: %s\n", ov->calib ? ov->calib_source : "none (run agent calibrate or pass --machine)");
	calib_drift_text(&ov->calib_drift, ov->calib_session, "  ", f);
	int nw = 4, uw = 4; /* the name and unit columns as wide as their longest entry */
	for (size_t i = 0; ov->calib && i < N_CALIB_KEYS; i++) {
		const struct calib_param *p = calib_model_get(ov->calib, calib_keys[i]);
		if (p && strlen(p->name) > (size_t)nw)
			nw = (int)strlen(p->name);
		if (p && strlen(p->unit) > (size_t)uw)
			uw = (int)strlen(p->unit);
	}
	for (size_t i = 0; ov->calib && i < N_CALIB_KEYS; i++) {
		const struct calib_param *p = calib_model_get(ov->calib, calib_keys[i]);
		if (p)
			fprintf(f, "  %-*s %12.6g %-*s%s\n", nw, p->name, p->value, uw, p->unit, p->flagged ? "  (flagged)" : "");
	}
	if (ov->calib)
		fprintf(f, "  %zu parameters, %zu flagged as untrustworthy\n", ov->calib->nparams, calib_flagged(ov->calib));
}

/* The text renderings write through the control-character filter (text_safe.h):
 * the board, agent, program, kernel and thread names are the agent's. */
int overview_text(const struct overview *ov, FILE *f)
{
	FILE *t = text_safe_open(f);
	overview_text_raw(ov, t);
	return text_safe_close(t, f);
}

void overview_roofline_text(const struct overview *ov, FILE *f)
{
	FILE *t = text_safe_open(f);
	roofline_text(ov, t);
	text_safe_close(t, f);
}

void overview_sensitivity_text(const struct overview *ov, FILE *f)
{
	FILE *t = text_safe_open(f);
	sensitivity_text(ov, t);
	text_safe_close(t, f);
}

/* ---------------------------------------------------------------- JSON */

static void roof_json(FILE *f, const struct roofline *r)
{
	fputc('{', f);
	json_str_key(f, 1, "device", r->device);
	json_num_key(f, 0, "pi_gflops", roofline_pi(r));
	json_num_key(f, 0, "beta_gbps", roofline_beta(r));
	json_num_key(f, 0, "ridge_flops_per_byte", roofline_ridge(r));
	json_key(f, 0, "ceilings");
	fputc('[', f);
	for (size_t i = 0; i < r->n; i++) {
		fputs(i ? ",{" : "{", f);
		json_str_key(f, 1, "kind", r->c[i].kind == ROOFLINE_COMPUTE ? "compute" : "bandwidth");
		json_str_key(f, 0, "name", r->c[i].name);
		json_num_key(f, 0, "value", r->c[i].value);
		json_str_key(f, 0, "unit", r->c[i].kind == ROOFLINE_COMPUTE ? "GFLOP/s" : "GB/s");
		json_str_key(f, 0, "source", r->c[i].source);
		fputc('}', f);
	}
	fputs("]}", f);
}

/* An embedded section: its own JSON object when it is one, else a string. */
static void embed(FILE *f, const char *s)
{
	if (s && s[0] == '{' && !strchr(s, '\n'))
		fputs(s, f);
	else
		json_string(f, s);
}

int overview_json(const struct overview *ov, FILE *f)
{
	fputc('{', f);
	json_str_key(f, 1, "schema", OV_JSON_SCHEMA);
	json_i64_key(f, 0, "session", ov->session);
	json_key(f, 0, "board");
	fputc('{', f);
	json_str_key(f, 1, "agent_id", ov->agent_id);
	json_str_key(f, 0, "board", ov->board);
	json_str_key(f, 0, "hostname", ov->hostname);
	json_str_key(f, 0, "kernel", ov->kernel_release);
	json_str_key(f, 0, "arch", ov->arch);
	json_str_key(f, 0, "target", ov->target);
	json_str_key(f, 0, "agent_version", ov->agent_version);
	json_str_key(f, 0, "cpu_model", ov->cpu_model);
	json_u64_key(f, 0, "cpus", ov->ncpus);
	json_str_key(f, 0, "gpu", ov->ngpus ? ov->gpu : NULL);
	json_u64_key(f, 0, "records", ov->records);
	fputc('}', f);
	json_key(f, 0, "top");
	embed(f, ov->top);
	json_key(f, 0, "opencl");
	embed(f, ov->opencl);
	if (ov->gpu_counters) {
		json_key(f, 0, "gpu_counters");
		embed(f, ov->gpu_counters);
	}
	json_key(f, 0, "roofline");
	fputc('{', f);
	json_key(f, 1, "gpu");
	if (ov->calib)
		roof_json(f, &ov->roof_gpu);
	else
		fputs("null", f);
	json_key(f, 0, "cpu");
	if (ov->calib)
		roof_json(f, &ov->roof_cpu);
	else
		fputs("null", f);
	json_key(f, 0, "walls");
	fputc('[', f);
	for (size_t i = 0; i < ov->nwalls; i++) {
		fputs(i ? ",{" : "{", f);
		json_str_key(f, 1, "name", ov->walls[i].name);
		json_num_key(f, 0, "intensity", ov->walls[i].intensity);
		fputc('}', f);
	}
	fputs("]", f);
	json_key(f, 0, "dots");
	fputc('[', f);
	for (size_t i = 0; i < ov->ndots; i++) {
		const struct rl_dot *d = &ov->dots[i];
		fputs(i ? ",{" : "{", f);
		json_str_key(f, 1, "name", d->name);
		json_str_key(f, 0, "roof", d->cpu ? "cpu" : "gpu");
		json_num_key(f, 0, "W_flop", d->p.W);
		json_num_key(f, 0, "Q_bytes", d->p.Q);
		json_num_key(f, 0, "seconds", d->p.seconds);
		json_num_key(f, 0, "intensity", d->p.intensity);
		json_num_key(f, 0, "achieved_gflops", d->p.achieved);
		json_num_key(f, 0, "attainable_gflops", d->p.attainable);
		json_num_key(f, 0, "fraction", d->p.fraction);
		json_str_key(f, 0, "bound", roofline_bound_name(d->p.bound));
		json_str_key(f, 0, "source", d->source);
		fputc('}', f);
	}
	fputs("]", f);
	json_key(f, 0, "notes");
	fputc('[', f);
	for (size_t i = 0; i < ov->nnotes; i++) {
		if (i)
			fputc(',', f);
		json_string(f, ov->notes[i]);
	}
	fputs("]}", f);
	json_key(f, 0, "sensitivity");
	fputc('{', f);
	json_u64_key(f, 1, "alpha0", ov->edag.alpha0);
	json_num_key(f, 0, "m", ov->edag.m);
	json_str_key(f, 0, "unit", ov->sens_unit);
	json_str_key(f, 0, "params_from", ov->edag_params_from);
	json_num_key(f, 0, "ns_per_unit", ov->sens_ns_per_unit > 0 ? ov->sens_ns_per_unit : NAN);
	json_str_key(f, 0, "note", ov->sens_note[0] ? ov->sens_note : NULL);
	json_u64_key(f, 0, "windows_without_row", ov->sens_windows_no_row);
	{
		char cm[512];
		cache_model_describe(&ov->edag, ov->edag_source[0] ? ov->edag_source : "no --machine FILE with caches",
				     cm, sizeof(cm));
		json_str_key(f, 0, "cache_model", cm);
	}
	json_key(f, 0, "threads");
	fputc('[', f);
	for (size_t i = 0; i < ov->nsens; i++) {
		const struct sens_row *r = &ov->sens[i];
		fputs(i ? ",{" : "{", f);
		json_str_key(f, 1, "name", r->name);
		json_u64_key(f, 0, "windows", r->windows);
		json_u64_key(f, 0, "insns", r->insns);
		json_u64_key(f, 0, "windows_taken", r->windows_taken);
		json_num_key(f, 0, "W", r->W);
		json_num_key(f, 0, "D", r->D);
		json_num_key(f, 0, "C", r->C);
		json_num_key(f, 0, "W_over_D", r->w_over_d);
		json_num_key(f, 0, "lambda", r->lambda);
		json_num_key(f, 0, "Lambda", r->Lambda);
		json_num_key(f, 0, "Lambda_lo", r->Lambda_lo);
		json_num_key(f, 0, "Lambda_hi", r->Lambda_hi);
		json_num_key(f, 0, "Lambda_alpha0", r->mem_share);
		json_num_key(f, 0, "delta_10pct", r->delta10);
		json_num_key(f, 0, "lambda_lo", r->lambda_lo);
		json_num_key(f, 0, "lambda_hi", r->lambda_hi);
		json_num_key(f, 0, "cold_per_insn", r->cold_per_insn);
		json_key(f, 0, "upper_bound");
		fputs(r->upper_bound ? "true" : "false", f);
		json_str_key(f, 0, "how", r->how);
		fputc('}', f);
	}
	fputc(']', f);
	json_key(f, 0, "functions");
	fputc('[', f);
	for (size_t i = 0; i < ov->nsensf; i++) {
		const struct sens_func_row *r = &ov->sensf[i];
		fputs(i ? ",{" : "{", f);
		json_str_key(f, 1, "name", r->name);
		json_str_key(f, 0, "module", r->module);
		json_str_key(f, 0, "thread", r->thread);
		json_u64_key(f, 0, "insns", r->insns);
		json_num_key(f, 0, "W_share", r->W_share);
		json_num_key(f, 0, "lambda_per_insn", r->lambda_per_insn);
		json_num_key(f, 0, "lambda_per_insn_lo", r->lambda_lo_per_insn);
		json_num_key(f, 0, "Lambda_alpha0", r->mem_share);
		json_num_key(f, 0, "Lambda_alpha0_lo", r->mem_lo);
		json_num_key(f, 0, "Lambda_alpha0_hi", r->mem_hi);
		json_key(f, 0, "upper_bound");
		fputs(r->upper_bound ? "true" : "false", f);
		fputc('}', f);
	}
	fputs("]}", f);
	json_key(f, 0, "calibration");
	if (!ov->calib) {
		fputs("null", f);
	} else {
		fputc('{', f);
		json_str_key(f, 1, "source", ov->calib_source);
		json_key(f, 0, "session");
		if (ov->calib_session > 0)
			json_u64(f, (uint64_t)ov->calib_session);
		else
			fputs("null", f);
		/* the board's calibration before it and the key figures that moved beyond their spread */
		json_key(f, 0, "previous_session");
		if (ov->calib_drift.prev_session > 0)
			json_u64(f, (uint64_t)ov->calib_drift.prev_session);
		else
			fputs("null", f);
		json_key(f, 0, "moved");
		fputc('[', f);
		for (size_t i = 0; i < ov->calib_drift.n; i++) {
			const struct calib_drift_item *m = &ov->calib_drift.moved[i];
			if (i)
				fputc(',', f);
			fputc('{', f);
			json_str_key(f, 1, "name", m->name);
			json_str_key(f, 0, "unit", m->unit);
			json_num_key(f, 0, "before", m->before);
			json_num_key(f, 0, "after", m->after);
			json_num_key(f, 0, "rel", m->rel);
			json_num_key(f, 0, "tolerance", m->tol);
			fputc('}', f);
		}
		fputc(']', f);
		json_str_key(f, 0, "device", ov->calib->device);
		json_u64_key(f, 0, "parameters", ov->calib->nparams);
		json_u64_key(f, 0, "flagged", calib_flagged(ov->calib));
		json_key(f, 0, "summary");
		fputc('{', f);
		int first = 1;
		for (size_t i = 0; i < N_CALIB_KEYS; i++) {
			const struct calib_param *p = calib_model_get(ov->calib, calib_keys[i]);
			if (!p)
				continue;
			json_key(f, first, p->name);
			first = 0;
			fputc('{', f);
			json_num_key(f, 1, "value", p->value);
			json_str_key(f, 0, "unit", p->unit);
			json_key(f, 0, "flagged");
			fputs(p->flagged ? "true" : "false", f);
			fputc('}', f);
		}
		fputs("}}", f);
	}
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}
