#include "calib_model.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "calib_stats.h"
#include "json.h"

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

int calib_model_set(struct calib_model *m, const struct calib_param *p)
{
	if (!p->name[0] || !isfinite(p->value))
		return -EINVAL;
	struct calib_param *slot = NULL;
	for (size_t i = 0; i < m->nparams; i++)
		if (strcmp(m->params[i].name, p->name) == 0)
			slot = &m->params[i];
	if (!slot) {
		if (m->nparams >= CALIB_MODEL_MAX_PARAMS)
			return -ENOSPC;
		slot = &m->params[m->nparams++];
	}
	*slot = *p;
	slot->name[CALIB_NAME_MAX - 1] = slot->unit[CALIB_UNIT_MAX - 1] = slot->method[CALIB_METHOD_MAX - 1] = 0;
	if (!isfinite(slot->spread) || slot->spread < 0)
		slot->spread = isnan(slot->spread) ? 0 : INFINITY;
	slot->confidence = calib_confidence_bounded(slot->confidence, slot->spread);
	slot->flagged = p->flagged || slot->spread > CALIB_SPREAD_MAX || slot->confidence < CALIB_CONFIDENCE_MIN;
	return 0;
}

int calib_model_put(struct calib_model *m, const char *name, double value, const char *unit, const char *method,
		    double spread, double confidence)
{
	struct calib_param p = {.value = value, .spread = spread, .confidence = confidence};
	copy(p.name, sizeof(p.name), name);
	copy(p.unit, sizeof(p.unit), unit);
	copy(p.method, sizeof(p.method), method);
	return calib_model_set(m, &p);
}

const struct calib_param *calib_model_get(const struct calib_model *m, const char *name)
{
	for (size_t i = 0; i < m->nparams; i++)
		if (strcmp(m->params[i].name, name) == 0)
			return &m->params[i];
	return NULL;
}

double calib_model_value(const struct calib_model *m, const char *name, double dflt)
{
	const struct calib_param *p = calib_model_get(m, name);
	return p ? p->value : dflt;
}

size_t calib_model_cache_levels(const struct calib_model *m, struct calib_cache_level *out, size_t max)
{
	size_t n = 0;
	double l1_line = calib_model_value(m, "l1_line_bytes", NAN);
	for (unsigned lv = 1; lv <= CALIB_MODEL_MAX_LEVELS && n < max; lv++) {
		char k[CALIB_NAME_MAX];
		snprintf(k, sizeof(k), "l%u_size_bytes", lv);
		double size = calib_model_value(m, k, NAN);
		if (isnan(size))
			continue;
		struct calib_cache_level *c = &out[n++];
		c->level = lv;
		c->size_bytes = size;
		snprintf(k, sizeof(k), "l%u_line_bytes", lv);
		c->line_bytes = calib_model_value(m, k, l1_line);
		snprintf(k, sizeof(k), "l%u_assoc", lv);
		c->assoc = calib_model_value(m, k, NAN);
		snprintf(k, sizeof(k), "l%u_latency_cycles", lv);
		c->latency_cycles = calib_model_value(m, k, NAN);
	}
	return n;
}

/* ---------------------------------------------------------------- JSON */

static void jnum(FILE *f, double v)
{
	if (!isfinite(v))
		fputs("null", f);
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.6g", v);
}

int calib_model_write_json(const struct calib_model *m, FILE *f)
{
	fputs("{\n  \"schema\": \"prof-machine-model/1\",\n  \"device\": ", f);
	json_string(f, m->device);
	fputs(",\n  \"source\": ", f);
	json_string(f, m->source);
	fputs(",\n  \"params\": {", f);
	for (size_t i = 0; i < m->nparams; i++) {
		const struct calib_param *p = &m->params[i];
		fputs(i ? ",\n    " : "\n    ", f);
		json_string(f, p->name);
		fputs(": {\"value\": ", f);
		jnum(f, p->value);
		fputs(", \"unit\": ", f);
		json_string(f, p->unit);
		fputs(", \"method\": ", f);
		json_string(f, p->method);
		fputs(", \"spread\": ", f);
		jnum(f, p->spread);
		fputs(", \"confidence\": ", f);
		jnum(f, p->confidence);
		fprintf(f, ", \"flagged\": %s}", p->flagged ? "true" : "false");
	}
	fputs(m->nparams ? "\n  },\n  \"cache_levels\": [" : "},\n  \"cache_levels\": [", f);
	struct calib_cache_level lv[CALIB_MODEL_MAX_LEVELS];
	size_t nl = calib_model_cache_levels(m, lv, CALIB_MODEL_MAX_LEVELS);
	for (size_t i = 0; i < nl; i++) {
		fprintf(f, "%s{\"level\": %u, \"size_bytes\": ", i ? ",\n    " : "\n    ", lv[i].level);
		jnum(f, lv[i].size_bytes);
		fputs(", \"line_bytes\": ", f);
		jnum(f, lv[i].line_bytes);
		fputs(", \"assoc\": ", f);
		jnum(f, lv[i].assoc);
		fputs(", \"latency_cycles\": ", f);
		jnum(f, lv[i].latency_cycles);
		fputc('}', f);
	}
	fputs(nl ? "\n  ],\n  \"roofline\": {" : "],\n  \"roofline\": {", f);
	double pi = calib_model_value(m, "peak_gflops", NAN), beta = calib_model_value(m, "peak_gbps", NAN);
	double cpi = calib_model_value(m, "cpu_peak_gflops", NAN), cbeta = calib_model_value(m, "cpu_peak_gbps", NAN);
	fputs("\"peak_gflops\": ", f);
	jnum(f, pi);
	fputs(", \"peak_gbps\": ", f);
	jnum(f, beta);
	fputs(", \"ridge_flops_per_byte\": ", f);
	jnum(f, pi / beta);
	fputs(",\n    \"cpu_peak_gflops\": ", f);
	jnum(f, cpi);
	fputs(", \"cpu_peak_gbps\": ", f);
	jnum(f, cbeta);
	fputs(", \"cpu_ridge_flops_per_byte\": ", f);
	jnum(f, cpi / cbeta);
	/* EDAN cost model inputs, at the top level where collector/edag reads them */
	fputs("},\n  \"alpha0\": ", f);
	double a0 = calib_model_value(m, "mem_latency_cycles", NAN);
	jnum(f, isfinite(a0) ? round(a0) : NAN);
	fputs(",\n  \"m\": ", f);
	jnum(f, calib_model_value(m, "mem_issue_slots", NAN));
	fputs("\n}\n", f);
	return ferror(f) ? -EIO : 0;
}
