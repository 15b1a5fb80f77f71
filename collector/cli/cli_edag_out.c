/* `collector edag` output: metrics as text or JSON, the graph (Graphviz or
 * JSON) and the bounds sweep CSV. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_edag.h"
#include "json.h"
#include "report/program_name.h"
#include "log.h"

/* ---------------------------------------------------------------- output */

void cli_edag_print_window_text(const struct opts *o, const struct edag_window_result *r, uint64_t unknown, FILE *f)
{
	const struct edag_metrics *mt = &r->mt;
	const struct edag_config *c = &o->cfg;
	struct edag_bounds b;
	edag_bounds(mt, c->m, c->alpha, c->alpha0, &b);
	char who[96];
	thread_label(o->prog, r->info.pid, r->info.tid, who, sizeof(who));
	fprintf(f, "window %u (%s, t %.6f s, share %.4g, %llu instructions):\n", r->info.index, who,
	       (double)r->info.t_ns / 1e9, r->info.share, (unsigned long long)r->n_insns);
	fprintf(f, "  vertices %llu, memory accesses %llu, W %llu memory vertices, D %llu (memory depth)\n",
	       (unsigned long long)mt->vertices, (unsigned long long)mt->accesses, (unsigned long long)mt->W,
	       (unsigned long long)mt->D);
	for (unsigned i = 0; i < c->nlevels; i++)
		fprintf(f, "  %-5s %llu hits, %llu misses (W if it were the last level)\n", c->level[i].name,
		       (unsigned long long)mt->level_hit[i], (unsigned long long)mt->level_miss[i]);
	fprintf(f, "  critical path %llu vertices, cost %llu (C = %llu compute, %llu memory vertices), "
	       "parallelism %.4g\n",
	       (unsigned long long)mt->cp_vertices, (unsigned long long)mt->cp_cost,
	       (unsigned long long)mt->cp_compute, (unsigned long long)mt->cp_memory, mt->parallelism);
	fprintf(f, "  edges: %llu register RAW, %llu memory RAW%s", (unsigned long long)mt->edges_reg,
	       (unsigned long long)mt->edges_mem, c->all_deps ? "" : "\n");
	if (c->all_deps)
		fprintf(f, ", %llu WAR/WAW/RAR\n", (unsigned long long)mt->edges_false);
	fprintf(f, "  m=%g alpha=%g: %.6g <= M <= %.6g; lambda %.6g; Lambda(alpha0=%u) %.4f\n", b.m, b.alpha,
	       b.lower, b.upper, b.lambda, c->alpha0, b.Lambda);
	if (unknown)
		fprintf(f, "  unknown class: %llu vertices (mnemonics the parser does not know: class guessed)\n",
		       (unsigned long long)unknown);
}

static void json_est(FILE *f, int first, const char *key, const struct edag_estimate *e)
{
	json_key(f, first, key);
	fputc('{', f);
	json_num_key(f, 1, "value", e->value);
	json_num_key(f, 0, "lo", e->lo);
	json_num_key(f, 0, "hi", e->hi);
	fputc('}', f);
}

void cli_edag_print_json(const struct opts *o, const struct run *r, const struct edag_approx *ap, bool have_ap)
{
	const struct edag_config *c = &o->cfg;
	FILE *f = stdout;
	fputc('{', f);
	json_key(f, 1, "config");
	fputc('{', f);
	json_key(f, 1, "all_deps");
	fputs(c->all_deps ? "true" : "false", f);
	json_str_key(f, 0, "cache_model", edag_cache_model_name(c));
	json_u64_key(f, 0, "alpha0", c->alpha0);
	json_num_key(f, 0, "m", c->m);
	json_num_key(f, 0, "alpha", c->alpha);
	json_str_key(f, 0, "params_from", cli_edag_params_from(o));
	json_key(f, 0, "caches");
	fputc('[', f);
	for (unsigned i = 0; i < c->nlevels; i++) {
		fputs(i ? ",{" : "{", f);
		json_str_key(f, 1, "name", c->level[i].name);
		json_u64_key(f, 0, "size", c->level[i].size);
		json_u64_key(f, 0, "assoc", c->level[i].assoc);
		json_u64_key(f, 0, "line", c->level[i].line);
		json_u64_key(f, 0, "latency", c->level[i].latency);
		fputc('}', f);
	}
	fputs("]}", f);
	json_key(f, 0, "windows");
	fputc('[', f);
	for (size_t i = 0; i < r->nres; i++) {
		const struct edag_window_result *w = &r->res[i];
		const struct edag_metrics *mt = &w->mt;
		struct edag_bounds b;
		edag_bounds(mt, c->m, c->alpha, c->alpha0, &b);
		fputs(i ? ",{" : "{", f);
		json_u64_key(f, 1, "index", w->info.index);
		json_i64_key(f, 0, "pid", w->info.pid);
		json_i64_key(f, 0, "tid", w->info.tid);
		json_u64_key(f, 0, "t_ns", w->info.t_ns);
		json_num_key(f, 0, "share", w->info.share);
		json_u64_key(f, 0, "represented_insns", w->info.represented_insns);
		json_u64_key(f, 0, "capture", w->capture); /* how it was taken, before its metrics */
		json_u64_key(f, 0, "warm_insns", w->warm_insns);
		const char *k[] = {"vertices",	  "accesses", "W",	    "D",
				   "cp_vertices", "cp_cost",  "cp_compute", "cp_memory"};
		uint64_t v[] = {mt->vertices,	 mt->accesses, mt->W,	       mt->D,
				mt->cp_vertices, mt->cp_cost,  mt->cp_compute, mt->cp_memory};
		for (size_t j = 0; j < sizeof(v) / sizeof(v[0]); j++) {
			json_key(f, 0, k[j]);
			json_u64(f, v[j]);
		}
		json_u64_key(f, 0, "W_cold", mt->W_cold);
		json_num_key(f, 0, "D_rate", edag_depth_rate(mt));
		json_u64_key(f, 0, "unknown_class", r->res_unknown[i]);
		json_num_key(f, 0, "parallelism", mt->parallelism);
		json_key(f, 0, "levels");
		fputc('[', f);
		for (unsigned l = 0; l < c->nlevels; l++) {
			fputs(l ? ",{" : "{", f);
			json_u64_key(f, 1, "hits", mt->level_hit[l]);
			json_u64_key(f, 0, "misses", mt->level_miss[l]);
			fputc('}', f);
		}
		fputc(']', f);
		json_num_key(f, 0, "lower", b.lower);
		json_num_key(f, 0, "upper", b.upper);
		json_num_key(f, 0, "lambda", b.lambda);
		json_num_key(f, 0, "Lambda", b.Lambda);
		fputc('}', f);
	}
	fputc(']', f);
	json_key(f, 0, "discarded");
	fputc('{', f);
	json_u64_key(f, 1, "taken", ap->taken);
	json_u64_key(f, 0, "short", ap->discarded_short);
	json_u64_key(f, 0, "cut", ap->discarded_cut);
	json_u64_key(f, 0, "min_insns", EDAG_WINDOW_MIN_INSNS);
	fputc('}', f);
	if (have_ap) {
		json_key(f, 0, "estimate");
		fputc('{', f);
		json_u64_key(f, 1, "windows", ap->windows);
		json_u64_key(f, 0, "sampled_insns", ap->sampled_insns);
		json_num_key(f, 0, "represented_insns", ap->represented_insns);
		json_num_key(f, 0, "coverage", ap->coverage);
		json_key(f, 0, "coverage_known");
		fputs(ap->coverage_known ? "true" : "false", f);
		json_est(f, 0, "V", &ap->V);
		json_est(f, 0, "W", &ap->W);
		json_est(f, 0, "D", &ap->D);
		json_est(f, 0, "cp_vertices", &ap->cp_vertices);
		json_est(f, 0, "C", &ap->cp_compute);
		json_est(f, 0, "lambda", &ap->lambda);
		json_est(f, 0, "Lambda", &ap->Lambda);
		json_est(f, 0, "W_cold", &ap->W_cold);
		json_est(f, 0, "D_series", &ap->D_series);
		json_num_key(f, 0, "lambda_cold_hits", ap->lambda_cold_hits);
		json_num_key(f, 0, "lambda_upper", ap->lambda_upper);
		json_key(f, 0, "cold_bound");
		fputs(ap->cold_bound ? "true" : "false", f);
		json_u64_key(f, 0, "warm_insns", ap->warm_insns);
		json_u64_key(f, 0, "stop_ns", ap->stop_ns);
		json_key(f, 0, "D_per_window");
		fputc('{', f);
		json_num_key(f, 1, "min", ap->D_min);
		json_num_key(f, 0, "mean", ap->D_mean);
		json_num_key(f, 0, "max", ap->D_max);
		fputs("}}", f);
	}
	fputs("}\n", f);
}

/* "2 of 9 windows discarded: 1 shorter than 256 instructions, 1 cut by the stop-time limit" */
static void discarded_line(const struct edag_approx *ap, FILE *f)
{
	size_t d = ap->discarded_short + ap->discarded_cut;
	if (!d)
		return;
	fprintf(f, "  %zu of %zu windows discarded (no vote):", d, ap->taken);
	if (ap->discarded_short)
		fprintf(f, " %zu shorter than %u instructions%s", ap->discarded_short, EDAG_WINDOW_MIN_INSNS,
			ap->discarded_cut ? "," : "");
	if (ap->discarded_cut)
		fprintf(f, " %zu cut by the agent's stop-time limit", ap->discarded_cut);
	fputc('\n', f);
}

void cli_edag_print_discarded_text(const struct edag_approx *ap, FILE *f)
{
	fprintf(f, "no whole-run estimate: no window can vote\n");
	discarded_line(ap, f);
}

void cli_edag_print_approx_text(const struct edag_approx *ap, FILE *f)
{
	fprintf(f, "whole-run estimate from %zu windows (%llu sampled instructions for %.6g represented, "
	       "coverage %.4g%s; "
	       "95%% intervals):\n",
	       ap->windows, (unsigned long long)ap->sampled_insns, ap->represented_insns, ap->coverage,
	       ap->coverage_known ? "" : ", unknown for some windows: taken as 1");
	discarded_line(ap, f);
	const struct edag_estimate *e[] = {&ap->V, &ap->W, &ap->D, &ap->cp_vertices, &ap->lambda, &ap->Lambda};
	const char *n[] = {"vertices", "W", "D", "critical path", "lambda", "Lambda"};
	for (int i = 0; i < 6; i++)
		fprintf(f, "  %-14s %.6g [%.6g, %.6g]%s\n", n[i], e[i]->value, e[i]->lo, e[i]->hi,
		        ap->cold_bound && (i == 1 || i >= 4) ? " (upper bound: cold misses, below)" : "");
	fprintf(f, "  D: steady-state growth of each window (windows in series: %.6g)\n", ap->D_series.value);
	fprintf(f, "  D per window: min %.6g, mean %.6g, max %.6g\n", ap->D_min, ap->D_mean, ap->D_max);
	fprintf(f, "  cold misses (into sets the window had not filled: they might have hit a warmer cache): %.6g, "
	       "%.3g per instruction%s\n",
	       ap->W_cold.value, ap->represented_insns > 0 ? ap->W_cold.value / ap->represented_insns : 0,
	       ap->cold_bound ? "; above 10% of W: W, lambda, Lambda are upper bounds"
			      : "");
	if (ap->cold_bound)
		fprintf(f, "  lambda with the cold misses taken as hits: %.6g; with D's upper side (in series): %.6g\n",
			ap->lambda_cold_hits, ap->lambda_upper);
	if (ap->warm_insns)
		fprintf(f, "  the windows ran %llu instructions before their recorded ones to warm the cache model\n",
		       (unsigned long long)ap->warm_insns);
}

int cli_edag_write_graph(const struct opts *o, const struct edag_graph *g)
{
	static const char *const kinds[] = {"raw_reg", "raw_mem", "false_reg", "false_mem"};
	for (int pass = 0; pass < 2; pass++) {
		const char *path = pass == 0 ? o->dot : o->gjson;
		if (!path)
			continue;
		FILE *f = fopen(path, "w");
		if (!f) {
			log_error("cannot write %s: %s", path, strerror(errno));
			return -errno;
		}
		if (pass == 0) {
			fprintf(f, "digraph edag {\n  node [shape=box, fontname=monospace];\n");
			for (size_t i = 0; i < g->nv; i++) {
				const struct edag_gvertex *v = &g->v[i];
				fprintf(f, "  v%zu [label=\"%zu %s\\n0x%llx\"%s];\n", i, i,
					edag_class_name(v->cls), (unsigned long long)v->pc,
					v->memory ? ", style=filled, fillcolor=salmon" : "");
				for (uint32_t k = 0; k < v->nedges; k++) {
					const struct edag_gedge *e = &g->e[v->first_edge + k];
					fprintf(f, "  v%llu -> v%zu%s;\n", (unsigned long long)e->from, i,
						e->kind >= EDAG_DEP_FALSE_REG ? " [style=dashed]" : "");
				}
			}
			fputs("}\n", f);
		} else {
			fputs("{\"vertices\":[", f);
			for (size_t i = 0; i < g->nv; i++) {
				const struct edag_gvertex *v = &g->v[i];
				fprintf(f,
					"%s{\"id\":%zu,\"pc\":%llu,\"class\":\"%s\",\"memory\":%s,\"hit_"
					"level\":%d,\"cost\":%u",
					i ? "," : "", i, (unsigned long long)v->pc, edag_class_name(v->cls),
					v->memory ? "true" : "false", v->hit_level, v->cost);
				if (v->size)
					fprintf(f, ",\"addr\":%llu,\"size\":%u", (unsigned long long)v->addr,
						v->size);
				fputc('}', f);
			}
			fputs("],\"edges\":[", f);
			int first = 1;
			for (size_t i = 0; i < g->nv; i++)
				for (uint32_t k = 0; k < g->v[i].nedges; k++) {
					const struct edag_gedge *e = &g->e[g->v[i].first_edge + k];
					fprintf(f, "%s{\"from\":%llu,\"to\":%zu,\"kind\":\"%s\"}",
						first ? "" : ",", (unsigned long long)e->from, i,
						kinds[e->kind & 3]);
					first = 0;
				}
			fputs("]}\n", f);
		}
		if (fclose(f) != 0) {
			log_error("cannot write %s: %s", path, strerror(errno));
			return -EIO;
		}
	}
	return 0;
}

int cli_edag_write_sweep(const struct opts *o, const struct edag_metrics *mt, const char *label, FILE *f)
{
	static const double ms[] = {1, 2, 4, 8, 16, 32, 64};
	static const double af[] = {0.5, 1, 2, 4, 8};
	double as[5];
	for (int i = 0; i < 5; i++)
		as[i] = af[i] * o->cfg.alpha0;
	struct edag_bounds b[7 * 5];
	edag_sweep(mt, o->cfg.alpha0, ms, 7, as, 5, b);
	for (int i = 0; i < 35; i++)
		fprintf(f, "%s,%g,%g,%.9g,%.9g,%.9g,%.9g\n", label, b[i].m, b[i].alpha, b[i].lower,
			b[i].upper, b[i].lambda, b[i].Lambda);
	return 0;
}
