/* HTML rendering of the overview: one self-contained page, the charts as
 * inline SVG (see overview.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "overview.h"
#include "report/sens_plot.h"
#include "report/svg.h"

int overview_roofline_svg(const struct overview *ov, bool gpu, FILE *f)
{
	const struct roofline *roof = gpu ? &ov->roof_gpu : &ov->roof_cpu;
	if (!roofline_complete(roof))
		return -ENODATA;
	struct rl_dot dots[OV_MAX_DOTS];
	size_t n = 0;
	for (size_t i = 0; i < ov->ndots; i++)
		if (ov->dots[i].cpu != gpu)
			dots[n++] = ov->dots[i];
	char title[160];
	snprintf(title, sizeof(title), "Roofline: %s (session %lld)", roof->device, (long long)ov->session);
	return roofline_plot_svg(f, roof, gpu ? NULL : ov->walls, gpu ? 0 : ov->nwalls, dots, n, title);
}

/* Render a text block through fn into memory, then write it escaped in <pre>. */
static void pre(FILE *f, void (*fn)(const struct overview *, FILE *), const struct overview *ov)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return;
	fn(ov, m);
	fclose(m);
	fputs("<pre>", f);
	svg_escape(f, buf);
	fputs("</pre>\n", f);
	free(buf);
}

static void pre_text(FILE *f, const char *s, const char *none)
{
	fputs("<pre>", f);
	svg_escape(f, s ? s : none);
	fputs("</pre>\n", f);
}

static void calib_block(const struct overview *ov, FILE *f)
{
	if (!ov->calib) {
		fputs("none: run agent calibrate or pass --machine FILE\n", f);
		return;
	}
	fprintf(f, "%s\n", ov->calib_source);
	calib_drift_text(&ov->calib_drift, ov->calib_session, "", f);
	int nw = 4, uw = 4;
	for (size_t i = 0; i < ov->calib->nparams; i++) {
		const struct calib_param *p = &ov->calib->params[i];
		nw = strlen(p->name) > (size_t)nw ? (int)strlen(p->name) : nw;
		uw = strlen(p->unit) > (size_t)uw ? (int)strlen(p->unit) : uw;
	}
	for (size_t i = 0; i < ov->calib->nparams; i++) {
		const struct calib_param *p = &ov->calib->params[i];
		fprintf(f, "  %-*s %12.6g %-*s %s%s\n", nw, p->name, p->value, uw, p->unit, p->method,
			p->flagged ? "  (flagged)" : "");
	}
}

int overview_html(const struct overview *ov, FILE *f)
{
	fprintf(f, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>session %lld report</title>\n",
		(long long)ov->session);
	fputs("<style>body{font-family:sans-serif;margin:1.5em;max-width:1100px}pre{background:#f6f6f6;"
	      "padding:.6em;overflow-x:auto}h2{border-bottom:1px solid #ccc}.note{color:#a33}"
	      "figure{display:inline-block;margin:.5em}</style></head><body>\n",
	      f);
	fprintf(f, "<h1>Session %lld</h1>\n<p id=\"board\">", (long long)ov->session);
	fputs("Target <b>", f);
	svg_escape(f, ov->target[0] ? ov->target : "-");
	fputs("</b> on ", f);
	svg_escape(f, ov->hostname);
	fputs(" (board ", f);
	svg_escape(f, ov->board);
	fputs(", kernel ", f);
	svg_escape(f, ov->kernel_release);
	if (ov->ncpus) {
		fprintf(f, "), %u CPUs: ", ov->ncpus);
		svg_escape(f, ov->cpu_model);
	} else {
		fputs("), CPUs not reported", f);
	}
	fputs("; GPU: ", f);
	svg_escape(f, ov->ngpus ? ov->gpu : "none reported");
	fputs("</p>\n<h2 id=\"top\">Top functions</h2>\n", f);
	pre_text(f, ov->top, "not available");
	if (ov->flame_html) {
		fputs("<h2 id=\"flame-graph\">CPU flame graph, callers and callees</h2>\n", f);
		fputs(ov->flame_html, f);
	}
	fputs("<h2 id=\"opencl\">OpenCL kernels</h2>\n", f);
	pre_text(f, ov->opencl, "not available");
	if (ov->gpu_counters) {
		fputs("<h2 id=\"gpu-counters\">Mali GPU counters per kernel</h2>\n", f);
		if (ov->gpu_svg)
			fprintf(f, "<figure class=\"plot gpu-dots\">\n%s</figure>\n", ov->gpu_svg);
		pre_text(f, ov->gpu_counters, "not available");
	}
	fputs("<h2 id=\"roofline\">Roofline</h2>\n", f);
	for (int gpu = 1; gpu >= 0; gpu--) {
		fprintf(f, "<figure class=\"plot roofline-%s\">\n", gpu ? "gpu" : "cpu");
		if (overview_roofline_svg(ov, gpu, f) < 0)
			fprintf(f, "<p class=\"note\">no %s roof calibrated</p>\n", gpu ? "GPU" : "CPU");
		fputs("</figure>\n", f);
	}
	pre(f, overview_roofline_text, ov);
	fputs("<h2 id=\"sensitivity\">Latency sensitivity</h2>\n", f);
	pre(f, overview_sensitivity_text, ov);
	for (size_t i = 0; i < ov->nsens; i++) {
		fputs("<figure class=\"plot sensitivity\">\n", f);
		bool ns = ov->sens_ns_per_unit > 0;
		sens_plot_svg(f, &ov->sens[i], ns ? "ns" : ov->sens_unit, ns ? ov->sens_ns_per_unit : 1);
		fputs("</figure>\n", f);
	}
	fputs("<h2 id=\"calibration\">Calibration</h2>\n", f);
	pre(f, calib_block, ov);
	fputs("</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
