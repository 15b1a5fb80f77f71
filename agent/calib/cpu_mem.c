/* Memory latency alpha0 and memory issue slots m of the host CPU, for the
 * EDAN cost model: one thread chases k independent pointer chains through
 * an array much larger than the caches, its 64 B lines in one random cycle
 * over the whole array (every access a random DRAM page: a random miss), on
 * transparent huge pages where the system gives them (so that TLB misses,
 * which a 4 KiB-page array would add to every access, stay few); the method
 * says which pages it got. (Page-clustered order, used before, let 63 of 64
 * accesses hit an open DRAM page and the TLB: it read ~68 ns where a random
 * miss is 213-220 ns.) alpha0 = time per access with one chain; throughput =
 * accesses/s with k chains; m = the k at which throughput stops scaling
 * (reaches 90% of its maximum). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "calib/calib_detect.h"
#include "calib_bench.h"
#include "net.h"

#define NODE 16 /* uints per node: 64 B */

#define CHASE_K(K)                                                                                           \
	__attribute__((no_sanitize("address", "undefined"))) static unsigned chase_##K(const unsigned *next, long steps, const unsigned *start)                   \
	{                                                                                                    \
		unsigned p[K];                                                                               \
		for (int j = 0; j < K; j++)                                                                  \
			p[j] = start[j];                                                                     \
		for (long i = 0; i < steps; i++) {                                                           \
			_Pragma("GCC unroll 16") for (int j = 0; j < K; j++) p[j] = next[p[j]];               \
		}                                                                                            \
		unsigned s = 0;                                                                              \
		for (int j = 0; j < K; j++)                                                                  \
			s += p[j];                                                                           \
		return s;                                                                                    \
	}
CHASE_K(1)
CHASE_K(2)
CHASE_K(3)
CHASE_K(4)
CHASE_K(6)
CHASE_K(8)
CHASE_K(10)
CHASE_K(12)
CHASE_K(16)
CHASE_K(24)
CHASE_K(32)

static const struct {
	int k;
	unsigned (*fn)(const unsigned *, long, const unsigned *);
} chains[] = {{1, chase_1}, {2, chase_2}, {3, chase_3}, {4, chase_4}, {6, chase_6},
	      {8, chase_8}, {10, chase_10}, {12, chase_12}, {16, chase_16}, {24, chase_24}, {32, chase_32}};

struct mem_run {
	const unsigned *next;
	unsigned start[32];
	int idx;
	long steps; /* per chain */
	volatile unsigned sink;
};

static int mem_once(void *arg, double *s)
{
	struct mem_run *m = arg;
	uint64_t t0 = clock_mono_ns();
	m->sink = chains[m->idx].fn(m->next, m->steps, m->start);
	*s = (double)(clock_mono_ns() - t0) / 1e9;
	return 0;
}

/* MiB of this process's anonymous memory on huge pages (/proc/self/smaps_rollup). */
static double huge_mib(void)
{
	FILE *f = fopen("/proc/self/smaps_rollup", "r");
	char line[256];
	double kb = 0;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "AnonHugePages:", 14) == 0)
			kb = strtod(line + 14, NULL);
	if (f)
		fclose(f);
	return kb / 1024;
}

int bench_mem_slots(struct calib_ctx *c, struct calib_result *r)
{
	size_t bytes = (c->quick ? 256u : 512u) << 20;
	size_t nodes = bytes / (NODE * 4);
	double huge0 = huge_mib();
	unsigned *next = aligned_alloc(2u << 20, bytes);
	if (!next) {
		snprintf(r->skipped, sizeof(r->skipped), "cannot allocate %zu MiB", bytes >> 20);
		return -ENOMEM;
	}
#ifdef MADV_HUGEPAGE
	madvise(next, bytes, MADV_HUGEPAGE);
#endif
	cr_chase_cycle(next, nodes, NODE, nodes, 4242); /* one "page" of all nodes: fully random */
	double huge = huge_mib() - huge0;
	/* start points spread along the cycle */
	unsigned *order = malloc(32 * sizeof(unsigned));
	struct mem_run m = {.next = next};
	unsigned p = 0;
	size_t gap = nodes / 32;
	for (int j = 0; j < 32 && order; j++) {
		order[j] = p;
		for (size_t s = 0; s < gap; s++)
			p = next[p];
	}
	for (int j = 0; j < 32; j++)
		m.start[j] = order ? order[j] : (unsigned)(j * NODE);
	free(order);
	long total = c->quick ? 400000 : 2000000; /* accesses per measurement */
	struct calib_curve *cv = cr_curve(r, "throughput_vs_chains", "chains", "accesses/s");
	double lat1 = NAN, lat_sp = 0;
	int rc = 0;
	for (size_t i = 0; i < sizeof(chains) / sizeof(chains[0]); i++) {
		m.idx = (int)i;
		m.steps = total / chains[i].k;
		double v[CR_MAX_REPS];
		if ((rc = cr_repeat(c->reps, mem_once, &m, v)) < 0)
			break;
		if (i == 0) {
			struct calib_stat st;
			double ns[CR_MAX_REPS];
			for (unsigned k = 0; k < c->reps; k++)
				ns[k] = v[k] / (double)m.steps * 1e9;
			calib_stat(ns, c->reps, &st);
			lat1 = st.median;
			lat_sp = st.spread;
		}
		for (unsigned k = 0; k < c->reps; k++)
			v[k] = (double)(m.steps * chains[i].k) / v[k];
		cr_point(cv, chains[i].k, v, c->reps);
	}
	free(next);
	if (rc < 0)
		return rc;
	char method[CALIB_METHOD_MAX];
	snprintf(method, sizeof(method),
		 "random page chase: one chain through %zu MiB, 64 B lines in one random cycle (each access a random"
		 " page), %s",
		 bytes >> 20,
		 huge >= (double)(bytes >> 21) ? "on transparent huge pages (2 MiB): few TLB misses"
					       : "on 4 KiB pages (no huge pages given): TLB misses included");
	cr_param(r, "mem_latency_ns", lat1, "ns", method, lat_sp, 1);
	if (isfinite(c->cpu_mhz))
		cr_param(r, "mem_latency_cycles", lat1 * c->cpu_mhz / 1e3, "cycles", method, lat_sp, 1);
	struct calib_detect d;
	calib_detect_saturation(cv->x, cv->y, cv->n, 0.9, &d);
	double per[CR_MAX_REPS], y[CR_MAX_POINTS];
	for (unsigned k = 0; k < cv->reps; k++) {
		struct calib_detect dk;
		cr_rep_y(cv, k, y);
		calib_detect_saturation(cv->x, y, cv->n, 0.9, &dk);
		per[k] = dk.value;
	}
	struct calib_stat st;
	calib_stat(per, cv->reps, &st);
	snprintf(method, sizeof(method),
		 "1..32 independent chains in one thread: first count reaching 90%% of the peak throughput (x%.1f over one)",
		 d.aux);
	cr_param(r, "mem_issue_slots", d.value, "chains", method, st.spread, d.confidence);
	cpu_caches_params(r); /* the cache model the eDAG analysis of this CPU's traces uses */
	return 0;
}
