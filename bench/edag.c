/* eDAG engine benchmark: streams N synthetic instructions (generated on the
 * fly, nothing stored) through edag_step and prints one line:
 *   insns=N seconds=S cpu_seconds=C insns_per_s=R cpu_insns_per_s=RC peak_rss_kib=K state_bytes=B W=.. D=..
 * (cpu_*: user + system CPU time of the process, less sensitive than wall time to a loaded machine)
 * Usage: edag N [cache|edan|nocache] [WS_KIB]
 *   cache: a 32K/8-way L1 + 1M/16-way L2 model (the project's cache model);
 *   edan: the same levels used as EDAN does (--cache-model edan);
 *   WS_KIB: working set (default 4096, a power of two)
 * The trace mixes loads, stores, int, float and branches over the working set
 * (3/4 of the accesses streaming, 1/4 random), so memory depends on the
 * working set, not on N. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "edag/edag.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: edag N [cache|edan|nocache] [WS_KIB]\n");
		return 2;
	}
	uint64_t n = strtoull(argv[1], NULL, 10);
	struct edag_config cfg;
	edag_config_default(&cfg);
	bool edan = argc > 2 && strcmp(argv[2], "edan") == 0;
	if (argc > 2 && (strcmp(argv[2], "cache") == 0 || edan)) {
		cfg.cache_model = edan ? EDAG_CACHE_EDAN : EDAG_CACHE_PROJECT;
		cfg.nlevels = 2;
		cfg.level[0] = (struct edag_cache_level){
		    .name = "L1", .size = 32768, .assoc = 8, .line = 64, .latency = 4};
		cfg.level[1] = (struct edag_cache_level){
		    .name = "L2", .size = 1 << 20, .assoc = 16, .line = 64, .latency = 14};
	}
	uint64_t ws = (argc > 3 ? strtoull(argv[3], NULL, 10) : 4096) << 10;
	if (ws < 4096 || (ws & (ws - 1))) {
		fprintf(stderr, "edag: WS_KIB must be a power of two >= 4\n");
		return 2;
	}
	struct edag_state *st;
	if (edag_new(&cfg, &st) < 0)
		return 1;
	/* a fixed block of 4096 instructions with varying addresses, replayed */
	enum { B = 4096 };
	static struct edag_insn blk[B];
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < B; i++) {
		struct edag_insn *in = &blk[i];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		unsigned k = (unsigned)(x % 10);
		in->pc = 0x400000 + 4 * (uint64_t)i;
		in->cls = k < 3	  ? EDAG_LOAD
			  : k < 4 ? EDAG_STORE
			  : k < 7 ? EDAG_INT
			  : k < 8 ? EDAG_FLOAT
				  : EDAG_BRANCH;
		in->mem = (uint8_t)edag_default_mem(in->cls);
		in->nread = 2;
		in->rd[0] = (uint8_t)(1 + (x >> 8) % 31);
		in->rd[1] = (uint8_t)(1 + (x >> 16) % 31);
		if (in->cls != EDAG_STORE && in->cls != EDAG_BRANCH) {
			in->nwrite = 1;
			in->wr[0] = (uint8_t)(1 + (x >> 24) % 31);
		}
		in->size = 8;
	}
	uint64_t seed = 12345;
	struct rusage ru0;
	getrusage(RUSAGE_SELF, &ru0);
	double cpu0 = (double)ru0.ru_utime.tv_sec + (double)ru0.ru_utime.tv_usec / 1e6 + (double)ru0.ru_stime.tv_sec +
		      (double)ru0.ru_stime.tv_usec / 1e6;
	double t0 = now();
	for (uint64_t base = 0; base < n; base += B) {
		size_t cnt = n - base < B ? (size_t)(n - base) : B;
		for (size_t j = 0; j < cnt; j++) {
			struct edag_insn *in = &blk[j];
			if (in->mem) {
				uint64_t i = base + j;
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				/* 3/4 of the accesses stream through the working set, 1/4 random in it */
				uint64_t off = (seed >> 62) ? (i * 8) & (ws - 1) : (seed >> 20) & (ws - 8);
				in->addr = 0x10000000 + (off & ~7ull);
			}
		}
		if (edag_step_batch(st, blk, cnt) < 0)
			return 1;
	}
	double dt = now() - t0;
	struct edag_metrics mt;
	edag_metrics_get(st, &mt);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		     (double)ru.ru_stime.tv_usec / 1e6 - cpu0;
	printf("ws_kib=%llu insns=%llu seconds=%.3f cpu_seconds=%.3f insns_per_s=%.0f cpu_insns_per_s=%.0f "
	       "peak_rss_kib=%ld state_bytes=%zu W=%llu D=%llu cp=%llu\n",
	       (unsigned long long)(ws >> 10), (unsigned long long)n, dt, cpu, (double)n / dt, (double)n / cpu,
	       ru.ru_maxrss,
	       edag_state_bytes(st), (unsigned long long)mt.W, (unsigned long long)mt.D,
	       (unsigned long long)mt.cp_vertices);
	edag_free(st);
	return 0;
}
