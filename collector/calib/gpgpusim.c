/* GPGPU-sim configuration from a machine model: the options the seed's
 * Table 2 sets (clusters, cores per cluster, registers, pipeline, dl1, clock,
 * DRAM latency) come from measured parameters; everything else, and every
 * option whose parameter is unknown, is the base config's, and says so. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib_io.h"

/* Approximates the QuadroFX5800 example config of GPGPU-sim 3.x (the seed's
 * baseline); pass the real file of your GPGPU-sim tree as the base. */
static const char builtin_base[] = "-gpgpu_n_clusters 10\n"
				   "-gpgpu_n_cores_per_cluster 3\n"
				   "-gpgpu_n_mem 8\n"
				   "-gpgpu_clock_domains 325.0:650.0:650.0:800.0\n"
				   "-gpgpu_shader_registers 16384\n"
				   "-gpgpu_shader_core_pipeline 1024:32\n"
				   "-gpgpu_shader_cta 8\n"
				   "-gpgpu_simd_model 1\n"
				   "-gpgpu_cache:dl1 none\n"
				   "-gpgpu_cache:dl2 none\n"
				   "-gpgpu_cache:il1 4:256:4,L:R:f:N,A:2:32,4\n"
				   "-gpgpu_tex_cache:l1 8:128:5,L:R:m:N,F:128:4,128:2\n"
				   "-gpgpu_const_cache:l1 64:64:2,L:R:f:N,A:2:32,4\n"
				   "-dram_latency 30\n";

#define MAX_OPTS 256
#define DL1_POLICY "L:L:m:N,A:32:8,8"

struct opt {
	char name[64];
	char value[192];
	char why[1200];
	bool measured;
};

struct cfg {
	struct opt o[MAX_OPTS];
	size_t n;
};

static struct opt *find(struct cfg *c, const char *name)
{
	for (size_t i = 0; i < c->n; i++)
		if (strcmp(c->o[i].name, name) == 0)
			return &c->o[i];
	return NULL;
}

static void parse_base(struct cfg *c, const char *text)
{
	const char *s = text;
	while (*s && c->n < MAX_OPTS) {
		const char *eol = strchr(s, '\n');
		size_t len = eol ? (size_t)(eol - s) : strlen(s);
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) ? len : sizeof(line) - 1), s);
		s += len + (eol ? 1 : 0);
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char *name = strtok(line, " \t\r");
		if (!name || name[0] != '-')
			continue;
		char *val = strtok(NULL, "\r");
		while (val && (*val == ' ' || *val == '\t'))
			val++;
		struct opt *o = find(c, name);
		if (!o)
			o = &c->o[c->n++];
		snprintf(o->name, sizeof(o->name), "%s", name);
		snprintf(o->value, sizeof(o->value), "%s", val ? val : "");
		size_t vl = strlen(o->value);
		while (vl && (o->value[vl - 1] == ' ' || o->value[vl - 1] == '\t'))
			o->value[--vl] = 0;
	}
}

static struct opt *slot(struct cfg *c, const char *name)
{
	struct opt *o = find(c, name);
	if (!o && c->n < MAX_OPTS) {
		o = &c->o[c->n++];
		snprintf(o->name, sizeof(o->name), "%s", name);
	}
	return o;
}

static void set(struct cfg *c, const char *name, const char *value, const char *why)
{
	struct opt *o = slot(c, name);
	if (!o)
		return;
	snprintf(o->value, sizeof(o->value), "%s", value);
	snprintf(o->why, sizeof(o->why), "%s", why);
	o->measured = true;
}

static void keep(struct cfg *c, const char *name, const char *why)
{
	struct opt *o = find(c, name);
	if (o && !o->measured)
		snprintf(o->why, sizeof(o->why), "kept from the base config: %s", why);
}

/* "name = value unit (method[, flagged])" for comments */
static void src(char *buf, size_t len, const struct calib_param *p)
{
	snprintf(buf, len, "%s = %g %s (%s%s)", p->name, p->value, p->unit, p->method,
		 p->flagged ? "; FLAGGED: spread or confidence out of bounds" : "");
}

int calib_gpgpusim_write(const struct calib_model *m, const char *base, FILE *f)
{
	struct cfg *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	parse_base(c, base ? base : builtin_base);
	char why[1200], v[192];
	const struct calib_param *cu = calib_model_get(m, "compute_units");
	if (cu && cu->value >= 1) {
		snprintf(v, sizeof(v), "%.0f", cu->value);
		src(why, sizeof(why), cu);
		set(c, "-gpgpu_n_clusters", v, why);
		set(c, "-gpgpu_n_cores_per_cluster", "1",
		    "one SIMT core per cluster: each OpenCL compute unit is one core");
	} else {
		keep(c, "-gpgpu_n_clusters", "compute_units not measured");
		keep(c, "-gpgpu_n_cores_per_cluster", "compute_units not measured");
	}
	const struct calib_param *rcu = calib_model_get(m, "regs_per_cu");
	const struct calib_param *rwi = calib_model_get(m, "regs_per_work_item");
	const struct calib_param *gr = calib_model_get(m, "granularity");
	const struct calib_param *tpc = calib_model_get(m, "threads_per_cu");
	if (rcu && rcu->value >= 1) {
		snprintf(v, sizeof(v), "%.0f", rcu->value);
		src(why, sizeof(why), rcu);
		set(c, "-gpgpu_shader_registers", v, why);
	} else {
		keep(c, "-gpgpu_shader_registers", "regs_per_cu not measured");
	}
	double threads = tpc ? tpc->value : (rcu && rwi && rwi->value >= 1) ? round(rcu->value / rwi->value) : NAN;
	if (isfinite(threads) && threads >= 1 && gr && gr->value >= 1) {
		double warp = gr->value;
		double t = floor(threads / warp) * warp;
		if (t < warp)
			t = warp;
		snprintf(v, sizeof(v), "%.0f:%.0f", t, warp);
		char a[400], b[400];
		if (tpc)
			src(a, sizeof(a), tpc);
		else
			snprintf(a, sizeof(a), "threads per core = regs_per_cu / regs_per_work_item = %g / %g", rcu->value,
				 rwi->value);
		src(b, sizeof(b), gr);
		snprintf(why, sizeof(why), "%s; warp size = %s", a, b);
		set(c, "-gpgpu_shader_core_pipeline", v, why);
	} else {
		keep(c, "-gpgpu_shader_core_pipeline", "threads per core or granularity not measured");
	}
	/* dl1: <nsets>:<line>:<assoc>,<policy> from line, set size (line x assoc) and total size */
	double line = calib_model_value(m, "l1_line_bytes", NAN), size = calib_model_value(m, "l1_size_bytes", NAN);
	double setb = calib_model_value(m, "l1_set_bytes", NAN), assoc = calib_model_value(m, "l1_assoc", NAN);
	if (isnan(setb) && isfinite(assoc) && isfinite(line))
		setb = assoc * line;
	if (isnan(assoc) && isfinite(setb) && isfinite(line))
		assoc = round(setb / line);
	if (isfinite(line) && isfinite(size) && isfinite(setb) && line >= 1 && setb >= line && assoc >= 1) {
		double nsets = round(size / setb);
		if (nsets < 1)
			nsets = 1;
		snprintf(v, sizeof(v), "%.0f:%.0f:%.0f," DL1_POLICY, nsets, line, assoc);
		snprintf(why, sizeof(why),
			 "nsets = l1_size_bytes / set = %g / %g, line = l1_line_bytes = %g, assoc = set / line = %g;"
			 " policy " DL1_POLICY " is GPGPU-sim's usual dl1 policy (not measured)",
			 size, setb, line, assoc);
		set(c, "-gpgpu_cache:dl1", v, why);
	} else {
		keep(c, "-gpgpu_cache:dl1", "l1 line, set or size not measured");
	}
	double l2size = calib_model_value(m, "l2_size_bytes", NAN), l2assoc = calib_model_value(m, "l2_assoc", NAN);
	double l2line = calib_model_value(m, "l2_line_bytes", line);
	if (isfinite(l2size) && isfinite(l2assoc) && isfinite(l2line) && l2assoc >= 1 && l2line >= 1) {
		snprintf(v, sizeof(v), "%.0f:%.0f:%.0f,L:B:m:W,A:32:4,4", round(l2size / (l2line * l2assoc)), l2line,
			 l2assoc);
		snprintf(why, sizeof(why), "from l2_size_bytes %g, l2_line_bytes %g, l2_assoc %g (policy not measured)",
			 l2size, l2line, l2assoc);
		set(c, "-gpgpu_cache:dl2", v, why);
	} else {
		keep(c, "-gpgpu_cache:dl2", "the L2 set structure is not measured: kept from the base configuration");
	}
	const struct calib_param *clk = calib_model_get(m, "clock_mhz");
	struct opt *cd = find(c, "-gpgpu_clock_domains");
	if (clk && clk->value > 0) {
		const char *rest = cd ? strchr(cd->value, ':') : NULL;
		snprintf(v, sizeof(v), "%.1f%s", clk->value, rest ? rest : ":650.0:650.0:800.0");
		src(why, sizeof(why), clk);
		strncat(why, "; interconnect, L2 and DRAM clocks kept from the base config", sizeof(why) - strlen(why) - 1);
		set(c, "-gpgpu_clock_domains", v, why);
	} else {
		keep(c, "-gpgpu_clock_domains", "clock_mhz unknown");
	}
	const struct calib_param *dl = calib_model_get(m, "dram_latency_cycles");
	if (dl && dl->value > 0) {
		snprintf(v, sizeof(v), "%.0f", dl->value);
		src(why, sizeof(why), dl);
		set(c, "-dram_latency", v, why);
	} else {
		keep(c, "-dram_latency", "dram_latency_cycles not measured");
	}
	fprintf(f, "# GPGPU-sim configuration for %s\n", m->device[0] ? m->device : "(unnamed device)");
	fprintf(f, "# generated by `collector calibrate` from the machine model (%s)\n",
		m->source[0] ? m->source : "no source given");
	fprintf(f, "# base: %s\n", base ? "the --base file" : "built-in approximation of GPGPU-sim's QuadroFX5800 example");
	for (size_t i = 0; i < c->n; i++) {
		const struct opt *o = &c->o[i];
		fprintf(f, "\n# %s\n", o->why[0] ? o->why : "kept from the base config");
		fprintf(f, "%s %s\n", o->name, o->value);
	}
	free(c);
	return ferror(f) ? -EIO : 0;
}
