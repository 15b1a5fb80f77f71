/* W and Q for roofline dots (see work_model.h). */
#include "work_model.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	double flops, lines;
	int prio;
} events[] = {
	{"fp_arith_inst_retired.scalar_single", 1, 0, 0},
	{"fp_arith_inst_retired.scalar_double", 1, 0, 0},
	{"fp_arith_inst_retired.128b_packed_double", 2, 0, 0},
	{"fp_arith_inst_retired.128b_packed_single", 4, 0, 0},
	{"fp_arith_inst_retired.256b_packed_double", 4, 0, 0},
	{"fp_arith_inst_retired.256b_packed_single", 8, 0, 0},
	{"fp_arith_inst_retired.512b_packed_double", 8, 0, 0},
	{"fp_arith_inst_retired.512b_packed_single", 16, 0, 0},
	{"vfp_spec", 1, 0, 0},
	{"ase_spec", 4, 0, 0},
	{"fp_fixed_ops_spec", 1, 0, 0},
	{"fp_scale_ops_spec", 1, 0, 0},
	{"l2d_cache_refill", 0, 1, 1},
	{"l2d_cache_wb", 0, 1, 1},
	{"llc_load_misses", 0, 1, 2},
	{"llc_store_misses", 0, 1, 2},
	{"cache_misses", 0, 1, 3},
};

static void canon(const char *in, char *out, size_t len)
{
	size_t i = 0;
	for (; in[i] && i + 1 < len; i++)
		out[i] = in[i] == '-' ? '_' : (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
}

bool work_event_classify(const char *name, struct work_event *out)
{
	char c[96];
	canon(name, c, sizeof(c));
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (strcmp(c, events[i].name) == 0) {
			out->flops_per_count = events[i].flops;
			out->lines_per_count = events[i].lines;
			out->priority = events[i].prio;
			return true;
		}
	return false;
}

static void append(char *dst, size_t len, const char *name)
{
	size_t n = strlen(dst);
	snprintf(dst + n, len - n, "%s%s", n ? "+" : "", name);
}

void work_cpu_add(struct work_cpu *w, const char *name, uint64_t total, int *best_priority)
{
	struct work_event e;
	char c[96];
	canon(name, c, sizeof(c));
	if (strcmp(c, "task_clock") == 0) {
		w->seconds += (double)total / 1e9;
		return;
	}
	if (!work_event_classify(name, &e))
		return;
	if (e.flops_per_count > 0) {
		w->W += e.flops_per_count * (double)total;
		w->have_flops = true;
		append(w->flops_from, sizeof(w->flops_from), name);
		return;
	}
	if (*best_priority != 0 && e.priority > *best_priority)
		return;
	if (*best_priority == 0 || e.priority < *best_priority) {
		w->Q = 0; /* a better kind of traffic event: start over */
		w->bytes_from[0] = '\0';
		*best_priority = e.priority;
	}
	w->Q += e.lines_per_count * (double)total;
	w->have_bytes = true;
	append(w->bytes_from, sizeof(w->bytes_from), name);
}

void work_cpu_finish(struct work_cpu *w, double line_bytes)
{
	w->Q *= line_bytes;
}
