#include "report/gpu.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_attrib.h"
#include "json.h"
#include "report/cl_data.h"
#include "report/report.h"
#include "report/svg.h"
#include "report/text_safe.h"

/* enum mali_role (agent/gpu/mali_gpu.h), as GpuCounterDesc.role carries it */
enum { R_GPU_ACTIVE = 1, R_CORE_ACTIVE, R_COMPUTE_ACTIVE, R_ARITH, R_LS, R_TEX, R_READ_BEATS, R_WRITE_BEATS };

void gpu_report_free(struct gpu_report *r)
{
	store_gpu_free(&r->s);
	free(r->k);
	memset(r, 0, sizeof(*r));
}

static struct gpu_kernel_row *row_for(struct gpu_report *r, const char *name)
{
	for (size_t i = 0; i < r->nk; i++)
		if (!strcmp(r->k[i].name, name))
			return &r->k[i];
	struct gpu_kernel_row *n = realloc(r->k, (r->nk + 1) * sizeof(*n));
	if (!n)
		return NULL;
	r->k = n;
	memset(&r->k[r->nk], 0, sizeof(r->k[0]));
	snprintf(r->k[r->nk].name, sizeof(r->k[0].name), "%s", name);
	return &r->k[r->nk++];
}

static double role_sum(const struct store_gpu_series *s, const double *v, uint32_t role)
{
	double t = 0;
	for (size_t c = 0; c < s->ncols; c++)
		if (s->cols[c].role == role)
			t += v[c];
	return t;
}

int gpu_report_load(struct store *st, int64_t sid, struct gpu_report *r)
{
	memset(r, 0, sizeof(*r));
	int rc = store_gpu_load(st, sid, &r->s);
	if (rc < 0 || r->s.nrows == 0 || r->s.ncols == 0)
		return rc;
	/* The whole session's totals, whatever ran. */
	{
		struct gpu_kernel_row *t = &r->session;
		snprintf(t->name, sizeof(t->name), "(session)");
		double *v = calloc(r->s.ncols, sizeof(*v));
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < r->s.nrows; i++)
			for (size_t c = 0; c < r->s.ncols; c++)
				v[c] += (double)r->s.values[i * r->s.ncols + c];
		t->time_ns = r->s.t1[r->s.nrows - 1] - r->s.t0[0];
		t->gpu_active = role_sum(&r->s, v, R_GPU_ACTIVE);
		t->core_active = role_sum(&r->s, v, R_CORE_ACTIVE);
		t->compute_active = role_sum(&r->s, v, R_COMPUTE_ACTIVE);
		t->arith = role_sum(&r->s, v, R_ARITH);
		t->ls = role_sum(&r->s, v, R_LS);
		t->tex = role_sum(&r->s, v, R_TEX);
		t->read_beats = role_sum(&r->s, v, R_READ_BEATS);
		t->write_beats = role_sum(&r->s, v, R_WRITE_BEATS);
		t->dram_bytes = (t->read_beats + t->write_beats) * r->s.bus_bytes;
		t->words_per_byte = t->dram_bytes > 0 ? t->arith / t->dram_bytes : 0;
		t->words_per_s = t->time_ns ? t->arith / ((double)t->time_ns / 1e9) : 0;
		free(v);
	}
	struct cl_data cd;
	rc = cl_data_load(st, sid, &cd);
	if (rc < 0)
		return rc;
	size_t nk = 0;
	uint64_t *k0 = calloc(cd.n + 1, sizeof(*k0)), *k1 = calloc(cd.n + 1, sizeof(*k1));
	size_t *which = calloc(cd.n + 1, sizeof(*which));
	double *out = calloc((cd.n + 1) * r->s.ncols, sizeof(*out));
	double *un = calloc(r->s.ncols, sizeof(*un));
	if (!k0 || !k1 || !which || !out || !un) {
		rc = -ENOMEM;
		goto done;
	}
	/* Kernel launches on the host clock: device start/end + the session's
	 * device -> host offset. */
	for (size_t i = 0; i < cd.n; i++) {
		const struct store_cl_command_row *c = &cd.cmds[i].r;
		if (c->kernel_id == 0)
			continue;
		int64_t a = (int64_t)c->start_ns + cd.device_to_host_ns,
			b = (int64_t)c->end_ns + cd.device_to_host_ns;
		if (!c->start_ns || c->end_ns <= c->start_ns) {
			/* no device times: the layer's host bracket (enqueue .. completion seen by the layer) */
			a = (int64_t)c->host_enqueue_ns;
			b = (int64_t)c->host_complete_ns;
		}
		if (a < 0 || b <= a)
			continue;
		k0[nk] = (uint64_t)a;
		k1[nk] = (uint64_t)b;
		which[nk++] = i;
	}
	rc = gpu_attrib(r->s.t0, r->s.t1, r->s.values, r->s.nrows, r->s.ncols, k0, k1, nk, out, un);
	if (rc < 0)
		goto done;
	for (size_t j = 0; j < nk; j++) {
		const struct cl_data_cmd *c = &cd.cmds[which[j]];
		struct gpu_kernel_row *k = row_for(r, c->name ? c->name : "?");
		if (!k) {
			rc = -ENOMEM;
			goto done;
		}
		const double *v = &out[j * r->s.ncols];
		k->launches++;
		k->time_ns += cl_data_duration(c);
		k->gpu_active += role_sum(&r->s, v, R_GPU_ACTIVE);
		k->core_active += role_sum(&r->s, v, R_CORE_ACTIVE);
		k->compute_active += role_sum(&r->s, v, R_COMPUTE_ACTIVE);
		k->arith += role_sum(&r->s, v, R_ARITH);
		k->ls += role_sum(&r->s, v, R_LS);
		k->tex += role_sum(&r->s, v, R_TEX);
		k->read_beats += role_sum(&r->s, v, R_READ_BEATS);
		k->write_beats += role_sum(&r->s, v, R_WRITE_BEATS);
		r->launches_attributed++;
	}
	for (size_t i = 0; i < r->nk; i++) {
		struct gpu_kernel_row *k = &r->k[i];
		k->dram_bytes = (k->read_beats + k->write_beats) * r->s.bus_bytes;
		k->words_per_byte = k->dram_bytes > 0 ? k->arith / k->dram_bytes : 0;
		k->words_per_s = k->time_ns ? k->arith / ((double)k->time_ns / 1e9) : 0;
		r->total_arith += k->arith;
	}
	r->unattributed_arith = role_sum(&r->s, un, R_ARITH);
	r->total_arith += r->unattributed_arith;
done:
	free(k0), free(k1), free(which), free(out), free(un);
	cl_data_free(&cd);
	if (rc < 0)
		gpu_report_free(r);
	return rc;
}

static const char *unit(const struct gpu_report *r)
{
	return strcmp(r->s.arch, "Midgard") == 0 ? "arithmetic instruction words" : "instructions issued";
}

static void gpu_text(const struct gpu_report *r, FILE *out)
{
	if (r->s.nrows == 0) {
		fprintf(out, "GPU counters: none in this session (agent run --gpu on a board with a Mali "
			     "kbase driver)\n");
		return;
	}
	fprintf(out,
		"GPU counters: Mali-%s (%s), gpu_id 0x%08x, %d cores, %u-byte external bus, %s, %llu dumps "
		"(%llu late) every %u us\n",
		r->s.family, r->s.arch, r->s.gpu_id, __builtin_popcountll(r->s.shader_present),
		r->s.bus_bytes, r->s.iface, (unsigned long long)r->s.dumps,
		(unsigned long long)r->s.late_dumps, r->s.interval_ns / 1000);
	fprintf(out, "  per kernel (counts attributed to launches by time overlap; work = %s, not FLOPs):\n",
		unit(r));
	fprintf(out, "  %-28s %8s %10s %12s %12s %12s %12s %12s %12s %12s %10s %10s\n", "kernel", "launches",
		"time ms", "gpu active", "core active", "arith", "load/store", "texture", "rd beats",
		"wr beats", "words/B", "Gwords/s");
	for (size_t i = 0; i < r->nk; i++) {
		const struct gpu_kernel_row *k = &r->k[i];
		fprintf(out,
			"  %-28.28s %8llu %10.3f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %10.4f "
			"%10.4f\n",
			k->name, (unsigned long long)k->launches, (double)k->time_ns / 1e6, k->gpu_active,
			k->core_active, k->arith, k->ls, k->tex, k->read_beats, k->write_beats,
			k->words_per_byte, k->words_per_s / 1e9);
	}
	{
		const struct gpu_kernel_row *k = &r->session;
		fprintf(
		    out,
		    "  %-28.28s %8s %10.3f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %12.0f %10.4f %10.4f\n",
		    k->name, "-", (double)k->time_ns / 1e6, k->gpu_active, k->core_active, k->arith, k->ls,
		    k->tex, k->read_beats, k->write_beats, k->words_per_byte, k->words_per_s / 1e9);
	}
	if (r->total_arith > 0)
		fprintf(out,
			"  %.1f%% of the arithmetic words fell in dumps without a kernel of this session\n",
			100.0 * r->unattributed_arith / r->total_arith);
	fprintf(out,
		"  (session) = every dump of the session, time = its span; roofline dot per kernel: x = "
		"words/B ((rd + wr beats) x %u B of DRAM traffic), y = words/s\n",
		r->s.bus_bytes);
}

static void kernel_json(const struct gpu_report *r, const struct gpu_kernel_row *k, FILE *out)
{
	fputc('{', out);
	json_str_key(out, 1, "name", k->name);
	json_u64_key(out, 0, "launches", k->launches);
	json_u64_key(out, 0, "time_ns", k->time_ns);
#define D(key, v)                                                                                            \
	json_key(out, 0, key);                                                                               \
	json_double(out, v)
	D("gpu_active_cycles", k->gpu_active);
	D("core_active_cycles", k->core_active);
	D("compute_active_cycles", k->compute_active);
	D("arith", k->arith);
	D("load_store", k->ls);
	D("texture", k->tex);
	double nc = (double)__builtin_popcountll(r->s.shader_present);
	D("arith_per_core", nc > 0 ? k->arith / nc : 0);
	D("load_store_per_core", nc > 0 ? k->ls / nc : 0);
	D("texture_per_core", nc > 0 ? k->tex / nc : 0);
	D("ext_read_beats", k->read_beats);
	D("ext_write_beats", k->write_beats);
	D("dram_bytes", k->dram_bytes);
	json_key(out, 0, "roofline");
	fputc('{', out);
	json_num_key(out, 1, "words_per_byte", k->words_per_byte);
	D("words_per_s", k->words_per_s);
	fputc('}', out);
#undef D
	fputc('}', out);
}

void gpu_report_json(const struct gpu_report *r, FILE *out)
{
	fputc('{', out);
	json_str_key(out, 1, "family", r->s.nrows ? r->s.family : NULL);
	json_str_key(out, 0, "arch", r->s.nrows ? r->s.arch : NULL);
	json_u64_key(out, 0, "gpu_id", r->s.gpu_id);
	json_u64_key(out, 0, "shader_present", r->s.shader_present);
	json_u64_key(out, 0, "cores", (uint64_t)__builtin_popcountll(r->s.shader_present));
	json_u64_key(out, 0, "bus_bytes", r->s.bus_bytes);
	json_str_key(out, 0, "interface", r->s.iface);
	json_u64_key(out, 0, "interval_ns", r->s.interval_ns);
	json_u64_key(out, 0, "dumps", r->s.dumps);
	json_u64_key(out, 0, "late_dumps", r->s.late_dumps);
	json_u64_key(out, 0, "rows", r->s.nrows);
	json_str_key(out, 0, "work_unit", r->s.nrows ? unit(r) : NULL);
	json_num_key(out, 0, "unattributed_arith", r->unattributed_arith);
	json_key(out, 0, "session");
	kernel_json(r, &r->session, out);
	json_key(out, 0, "kernels");
	fputc('[', out);
	for (size_t i = 0; i < r->nk; i++) {
		if (i)
			fputc(',', out);
		kernel_json(r, &r->k[i], out);
	}
	fputs("]}", out);
}

int report_gpu(struct store *st, int64_t sid, const struct report_opts *o, FILE *out)
{
	struct gpu_report gr;
	int rc = gpu_report_load(st, sid, &gr);
	if (rc < 0)
		return rc;
	if (o->json)
		gpu_report_json(&gr, out);
	else
		rc = gpu_report_text(&gr, out);
	gpu_report_free(&gr);
	return rc;
}

int gpu_report_text(const struct gpu_report *r, FILE *out)
{
	FILE *t = text_safe_open(out); /* kernel names are the agent's */
	gpu_text(r, t);
	return text_safe_close(t, out);
}

bool report_gpu_present(struct store *st, int64_t sid)
{
	struct store_gpu_series g;
	bool yes = store_gpu_load(st, sid, &g) == 0 && g.nrows > 0;
	store_gpu_free(&g);
	return yes;
}

static void widen(double *lo, double *hi, double v)
{
	if (v <= 0)
		return;
	if (*lo == 0 || v < *lo)
		*lo = v;
	if (v > *hi)
		*hi = v;
}

int gpu_report_svg(const struct gpu_report *r, FILE *out)
{
	double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
	for (size_t i = 0; i <= r->nk; i++) {
		const struct gpu_kernel_row *k = i < r->nk ? &r->k[i] : &r->session;
		if (k->words_per_byte > 0 && k->words_per_s > 0) {
			widen(&x0, &x1, k->words_per_byte);
			widen(&y0, &y1, k->words_per_s);
		}
	}
	if (x1 <= 0 || y1 <= 0)
		return -ENODATA;
	/* whole decades around the dots */
	x0 = pow(10, floor(log10(x0)) - (x0 == x1 ? 1 : 0));
	x1 = pow(10, ceil(log10(x1)) + (x0 * 10 >= x1 ? 1 : 0));
	y0 = pow(10, floor(log10(y0)) - 1);
	y1 = pow(10, ceil(log10(y1)) + 1);
	const int w = 760, h = 480;
	char title[160];
	snprintf(title, sizeof(title), "Mali-%s: counter-derived dots (%s per DRAM byte)", r->s.family,
		 unit(r));
	svg_begin(out, w, h, title);
	struct svg_plot p = {x0, x1, y0, y1, true, true, 80, 40, w - 120, h - 100};
	svg_axes(out, &p, "intensity: arithmetic words / DRAM byte", "arithmetic words / s");
	for (size_t i = 0; i <= r->nk; i++) {
		const struct gpu_kernel_row *k = i < r->nk ? &r->k[i] : &r->session;
		if (k->words_per_byte <= 0 || k->words_per_s <= 0)
			continue;
		double cx = svg_px(&p, k->words_per_byte), cy = svg_py(&p, k->words_per_s);
		char data[256];
		snprintf(data, sizeof(data), "data-name=\"%s\" data-i=\"%.6g\" data-p=\"%.6g\"",
			 i < r->nk ? "kernel" : "session", k->words_per_byte, k->words_per_s);
		svg_circle(out, cx, cy, 5, i < r->nk ? "#c0392b" : "#7f8c8d", "gpu-dot", data);
		svg_text(out, cx + 8, i < r->nk ? cy - 6 : cy + 14, "start", 11, "#222", "gpu-dot-label",
			 k->name);
	}
	svg_end(out);
	return 0;
}

char *gpu_report_svg_string(struct store *st, int64_t sid)
{
	struct gpu_report gr;
	if (gpu_report_load(st, sid, &gr) < 0)
		return NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc = m ? gpu_report_svg(&gr, m) : -ENOMEM;
	if (m && fclose(m) != 0)
		rc = -EIO;
	gpu_report_free(&gr);
	if (rc < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
