/* Unit tests of the eDAG library (collector/edag): hand-built DAGs with
 * known metrics (the seed's 6 -> 5 example), register and memory RAW, the
 * zero register, the cache model, bounds, streaming == materialised graph ==
 * a naive O(n^2) reference on random traces, parsers and TraceWindow coding. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "trace/warm.h"
#include "validate_trace.h"

/* ---------------------------------------------------------------- helpers */

static struct edag_insn op(unsigned cls, int w, int r1, int r2)
{
	struct edag_insn in;
	memset(&in, 0, sizeof(in));
	in.cls = (uint8_t)cls;
	if (w >= 0)
		in.wr[in.nwrite++] = (uint8_t)w;
	if (r1 >= 0)
		in.rd[in.nread++] = (uint8_t)r1;
	if (r2 >= 0)
		in.rd[in.nread++] = (uint8_t)r2;
	return in;
}

static struct edag_insn memop(unsigned cls, int w, int r1, int r2, uint64_t addr, uint32_t size)
{
	struct edag_insn in = op(cls, w, r1, r2);
	in.mem = (uint8_t)edag_default_mem(cls);
	in.addr = addr;
	in.size = size;
	return in;
}

static struct edag_config unit_cfg(void)
{
	struct edag_config c;
	edag_config_default(&c);
	c.class_cost[EDAG_FLOAT] = 1; /* every non-memory vertex costs 1 */
	return c;
}

static void edan_parse_all(const char *text, struct edag_insn *ins, size_t *n)
{
	*n = 0;
	const char *s = text;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		int cpu;
		char err[128] = "";
		int rc = edag_parse_edan_line(s, len, &ins[*n], &cpu, err, sizeof(err));
		if (rc < 0)
			fail_msg("parse '%.*s': %s", (int)len, s, err);
		if (rc == 1)
			(*n)++;
		s += len + (e ? 1 : 0);
	}
}

/* ---------------------------------------------------------------- the seed's example */

/* A chain of 5 dependent adds (a1 -> a2 -> a3 -> a4 -> a5), then a4 is
 * reused for a new value (WAW on the 4th, WAR on the 5th instruction: a
 * false dependency), and an independent chain of 4. True dependencies: the
 * critical path is the first chain, 5 vertices, parallelism 10/5 = 2. With
 * the false dependencies the reuse of a4 hangs below the 5th add: 6
 * vertices, parallelism 10/6 = 1.67 (the seed reports 1.6). x0 is read by
 * three instructions and must not chain them (RAR) in either mode. */
static const char seed_trace[] = "0;0x10000;addi a1,zero,1\n"
				 "0;0x10004;addi a2,a1,1\n"
				 "0;0x10008;addi a3,a2,1\n"
				 "0;0x1000c;addi a4,a3,1\n"
				 "0;0x10010;addi a5,a4,1\n"
				 "0;0x10014;addi a4,zero,7\n"
				 "0;0x10018;addi a6,zero,2\n"
				 "0;0x1001c;addi a7,a6,1\n"
				 "0;0x10020;addi t0,a7,1\n"
				 "0;0x10024;addi t1,t0,1\n";

static void test_edag_seed_false_deps_6_to_5(void **state)
{
	(void)state;
	struct edag_insn ins[16];
	size_t n;
	edan_parse_all(seed_trace, ins, &n);
	assert_int_equal(n, 10);
	struct edag_config c = unit_cfg();
	struct edag_metrics t, a;
	assert_int_equal(edag_build_window(&c, ins, n, &t), 0);
	c.all_deps = true;
	assert_int_equal(edag_build_window(&c, ins, n, &a), 0);
	assert_int_equal(a.cp_vertices, 6);
	assert_int_equal(t.cp_vertices, 5);
	assert_true(fabs(t.parallelism - 2.0) < 1e-12);
	assert_true(fabs(a.parallelism - 10.0 / 6.0) < 1e-12);
	assert_true(floor(a.parallelism * 10) / 10 == 1.6); /* as the seed prints it */
	assert_int_equal(t.edges_false, 0);
	assert_int_equal(a.edges_false, 2); /* WAW 4th -> 6th, WAR 5th -> 6th */
	assert_int_equal(t.vertices, 10);
	assert_int_equal(t.W, 0);
}

/* ---------------------------------------------------------------- hand-built DAG with memory */

/* Two independent pointer-chase chains of loads (depth 3 and 2), a store of
 * the deeper one's result and a load of that location:
 *   0: ld r1 <- [0x100]          mem, depth 1
 *   1: ld r2 <- [r1 = 0x200]     mem, depth 2
 *   2: ld r3 <- [r2 = 0x300]     mem, depth 3
 *   3: ld r4 <- [0x400]          mem, depth 1
 *   4: ld r5 <- [r4 = 0x500]     mem, depth 2
 *   5: add r6 <- r3, r5          depth 3
 *   6: st [0x600] <- r6          mem, depth 4 (RAW on r6)
 *   7: ld r7 <- [0x600]          mem, depth 5 (RAW through memory)
 *   8: add r8 <- r7, r7          depth 5
 * W = 7, D = 5, critical path 0,1,2,5,6,7,8 = 7 vertices, cost 5*100 + 2 = 502, C = 2. */
static void test_edag_hand_dag_known_w_d_cp(void **state)
{
	(void)state;
	struct edag_insn ins[] = {
	    memop(EDAG_LOAD, 1, -1, -1, 0x100, 8),
	    memop(EDAG_LOAD, 2, 1, -1, 0x200, 8),
	    memop(EDAG_LOAD, 3, 2, -1, 0x300, 8),
	    memop(EDAG_LOAD, 4, -1, -1, 0x400, 8),
	    memop(EDAG_LOAD, 5, 4, -1, 0x500, 8),
	    op(EDAG_INT, 6, 3, 5),
	    memop(EDAG_STORE, -1, 6, -1, 0x600, 8),
	    memop(EDAG_LOAD, 7, -1, -1, 0x600, 8),
	    op(EDAG_INT, 8, 7, 7),
	};
	struct edag_config c = unit_cfg();
	struct edag_metrics mt;
	assert_int_equal(edag_build_window(&c, ins, 9, &mt), 0);
	assert_int_equal(mt.vertices, 9);
	assert_int_equal(mt.W, 7);
	assert_int_equal(mt.D, 5);
	assert_int_equal(mt.cp_vertices, 7);
	assert_int_equal(mt.cp_cost, 502);
	assert_int_equal(mt.cp_compute, 2);
	assert_int_equal(mt.cp_memory, 5);
	assert_int_equal(mt.edges_mem, 1);
	/* layering: one memory vertex at depths 3, 4 and 5, two at depths 1 and 2 */
	assert_int_equal(mt.by_depth.width, 1);
	assert_int_equal(mt.by_depth.nbins, 5);
	uint64_t want[5] = {2, 2, 1, 1, 1};
	for (int i = 0; i < 5; i++)
		assert_int_equal(mt.by_depth.count[i], want[i]);
	/* bounds at m = 2, alpha = 100, alpha0 = 100: lambda = (7-5)/2 + 5 = 6 */
	struct edag_bounds b;
	edag_bounds(&mt, 2, 100, 100, &b);
	assert_true(fabs(b.lambda - 6) < 1e-12);
	assert_true(fabs(b.lower - 500) < 1e-9); /* max(5, 3.5) * 100 */
	assert_true(fabs(b.upper - 600) < 1e-9);
	assert_true(fabs(b.Lambda - 6.0 / (600 + 2)) < 1e-12);
}

/* ---------------------------------------------------------------- RAW details */

static void test_edag_register_raw_only_true_deps(void **state)
{
	(void)state;
	/* r1 = ; r2 = r1 ; r1 = (WAW/WAR only) ; r3 = r1 (RAW on the 3rd, not the 1st) */
	struct edag_insn ins[] = {op(EDAG_INT, 1, -1, -1), op(EDAG_INT, 2, 1, -1), op(EDAG_INT, 1, -1, -1),
				  op(EDAG_INT, 3, 1, -1)};
	struct edag_config c = unit_cfg();
	struct edag_metrics mt;
	assert_int_equal(edag_build_window(&c, ins, 4, &mt), 0);
	assert_int_equal(mt.cp_vertices, 2);
	assert_int_equal(mt.edges_reg, 2);
	c.all_deps = true;
	assert_int_equal(edag_build_window(&c, ins, 4, &mt), 0);
	assert_int_equal(mt.cp_vertices, 4); /* 1 -> 2 (RAW) -> 3 (WAR) -> 4 (RAW) */
}

static void test_edag_zero_register_is_no_dependency(void **state)
{
	(void)state;
	/* writes to x0 are discarded, reads of x0 depend on nothing */
	struct edag_insn ins[] = {op(EDAG_INT, 0, 5, -1), op(EDAG_INT, 1, 0, -1), op(EDAG_INT, 0, 1, -1),
				  op(EDAG_INT, 2, 0, 0)};
	struct edag_config c = unit_cfg();
	struct edag_metrics mt;
	c.all_deps = true;
	assert_int_equal(edag_build_window(&c, ins, 4, &mt), 0);
	assert_int_equal(mt.cp_vertices, 2); /* only 2 -> 3 (RAW on r1) */
	assert_int_equal(mt.edges_reg + mt.edges_false, 1);
	/* the EDAN importer maps zero and x0 to register 0 */
	struct edag_insn in;
	int cpu;
	assert_int_equal(edag_parse_edan_line("0;0x1;mv a0,zero", 16, &in, &cpu, NULL, 0), 1);
	assert_int_equal(in.nwrite, 1);
	assert_int_equal(in.wr[0], 10);
	assert_int_equal(in.rd[0], 0);
	assert_int_equal(edag_reg_number(EDAG_ARCH_RISCV64, "x0", 2), 0);
	assert_int_equal(edag_reg_number(EDAG_ARCH_AARCH64, "xzr", 3), 0);
	assert_int_equal(edag_reg_number(EDAG_ARCH_AARCH64, "x0", 2), 1);
}

/* The path length of the last instruction tells whether it depended on the one before. */
static uint64_t path_after(const struct edag_insn *a, const struct edag_insn *b)
{
	struct edag_config c = unit_cfg();
	struct edag_state *st;
	struct edag_vertex v;
	assert_int_equal(edag_new(&c, &st), 0);
	assert_int_equal(edag_step(st, a, NULL), 0);
	assert_int_equal(edag_step(st, b, &v), 0);
	edag_free(st);
	return v.path;
}

static void test_edag_memory_raw_overlapping_sizes(void **state)
{
	(void)state;
	struct edag_insn st8 = memop(EDAG_STORE, -1, -1, -1, 0x1000, 8);
	/* overlaps */
	assert_int_equal(path_after(&st8, &(struct edag_insn){0}), 1);
	struct edag_insn l;
	l = memop(EDAG_LOAD, 1, -1, -1, 0x1004, 4);
	assert_int_equal(path_after(&st8, &l), 2);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x1007, 1);
	assert_int_equal(path_after(&st8, &l), 2);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x0ffc, 8); /* straddles the chunk boundary into the store */
	assert_int_equal(path_after(&st8, &l), 2);
	/* disjoint */
	l = memop(EDAG_LOAD, 1, -1, -1, 0x1008, 2);
	assert_int_equal(path_after(&st8, &l), 1);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x0ff8, 8);
	assert_int_equal(path_after(&st8, &l), 1);
	/* a store spanning two chunks, then a load of each half */
	struct edag_insn st4 = memop(EDAG_STORE, -1, -1, -1, 0x2006, 4);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x2000, 7);
	assert_int_equal(path_after(&st4, &l), 2);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x2009, 1);
	assert_int_equal(path_after(&st4, &l), 2);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x200a, 6);
	assert_int_equal(path_after(&st4, &l), 1);

	/* partial overwrite: store 8 @0 (A), store 1 @2 (B, after a long chain), load 4 @0 depends on
	 * both, load 1 @5 only on A, load 1 @2 only on B */
	struct edag_config c = unit_cfg();
	struct edag_state *s;
	struct edag_vertex v;
	assert_int_equal(edag_new(&c, &s), 0);
	struct edag_insn a = memop(EDAG_STORE, -1, -1, -1, 0x3000, 8);
	assert_int_equal(edag_step(s, &a, &v), 0); /* path 1 */
	struct edag_insn chain = op(EDAG_INT, 9, 9, -1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(edag_step(s, &chain, NULL), 0); /* r9 path 5 */
	struct edag_insn b = memop(EDAG_STORE, -1, 9, -1, 0x3002, 1);
	assert_int_equal(edag_step(s, &b, &v), 0);
	assert_int_equal(v.path, 6);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x3000, 4);
	assert_int_equal(edag_step(s, &l, &v), 0);
	assert_int_equal(v.path, 7);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x3005, 1);
	assert_int_equal(edag_step(s, &l, &v), 0);
	assert_int_equal(v.path, 2);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x3002, 1);
	assert_int_equal(edag_step(s, &l, &v), 0);
	assert_int_equal(v.path, 7);
	/* a full overwrite makes the chunk uniform again */
	struct edag_insn full = memop(EDAG_STORE, -1, -1, -1, 0x3000, 8);
	assert_int_equal(edag_step(s, &full, NULL), 0);
	l = memop(EDAG_LOAD, 1, -1, -1, 0x3002, 1);
	assert_int_equal(edag_step(s, &l, &v), 0);
	assert_int_equal(v.path, 2);
	edag_free(s);
}

/* ---------------------------------------------------------------- cache model */

static void test_edag_cache_direct_mapped_and_lru(void **state)
{
	(void)state;
	struct edag_config c = unit_cfg();
	c.nlevels = 1;
	c.level[0] =
	    (struct edag_cache_level){.name = "L1", .size = 32, .assoc = 1, .line = 16, .latency = 3};
	/* direct mapped, 2 sets: 0 miss, 0 hit, 32 miss (evicts 0), 0 miss, 16 miss, 20 hit (same line) */
	uint64_t seq1[] = {0, 0, 32, 0, 16, 20};
	int memv1[] = {1, 0, 1, 1, 1, 0};
	struct edag_state *s;
	struct edag_vertex v;
	assert_int_equal(edag_new(&c, &s), 0);
	for (int i = 0; i < 6; i++) {
		struct edag_insn l = memop(EDAG_LOAD, 1, -1, -1, seq1[i], 4);
		assert_int_equal(edag_step(s, &l, &v), 0);
		assert_int_equal(v.memory, memv1[i]);
		assert_int_equal(v.cost, memv1[i] ? 100 : 3);
		assert_int_equal(v.hit_level, memv1[i] ? -1 : 0);
	}
	struct edag_metrics mt;
	edag_metrics_get(s, &mt);
	assert_int_equal(mt.W, 4);
	assert_int_equal(mt.accesses, 6);
	assert_int_equal(mt.level_hit[0], 2);
	assert_int_equal(mt.level_miss[0], 4);
	edag_free(s);

	/* one set of 2 ways, LRU: A B A C(evicts B) B(evicts A) A(evicts C) C(evicts B) A(hit) */
	c.level[0].assoc = 2;
	uint64_t seq2[] = {0, 16, 0, 32, 16, 0, 32, 0};
	int memv2[] = {1, 1, 0, 1, 1, 1, 1, 0};
	assert_int_equal(edag_new(&c, &s), 0);
	for (int i = 0; i < 8; i++) {
		struct edag_insn l = memop(EDAG_LOAD, 1, -1, -1, seq2[i], 8);
		assert_int_equal(edag_step(s, &l, &v), 0);
		assert_int_equal(v.memory, memv2[i]);
	}
	edag_free(s);

	/* two levels: L1 1 line, L2 2 sets x 2 ways; an access spanning two lines counts once */
	c.nlevels = 2;
	c.level[0] =
	    (struct edag_cache_level){.name = "L1", .size = 16, .assoc = 1, .line = 16, .latency = 2};
	c.level[1] =
	    (struct edag_cache_level){.name = "L2", .size = 64, .assoc = 2, .line = 16, .latency = 10};
	assert_int_equal(edag_new(&c, &s), 0);
	uint64_t seq3[] = {0, 16, 0, 0, 8 /* spans lines 0 and 1 */};
	int hit3[] = {-1, -1, 1, 0, 1};
	for (int i = 0; i < 5; i++) {
		struct edag_insn l = memop(EDAG_LOAD, 1, -1, -1, seq3[i], i == 4 ? 16 : 4);
		assert_int_equal(edag_step(s, &l, &v), 0);
		assert_int_equal(v.hit_level, hit3[i]);
		if (hit3[i] >= 0)
			assert_int_equal(v.cost, c.level[hit3[i]].latency);
	}
	edag_metrics_get(s, &mt);
	assert_int_equal(mt.W, 2);
	assert_int_equal(mt.level_miss[0], 4); /* all but the 4th miss L1 */
	assert_int_equal(mt.level_miss[1], 2);
	assert_int_equal(mt.level_hit[0], 1);
	assert_int_equal(mt.level_hit[1], 2);
	edag_free(s);
}

/* ---------------------------------------------------------------- bounds */

/* The EDAN-compatible cache model against the project's, on a 5-instruction
 * trace computed by hand. One level: 192 B, direct-mapped, 64 B lines, hit
 * latency 2; alpha0 100, m 2. The project's model has 192 / 64 = 3 sets
 * (set = line % 3); EDAN's has 2^floor(log2 3) = 2 (set = line & 1).
 *
 *   I0 store [0x000]/8            line 0
 *   I1 load  r3 <- [0x000]/8      line 0, memory RAW on I0
 *   I2 load  r4 <- [0x0c0]/8      line 3
 *   I3 load  r5 <- [0x008]/8, reads r3 (I1)   line 0
 *   I4 load  r6 <- [0x03c]/8, reads r5 (I3)   bytes 0x3c..0x43: lines 0 and 1
 *
 * project: I0 probes line 0: miss (fills it)            -> memory vertex
 *          I1 line 0 is there: hit, cost 2              -> not memory
 *          I2 line 3, set 0: miss, evicts line 0        -> memory
 *          I3 line 0, set 0 holds 3: miss               -> memory
 *          I4 line 0 hits, line 1 (set 1) misses        -> memory (worst line)
 *   W = 4 (I0 I2 I3 I4). Depths: I0 1, I1 1 (I0's 1 + 0), I2 1, I3 1 + 1 = 2,
 *   I4 2 + 1 = 3: D = 3. lambda = (W - D)/m + D = (4 - 3)/2 + 3 = 3.5.
 *   Cost path I0 100 -> I1 102 -> I3 202 -> I4 302, C = 2 (I1's hit):
 *   Lambda = 3.5 / (3.5 * 100 + 2). L1: 1 hit, 4 misses.
 * edan:    I0 store: never probes or fills            -> memory vertex
 *          I1 line 0 not there (the store did not fill): miss, fills -> memory
 *          I2 line 3, set 1: miss                       -> memory (line 0 stays in set 0)
 *          I3 line 0, set 0: hit                        -> not memory
 *          I4 first byte 0x3c only: line 0 hit          -> not memory
 *   W = 3 (I0 I1 I2). Depths: I0 1, I1 2, I2 1, I3 2 + 0 = 2, I4 2: D = 2.
 *   lambda = (3 - 2)/2 + 2 = 2.5. Cost path I0 100 -> I1 200 -> I3 202 ->
 *   I4 204, C = 4: Lambda = 2.5 / (2.5 * 100 + 4). L1: 2 hits, 3 misses (the
 *   store counts as a miss: it is W whatever the last level).
 * no cache: W = 5, depths 1 2 1 3 4: D = 4, lambda = (5 - 4)/2 + 4 = 4.5;
 *   cost path I0 100 -> I1 200 -> I3 300 -> I4 400, C = 0. */
static void test_edag_cache_model_edan_vs_project(void **state)
{
	(void)state;
	struct edag_insn tr[5] = {
	    memop(EDAG_STORE, -1, 1, 2, 0x000, 8), memop(EDAG_LOAD, 3, 2, -1, 0x000, 8),
	    memop(EDAG_LOAD, 4, 2, -1, 0x0c0, 8),  memop(EDAG_LOAD, 5, 3, -1, 0x008, 8),
	    memop(EDAG_LOAD, 6, 5, -1, 0x03c, 8),
	};
	struct {
		unsigned nlevels, model;
		uint64_t W, D, cp_cost, C, hits, misses;
		double lambda;
		int hit_level[5];
	} want[] = {
	    {1, EDAG_CACHE_PROJECT, 4, 3, 302, 2, 1, 4, 3.5, {-1, 0, -1, -1, -1}},
	    {1, EDAG_CACHE_EDAN, 3, 2, 204, 4, 2, 3, 2.5, {-1, -1, -1, 0, 0}},
	    {0, EDAG_CACHE_EDAN, 5, 4, 400, 0, 0, 0, 4.5, {-1, -1, -1, -1, -1}}, /* no levels: model moot */
	};
	for (unsigned k = 0; k < 3; k++) {
		struct edag_config c = unit_cfg();
		c.alpha0 = 100;
		c.m = 2;
		c.nlevels = want[k].nlevels;
		c.cache_model = want[k].model;
		c.level[0] = (struct edag_cache_level){
		    .name = "L1", .size = 192, .assoc = 1, .line = 64, .latency = 2};
		assert_int_equal(edag_config_check(&c, NULL, 0), 0);
		struct edag_state *st;
		assert_int_equal(edag_new(&c, &st), 0);
		for (unsigned i = 0; i < 5; i++) {
			struct edag_vertex v;
			assert_int_equal(edag_step(st, &tr[i], &v), 0);
			assert_int_equal(v.hit_level, want[k].hit_level[i]);
		}
		struct edag_metrics mt;
		edag_metrics_get(st, &mt);
		assert_int_equal(mt.W, want[k].W);
		assert_int_equal(mt.D, want[k].D);
		assert_int_equal(mt.cp_cost, want[k].cp_cost);
		assert_int_equal(mt.cp_compute, want[k].C);
		assert_int_equal(mt.level_hit[0], want[k].hits);
		assert_int_equal(mt.level_miss[0], want[k].misses);
		struct edag_bounds b;
		edag_bounds(&mt, c.m, c.alpha0, c.alpha0, &b);
		assert_true(fabs(b.lambda - want[k].lambda) < 1e-12);
		double L = want[k].lambda / (want[k].lambda * 100 + (double)want[k].C);
		assert_true(fabs(b.Lambda - L) < 1e-12);
		edag_free(st);
	}
	struct edag_config c = unit_cfg();
	assert_string_equal(edag_cache_model_name(&c), "none");
	c.nlevels = 1;
	assert_string_equal(edag_cache_model_name(&c), "project");
	c.cache_model = EDAG_CACHE_EDAN;
	assert_string_equal(edag_cache_model_name(&c), "edan");
	assert_int_equal(edag_cache_model_parse("edan"), EDAG_CACHE_EDAN);
	assert_int_equal(edag_cache_model_parse("project"), EDAG_CACHE_PROJECT);
	assert_int_equal(edag_cache_model_parse("EDAN!"), -EINVAL);
	c.cache_model = 7;
	c.level[0] = (struct edag_cache_level){.size = 192, .assoc = 1, .line = 64, .latency = 2};
	assert_int_equal(edag_config_check(&c, NULL, 0), -EINVAL);
}

static void test_edag_bounds_ordering_and_Lambda_range(void **state)
{
	(void)state;
	srand(7);
	for (int i = 0; i < 10000; i++) {
		struct edag_metrics mt;
		memset(&mt, 0, sizeof(mt));
		mt.W = (uint64_t)(rand() % 100000);
		mt.D = mt.W ? (uint64_t)(rand() % (int)(mt.W + 1)) : 0;
		mt.cp_compute = (uint64_t)(rand() % 1000000);
		double m = 1 + rand() % 64, alpha = rand() % 1000, alpha0 = 1 + rand() % 1000;
		struct edag_bounds b;
		edag_bounds(&mt, m, alpha, alpha0, &b);
		assert_true(b.lower <= b.upper * (1 + 1e-12));
		assert_true(b.Lambda >= 0 && b.Lambda <= 1);
		assert_true(b.lambda >= (double)mt.D - 1e-9 && b.lambda <= (double)mt.W + 1e-9);
	}
	/* the sweep is edag_bounds on a grid */
	struct edag_metrics mt = {.W = 100, .D = 10, .cp_compute = 50};
	double ms[] = {1, 4}, as[] = {10, 200};
	struct edag_bounds out[4], one;
	edag_sweep(&mt, 100, ms, 2, as, 2, out);
	edag_bounds(&mt, 4, 200, 100, &one);
	assert_true(out[3].upper == one.upper && out[3].Lambda == one.Lambda);
	assert_true(fabs(out[0].upper - 100 * 10) < 1e-9); /* m = 1: W * alpha */
}

/* ---------------------------------------------------------------- random traces */

static uint64_t rng_state;
static uint32_t rnd(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng_state >> 33);
}

static void random_trace(struct edag_insn *ins, size_t n, uint64_t seed)
{
	rng_state = seed;
	static const uint32_t sizes[] = {1, 2, 4, 8, 16};
	for (size_t i = 0; i < n; i++) {
		struct edag_insn *in = &ins[i];
		memset(in, 0, sizeof(*in));
		in->pc = 0x1000 + 4 * i;
		in->cls = (uint8_t)(rnd() % EDAG_NCLASS);
		in->nread = (uint8_t)(rnd() % 4);
		for (unsigned k = 0; k < in->nread; k++)
			in->rd[k] = (uint8_t)(rnd() % 12);
		in->nwrite = (uint8_t)(rnd() % 3);
		for (unsigned k = 0; k < in->nwrite; k++)
			in->wr[k] = (uint8_t)(rnd() % 12);
		in->mem = (uint8_t)edag_default_mem(in->cls);
		if (rnd() % 10 == 0)
			in->mem = (uint8_t)(rnd() % 4); /* atomics, memory operands of other classes */
		if (in->mem) {
			in->addr = 0x8000 + rnd() % 200;
			in->size = sizes[rnd() % 5];
		}
	}
}

/* The definitions, O(n^2): for each vertex scan back for the last writer of
 * each register and byte (and for all_deps the last reader since, readers
 * since the last write, the last writer for WAW). No cache model: every
 * access is a memory vertex. */
static void naive_metrics(const struct edag_config *c, const struct edag_insn *ins, size_t n,
			  struct edag_metrics *out)
{
	uint64_t *depth = calloc(n, 8), *path = calloc(n, 8), *fin = calloc(n, 8), *comp = calloc(n, 8);
	char *pred = calloc(n, 1);
	memset(out, 0, sizeof(*out));
	for (size_t j = 0; j < n; j++) {
		const struct edag_insn *b = &ins[j];
		memset(pred, 0, n);
		/* registers */
		for (unsigned r = 1; r < EDAG_NREGS; r++) {
			bool reads = false, writes = false;
			for (unsigned k = 0; k < b->nread; k++)
				reads |= b->rd[k] == r;
			for (unsigned k = 0; k < b->nwrite; k++)
				writes |= b->wr[k] == r;
			if (!reads && !writes)
				continue;
			long lw = -1;
			for (size_t i = j; i-- > 0 && lw < 0;)
				for (unsigned k = 0; k < ins[i].nwrite; k++)
					if (ins[i].wr[k] == r)
						lw = (long)i;
			if (reads && lw >= 0)
				pred[lw] = 1;
			if (c->all_deps) {
				if (writes && lw >= 0)
					pred[lw] = 1; /* WAW */
				for (size_t i = (size_t)(lw + 1); i < j; i++)
					for (unsigned k = 0; k < ins[i].nread; k++)
						if (ins[i].rd[k] == r)
							pred[i] = 1; /* WAR (writes) or RAR (reads): readers
									since */
			}
		}
		/* bytes */
		if (b->mem)
			for (uint64_t x = b->addr; x < b->addr + b->size; x++) {
				long lw = -1;
				for (size_t i = j; i-- > 0 && lw < 0;)
					if ((ins[i].mem & EDAG_MEM_WRITE) && x >= ins[i].addr &&
					    x < ins[i].addr + ins[i].size)
						lw = (long)i;
				if ((b->mem & EDAG_MEM_READ) && lw >= 0)
					pred[lw] = 1;
				if (c->all_deps) {
					if ((b->mem & EDAG_MEM_WRITE) && lw >= 0)
						pred[lw] = 1;
					for (size_t i = (size_t)(lw + 1); i < j; i++)
						if ((ins[i].mem & EDAG_MEM_READ) && x >= ins[i].addr &&
						    x < ins[i].addr + ins[i].size)
							pred[i] = 1;
				}
			}
		uint64_t d = 0, p = 0, f = 0, cc = 0;
		for (size_t i = 0; i < j; i++) {
			if (!pred[i])
				continue;
			d = depth[i] > d ? depth[i] : d;
			p = path[i] > p ? path[i] : p;
			if (fin[i] > f || (fin[i] == f && comp[i] > cc)) {
				f = fin[i];
				cc = comp[i];
			}
		}
		bool m = b->mem != 0;
		uint32_t cost = m ? c->alpha0 : c->class_cost[b->cls];
		depth[j] = d + m;
		path[j] = p + 1;
		fin[j] = f + cost;
		comp[j] = cc + (m ? 0 : cost);
		out->vertices++;
		out->W += m;
		out->D = depth[j] > out->D ? depth[j] : out->D;
		out->cp_vertices = path[j] > out->cp_vertices ? path[j] : out->cp_vertices;
		if (fin[j] > out->cp_cost || (fin[j] == out->cp_cost && comp[j] > out->cp_compute)) {
			out->cp_cost = fin[j];
			out->cp_compute = comp[j];
		}
	}
	free(depth);
	free(path);
	free(fin);
	free(comp);
	free(pred);
}

static void assert_same(const struct edag_metrics *a, const struct edag_metrics *b)
{
	assert_int_equal(a->vertices, b->vertices);
	assert_int_equal(a->W, b->W);
	assert_int_equal(a->D, b->D);
	assert_int_equal(a->cp_vertices, b->cp_vertices);
	assert_int_equal(a->cp_cost, b->cp_cost);
	assert_int_equal(a->cp_compute, b->cp_compute);
}

static void test_edag_streaming_equals_graph_random(void **state)
{
	(void)state;
	enum { N = 1500 };
	struct edag_insn *ins = calloc(N, sizeof(*ins));
	for (uint64_t seed = 1; seed <= 12; seed++) {
		random_trace(ins, N, seed);
		for (int mode = 0; mode < 4; mode++) {
			struct edag_config c;
			edag_config_default(&c);
			c.all_deps = mode & 1;
			if (mode & 2) {
				c.nlevels = 2;
				c.level[0] = (struct edag_cache_level){
				    .size = 64, .assoc = 2, .line = 16, .latency = 2};
				c.level[1] = (struct edag_cache_level){
				    .size = 128, .assoc = 4, .line = 16, .latency = 9};
			}
			struct edag_metrics s, g;
			assert_int_equal(edag_build_window(&c, ins, N, &s), 0);
			struct edag_graph *gr;
			assert_int_equal(edag_graph_new(&c, 0, &gr), 0);
			for (size_t i = 0; i < N; i++)
				assert_int_equal(edag_graph_add(gr, &ins[i]), 0);
			edag_graph_metrics(gr, &g);
			assert_same(&s, &g);
			assert_int_equal(s.by_depth.nbins, g.by_depth.nbins);
			assert_memory_equal(s.by_depth.count, g.by_depth.count, sizeof(s.by_depth.count));
			assert_memory_equal(s.by_time.count, g.by_time.count, sizeof(s.by_time.count));
			edag_graph_free(gr);
			if (!(mode & 2)) {
				struct edag_metrics nv;
				naive_metrics(&c, ins, N, &nv);
				assert_same(&s, &nv);
			}
			assert_true(s.D <= s.W && s.cp_vertices <= s.vertices && s.D <= s.cp_vertices);
			assert_true(s.edges_mem > 50 && s.D > 3 &&
				    (!c.all_deps || s.edges_false > 50)); /* not vacuous */
		}
	}
	free(ins);
}

static void test_edag_graph_bounded(void **state)
{
	(void)state;
	struct edag_config c = unit_cfg();
	struct edag_graph *g;
	assert_int_equal(edag_graph_new(&c, 3, &g), 0);
	struct edag_insn in = op(EDAG_INT, 1, 1, -1);
	for (int i = 0; i < 3; i++)
		assert_int_equal(edag_graph_add(g, &in), 0);
	assert_int_equal(edag_graph_add(g, &in), -E2BIG);
	assert_int_equal(g->nv, 3);
	assert_int_equal(g->ne, 2);
	edag_graph_free(g);
}

/* ---------------------------------------------------------------- memory stays flat */

static void test_edag_state_memory_flat_in_trace_length(void **state)
{
	(void)state;
	struct edag_config c;
	edag_config_default(&c);
	c.nlevels = 1;
	c.level[0] = (struct edag_cache_level){.size = 4096, .assoc = 4, .line = 64, .latency = 4};
	struct edag_state *s;
	assert_int_equal(edag_new(&c, &s), 0);
	rng_state = 99;
	size_t after_small = 0;
	for (size_t i = 0; i < 400000; i++) {
		struct edag_insn in = memop(i % 3 ? EDAG_LOAD : EDAG_STORE, (int)(1 + rnd() % 30),
					    (int)(rnd() % 31), -1, 0x10000 + (rnd() % 8192) * 8, 8);
		assert_int_equal(edag_step(s, &in, NULL), 0);
		if (i == 40000)
			after_small = edag_state_bytes(s);
	}
	assert_int_equal(edag_state_bytes(s), after_small); /* 10x the trace, same working set, same memory */
	struct edag_metrics mt;
	edag_metrics_get(s, &mt);
	assert_int_equal(mt.vertices, 400000);
	assert_true(mt.by_time.nbins <= EDAG_LAYER_BINS && mt.by_depth.nbins <= EDAG_LAYER_BINS);
	uint64_t sum = 0;
	for (unsigned i = 0; i < mt.by_depth.nbins; i++)
		sum += mt.by_depth.count[i];
	assert_int_equal(sum, mt.W); /* every memory vertex is in exactly one layer, however wide */
	edag_free(s);
}

/* ---------------------------------------------------------------- parsers */

static void test_edag_native_text_and_binary(void **state)
{
	(void)state;
	unsigned arch = 0;
	struct edag_insn in, out;
	struct edag_window_info wi;
	char err[200];
	assert_int_equal(edag_parse_native_line("# comment\n", 10, &arch, &in, &wi, err, sizeof(err)), 0);
	assert_int_equal(edag_parse_native_line("arch aarch64", 12, &arch, &in, &wi, err, sizeof(err)), 0);
	assert_int_equal(arch, EDAG_ARCH_AARCH64);
	const char *l = "0x400123 load r=x1,sp w=x2 m=0x7ffc0010/8";
	assert_int_equal(edag_parse_native_line(l, strlen(l), &arch, &in, &wi, err, sizeof(err)), 1);
	assert_int_equal(in.pc, 0x400123);
	assert_int_equal(in.cls, EDAG_LOAD);
	assert_int_equal(in.mem, EDAG_MEM_READ);
	assert_int_equal(in.nread, 2);
	assert_int_equal(in.rd[0], 2);
	assert_int_equal(in.rd[1], 32);
	assert_int_equal(in.wr[0], 3);
	assert_int_equal(in.addr, 0x7ffc0010);
	assert_int_equal(in.size, 8);
	l = "0x10 int+rw r=#7 m=0x20/4";
	assert_int_equal(edag_parse_native_line(l, strlen(l), &arch, &in, &wi, err, sizeof(err)), 1);
	assert_int_equal(in.mem, EDAG_MEM_READ | EDAG_MEM_WRITE);
	assert_int_equal(in.rd[0], 7);
	l = "window index=4 tid=9 share=0.25 represented=4000";
	assert_int_equal(edag_parse_native_line(l, strlen(l), &arch, &in, &wi, err, sizeof(err)), 2);
	assert_int_equal(wi.index, 4);
	assert_int_equal(wi.tid, 9);
	assert_true(wi.share == 0.25);
	assert_int_equal(wi.represented_insns, 4000);
	/* errors say what is wrong */
	l = "0x10 load r=x1";
	assert_int_equal(edag_parse_native_line(l, strlen(l), &arch, &in, &wi, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "m=ADDR/SIZE"));
	l = "0x10 int r=bogus";
	assert_int_equal(edag_parse_native_line(l, strlen(l), &arch, &in, &wi, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bogus"));

	/* binary round trip */
	uint8_t buf[EDAG_BIN_MAX_RECORD * 2], hdr[EDAG_BIN_HEADER];
	edag_bin_header_encode(hdr, EDAG_ARCH_X86_64);
	unsigned a2;
	assert_int_equal(edag_bin_header_decode(hdr, sizeof(hdr), &a2), 0);
	assert_int_equal(a2, EDAG_ARCH_X86_64);
	l = "0x401000 store r=#1,#2 m=0xdeadbeef/16";
	assert_int_equal(edag_parse_native_line(l, strlen(l), &arch, &in, &wi, err, sizeof(err)), 1);
	size_t n1 = edag_bin_encode(&in, buf);
	struct edag_insn in2 = op(EDAG_BRANCH, -1, 3, -1);
	size_t n2 = edag_bin_encode(&in2, buf + n1);
	assert_int_equal(edag_bin_decode(buf, n1 - 1, &out), 0); /* incomplete */
	assert_int_equal(edag_bin_decode(buf, n1 + n2, &out), (int)n1);
	assert_memory_equal(&out, &in, sizeof(in));
	assert_int_equal(edag_bin_decode(buf + n1, n2, &out), (int)n2);
	assert_memory_equal(&out, &in2, sizeof(in2));
	buf[8] = 7; /* class 7 */
	assert_int_equal(edag_bin_decode(buf, n1, &out), -EINVAL);
}

static void test_edag_edan_lines(void **state)
{
	(void)state;
	struct edag_insn in;
	int cpu;
	char err[128];
	const char *l = "0;0x104be;lw a4,0(a5);0x4000800210";
	assert_int_equal(edag_parse_edan_line(l, strlen(l), &in, &cpu, err, sizeof(err)), 1);
	assert_int_equal(cpu, 0);
	assert_int_equal(in.pc, 0x104be);
	assert_int_equal(in.cls, EDAG_LOAD);
	assert_int_equal(in.size, 4);
	assert_int_equal(in.addr, 0x4000800210ull);
	assert_int_equal(in.wr[0], 14);
	assert_int_equal(in.rd[0], 15);
	l = "1;0x104c4;bne a3,a5,-6 # 0x104be";
	assert_int_equal(edag_parse_edan_line(l, strlen(l), &in, &cpu, err, sizeof(err)), 1);
	assert_int_equal(cpu, 1);
	assert_int_equal(in.cls, EDAG_BRANCH);
	assert_int_equal(in.nread, 2);
	assert_int_equal(in.nwrite, 0);
	l = "0;0x200;sd s0,128(sp);0x7fff0";
	assert_int_equal(edag_parse_edan_line(l, strlen(l), &in, &cpu, err, sizeof(err)), 1);
	assert_int_equal(in.cls, EDAG_STORE);
	assert_int_equal(in.mem, EDAG_MEM_WRITE);
	assert_int_equal(in.size, 8);
	assert_int_equal(in.nread, 2);
	assert_int_equal(in.rd[0], 8);
	assert_int_equal(in.rd[1], 2);
	l = "0;0x204;fmadd.d fa5,fa4,fa3,fa5";
	assert_int_equal(edag_parse_edan_line(l, strlen(l), &in, &cpu, err, sizeof(err)), 1);
	assert_int_equal(in.cls, EDAG_FLOAT);
	assert_int_equal(in.wr[0], 64 + 15);
	assert_int_equal(in.nread, 3);
	l = "0;0x208;amoadd.w a0,a1,(a2);0x9000;0x9000";
	assert_int_equal(edag_parse_edan_line(l, strlen(l), &in, &cpu, err, sizeof(err)), 1);
	assert_int_equal(in.mem, EDAG_MEM_READ | EDAG_MEM_WRITE);
	assert_int_equal(in.size, 4);
	l = "0;0x20c;ret ";
	assert_int_equal(edag_parse_edan_line(l, strlen(l), &in, &cpu, err, sizeof(err)), 1);
	assert_int_equal(in.rd[0], 1);
	assert_int_equal(edag_parse_edan_line("  \n", 3, &in, &cpu, err, sizeof(err)), 0);
	assert_int_equal(edag_parse_edan_line("0;0x1;;", 7, &in, &cpu, err, sizeof(err)), -EINVAL);
}

/* QEMU 7.2 prints an explicit rounding mode as the first operand of RISC-V
 * floating-point instructions (fadd.d dyn,fa3,fa5,fa5): the destination is the
 * register after it. It used to be lost (the rounding mode is no register), which
 * cut every chain through floating-point arithmetic: on a riscv64 lu trace D
 * came out 4 where EDAN gives 129. Here: a chain load -> fadd -> store -> load
 * -> fmul -> store has memory depth 4 (2 when the destinations are lost). */
static void test_edag_edan_rounding_mode_before_destination(void **state)
{
	(void)state;
	static const char *const lines[] = {
	    "0;0x100;fld fa5,0(a0);0x1000",  "0;0x104;fadd.d dyn,fa3,fa5,fa5", "0;0x108;fsd fa3,8(a0);0x1008",
	    "0;0x10c;fld fa4,8(a0);0x1008",  "0;0x110;fmul.d rne,fa2,fa4,fa4", "0;0x114;fsd fa2,16(a0);0x1010",
	    "0;0x118;fcvt.w.d a1,fa2,rtz",
	};
	enum { N = sizeof(lines) / sizeof(lines[0]) };
	struct edag_insn in[N];
	int cpu;
	char err[128];
	for (size_t i = 0; i < N; i++)
		assert_int_equal(edag_parse_edan_line(lines[i], strlen(lines[i]), &in[i], &cpu, err, sizeof(err)), 1);
	assert_int_equal(in[1].cls, EDAG_FLOAT);
	assert_int_equal(in[1].nwrite, 1);
	assert_int_equal(in[1].wr[0], 64 + 13); /* fa3 = f13 */
	assert_int_equal(in[1].nread, 2);
	assert_int_equal(in[1].rd[0], 64 + 15);
	assert_int_equal(in[4].wr[0], 64 + 12);
	assert_int_equal(in[6].nwrite, 1); /* a rounding mode last is no register either */
	assert_int_equal(in[6].wr[0], 11);
	assert_int_equal(in[6].nread, 1);
	struct edag_config cfg;
	edag_config_default(&cfg);
	struct edag_metrics mt;
	assert_int_equal(edag_build_window(&cfg, in, N, &mt), 0);
	assert_int_equal(mt.W, 4);
	assert_int_equal(mt.D, 4);
}

/* EDAN's default cache (-c: SingleLevelSetAssociativeCache(), 64 B lines, 2
 * ways, 32000 bytes = 250 sets of which int(log2 250) = 7 index bits reach
 * 128): --cache 32000:2:64:L --cache-model edan is the same cache as
 * 16K:2:64:L, access by access (README "Cache models"). */
static void test_edag_edan_default_cache_is_16k(void **state)
{
	(void)state;
	struct edag_config a, b;
	edag_config_default(&a);
	a.nlevels = 1;
	a.cache_model = EDAG_CACHE_EDAN;
	assert_int_equal(edag_cache_level_parse("32000:2:64:3", &a.level[0]), 0);
	assert_int_equal(a.level[0].size, 32000);
	assert_int_equal(edag_config_check(&a, NULL, 0), 0);
	b = a;
	assert_int_equal(edag_cache_level_parse("16K:2:64:3", &b.level[0]), 0);
	enum { N = 20000 };
	struct edag_insn *in = calloc(N, sizeof(*in));
	assert_non_null(in);
	uint64_t x = 7;
	for (size_t i = 0; i < N; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		in[i].cls = EDAG_LOAD;
		in[i].mem = EDAG_MEM_READ;
		in[i].size = 8;
		in[i].addr = 0x10000 + ((x >> 33) % (64 * 1024)) * 8; /* 512 KiB: misses and hits */
	}
	struct edag_metrics ma, mb;
	assert_int_equal(edag_build_window(&a, in, N, &ma), 0);
	assert_int_equal(edag_build_window(&b, in, N, &mb), 0);
	assert_true(ma.W > N / 2 && ma.level_hit[0] > 0);
	assert_int_equal(ma.W, mb.W);
	assert_int_equal(ma.level_hit[0], mb.level_hit[0]);
	free(in);
}

/* Cold misses (edag_metrics.W_cold): a miss into a set that still has an empty
 * way might have hit a cache warmed before the trace; a miss into a full set
 * cannot. One level, direct-mapped, 4 lines of 64 B: the first touch of each
 * set is cold; once a set is full, a new line there is a certain miss. */
static void test_edag_cold_misses_only_into_sets_not_full(void **state)
{
	(void)state;
	struct edag_config cfg;
	edag_config_default(&cfg);
	cfg.nlevels = 1;
	assert_int_equal(edag_cache_level_parse("256:1:64:2", &cfg.level[0]), 0);
	/* lines 0..3 (one per set), then line 4 (set 0, now full), then line 0 again */
	const uint64_t addrs[] = {0, 64, 128, 192, 256, 0};
	struct edag_insn in[6];
	memset(in, 0, sizeof(in));
	for (int i = 0; i < 6; i++) {
		in[i].cls = EDAG_LOAD;
		in[i].mem = EDAG_MEM_READ;
		in[i].size = 8;
		in[i].addr = 0x10000 + addrs[i];
	}
	struct edag_metrics mt;
	assert_int_equal(edag_build_window(&cfg, in, 6, &mt), 0);
	assert_int_equal(mt.W, 6);
	assert_int_equal(mt.W_cold, 4);
	/* warmed with the lines first (a window's warm-up summary): the same accesses find them */
	struct edag_state *st;
	assert_int_equal(edag_new(&cfg, &st), 0);
	for (int i = 0; i < 4; i++)
		edag_cache_warm(st, 0x10000 + addrs[i], 64, false);
	edag_reset_keep_cache(st);
	for (int i = 0; i < 4; i++)
		assert_int_equal(edag_step(st, &in[i], NULL), 0);
	edag_metrics_get(st, &mt);
	assert_int_equal(mt.vertices, 4);
	assert_int_equal(mt.W, 0);
	assert_int_equal(mt.level_hit[0], 4);
	/* edan model: a warm store does not fill */
	edag_free(st);
	cfg.cache_model = EDAG_CACHE_EDAN;
	assert_int_equal(edag_new(&cfg, &st), 0);
	edag_cache_warm(st, 0x10000, 64, true);
	edag_reset_keep_cache(st);
	assert_int_equal(edag_step(st, &in[0], NULL), 0);
	edag_metrics_get(st, &mt);
	assert_int_equal(mt.W, 1);
	edag_free(st);
}

/* edag_depth_rate: the growth of D over a window's later part. A pointer chase
 * (each load's address from the previous load) grows by one per load; many
 * independent chains of 8 loads (restarting) have D = 8 whatever the length:
 * in series D/n overstates it, the later growth is 0. */
static void test_edag_depth_rate_ignores_the_window_start(void **state)
{
	(void)state;
	enum { N = 4096 };
	struct edag_insn *in = calloc(N, sizeof(*in));
	assert_non_null(in);
	struct edag_config cfg;
	edag_config_default(&cfg);
	struct edag_metrics mt;
	for (int kind = 0; kind < 2; kind++) {
		for (size_t i = 0; i < N; i++) {
			in[i].cls = EDAG_LOAD;
			in[i].mem = EDAG_MEM_READ;
			in[i].size = 8;
			in[i].addr = 0x1000 + 8 * (i % 512);
			in[i].nwrite = 1;
			in[i].wr[0] = 1;
			/* chase: read r1 (the last load); chains: read r1 except every 8th, which starts afresh */
			in[i].nread = kind == 0 || i % 8 ? 1 : 0;
			in[i].rd[0] = 1;
		}
		assert_int_equal(edag_build_window(&cfg, in, N, &mt), 0);
		double rate = edag_depth_rate(&mt);
		fprintf(stderr, "# %s: D %llu, D/n %.4f, later growth %.4f per instruction\n",
			kind ? "chains of 8" : "chase", (unsigned long long)mt.D, (double)mt.D / N, rate);
		if (kind == 0) {
			assert_int_equal(mt.D, N);
			assert_true(fabs(rate - 1.0) < 1e-12);
		} else {
			assert_int_equal(mt.D, 8);
			assert_true(rate == 0);
		}
	}
	/* shorter than EDAG_DEPTH_RATE_MIN: D/n */
	assert_int_equal(edag_build_window(&cfg, in, 100, &mt), 0);
	assert_true(fabs(edag_depth_rate(&mt) - (double)mt.D / 100) < 1e-12);
	free(in);
}

/* A TraceWindow with a warm-up summary: encoded (trace_window_encode_warm),
 * validated, and replayed into the cache model by edag_window_start before the
 * window's instructions (which then hit); bad summaries are refused. */
static void test_edag_window_start_warms_from_summary(void **state)
{
	(void)state;
	struct edag_insn ins[3];
	memset(ins, 0, sizeof(ins));
	for (int i = 0; i < 3; i++) {
		ins[i].cls = EDAG_LOAD;
		ins[i].mem = EDAG_MEM_READ;
		ins[i].size = 8;
		ins[i].addr = 0x7f0000001000ull + 4096 * (uint64_t)i;
	}
	Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
	assert_int_equal(edag_window_encode(ins, 3, &tw), 0);
	/* lines in last-access order, mode read; one far below (a negative difference) */
	uint64_t lines[4] = {(0x1000ull >> 6) << 2 | 1, (0x7f0000003000ull >> 6) << 2 | 1,
			     (0x7f0000002000ull >> 6) << 2 | 3, (0x7f0000001000ull >> 6) << 2 | 1};
	assert_int_equal(trace_window_encode_warm(&tw, lines, 4, 64), 0);
	tw.warm_insns = 1000;
	tw.capture = 2;
	char err[200];
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), 0);
	uint64_t line = 0;
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(trace_window_warm_next(&tw, i, &line), (unsigned)(lines[i] & 3));
		assert_int_equal(line, lines[i] >> 2);
	}
	struct edag_config cfg;
	edag_config_default(&cfg);
	cfg.nlevels = 1;
	assert_int_equal(edag_cache_level_parse("32K:8:64:4", &cfg.level[0]), 0);
	struct edag_state *st;
	assert_int_equal(edag_new(&cfg, &st), 0);
	assert_int_equal(edag_window_start(st, &tw), 4);
	struct edag_window_iter it;
	struct edag_insn in;
	edag_window_iter_init(&it, &tw);
	while (edag_window_next(&it, &in) > 0)
		assert_int_equal(edag_step(st, &in, NULL), 0);
	struct edag_metrics mt;
	edag_metrics_get(st, &mt);
	assert_int_equal(mt.vertices, 3);
	assert_int_equal(mt.W, 0); /* all three lines were warmed */
	edag_free(st);
	/* refused: a line without a mode, a line size that is no power of two */
	int64_t keep = tw.warm_lines[1];
	tw.warm_lines[1] &= ~(int64_t)3;
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "without a mode"));
	tw.warm_lines[1] = keep;
	tw.warm_line_bytes = 48;
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), -EINVAL);
	tw.warm_line_bytes = 64;
	tw.capture = 9;
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), -EINVAL);
	edag_window_encode_free(&tw);
}

/* The approximate eDAG marks a cache figure the windows cannot support: cold
 * misses above 10% of W make W and lambda upper bounds; lambda with the cold
 * misses as hits is the low end. */
static void test_edag_approx_cold_bound(void **state)
{
	(void)state;
	struct edag_window_result w[2];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 2; i++) {
		w[i].n_insns = 100000;
		w[i].mt.vertices = 100000;
		w[i].mt.W = 1000;
		w[i].mt.W_cold = 50; /* 0.0005 per instruction, 5% of W: supported */
		w[i].capture = 2;
		w[i].warm_insns = 500000;
	}
	struct edag_approx ap;
	assert_int_equal(edag_approx_combine(w, 2, 4, 100, &ap), 0);
	assert_false(ap.cold_bound);
	assert_int_equal(ap.by_capture[2], 2);
	assert_int_equal(ap.warm_insns, 1000000);
	for (int i = 0; i < 2; i++)
		w[i].mt.W_cold = 400; /* 0.004 per instruction, 40% of W */
	assert_int_equal(edag_approx_combine(w, 2, 4, 100, &ap), 0);
	assert_true(ap.cold_bound);
	assert_true(ap.lambda_cold_hits < ap.lambda.value);
	assert_true(fabs(ap.W_cold.value - 800) < 1e-9);
}

/* A cache-resident loop: its only misses are the window's cold ones, 0.0005 per
 * instruction (under the old fixed 0.001 per instruction the report printed
 * Lambda*a0 0.051 unflagged where the full trace has 0). They are all of W: a
 * material share, so the figure is an upper bound, and with the cold misses as
 * hits lambda is 0 (the truth). */
static void test_edag_approx_cold_share_flags_cache_resident_loop(void **state)
{
	(void)state;
	struct edag_window_result w[3];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 3; i++) {
		w[i].n_insns = w[i].mt.vertices = 200000;
		w[i].mt.W = w[i].mt.W_cold = 100;
		w[i].mt.D = w[i].mt.D_at_pow2[16] = 1; /* no growth over the later half */
		w[i].mt.cp_compute = 150000;
		w[i].capture = 2;
	}
	struct edag_approx ap;
	assert_int_equal(edag_approx_combine(w, 3, 4, 100, &ap), 0);
	assert_true(ap.cold_bound);
	assert_true(ap.lambda.value > 0);
	assert_true(ap.lambda_cold_hits < 1e-9);
	/* 5 % of W cold, same per-instruction rate of misses: supported */
	for (int i = 0; i < 3; i++)
		w[i].mt.W = 2000, w[i].mt.W_cold = 100;
	assert_int_equal(edag_approx_combine(w, 3, 4, 100, &ap), 0);
	assert_false(ap.cold_bound);
	/* no memory vertex at all: nothing to flag */
	for (int i = 0; i < 3; i++)
		w[i].mt.W = w[i].mt.W_cold = w[i].mt.D = w[i].mt.D_at_pow2[16] = 0;
	assert_int_equal(edag_approx_combine(w, 3, 4, 100, &ap), 0);
	assert_false(ap.cold_bound);
}

/* Sampled windows that give no vote: a single-step window of one instruction
 * (make demo under load printed a row from one: W 0, Lambda*a0 0.000, interval
 * [0, 0]) and a replay window cut by the stop-time limit. They are counted as
 * discarded; with none left there is no estimate (-ENODATA, counts kept).
 * Windows of unknown origin (trace files) and full traces always vote. */
static void test_edag_approx_discards_short_and_cut_windows(void **state)
{
	(void)state;
	struct edag_window_result w[4];
	memset(w, 0, sizeof(w));
	w[0].n_insns = w[0].mt.vertices = 1; /* single steps, one instruction */
	w[0].capture = 1;
	w[1].n_insns = w[1].mt.vertices = 150000; /* replay, cut by the stop-time limit */
	w[1].mt.W = 150000;
	w[1].capture = 2;
	w[1].end_reason = EDAG_END_TIME;
	for (int i = 2; i < 4; i++) {
		w[i].n_insns = w[i].mt.vertices = 200000;
		w[i].mt.W = 20000;
		w[i].capture = 2;
	}
	struct edag_approx ap;
	assert_int_equal(edag_approx_combine(w, 4, 4, 100, &ap), 0);
	assert_int_equal(ap.taken, 4);
	assert_int_equal(ap.windows, 2);
	assert_int_equal(ap.discarded_short, 1);
	assert_int_equal(ap.discarded_cut, 1);
	assert_int_equal(ap.sampled_insns, 400000);
	assert_true(fabs(ap.W.value / ap.represented_insns - 0.1) < 1e-12); /* the cut window's 1.0 did not vote */
	/* nothing left */
	assert_int_equal(edag_approx_combine(w, 2, 4, 100, &ap), -ENODATA);
	assert_int_equal(ap.taken, 2);
	assert_int_equal(ap.discarded_short, 1);
	assert_int_equal(ap.discarded_cut, 1);
	assert_int_equal(ap.windows, 0);
	/* a trace file's windows (capture 0) and full traces (3) are used however short */
	w[0].capture = 0;
	w[1].capture = 3;
	assert_int_equal(edag_approx_combine(w, 2, 4, 100, &ap), 0);
	assert_int_equal(ap.windows, 2);
	assert_int_equal(ap.discarded_short + ap.discarded_cut, 0);
}

/* A window whose depth all came in its first half (D 2, no growth after vertex
 * 2^k) has a depth rate of 0; the run holds the window's chains, so its D is at
 * least 2 (the report once showed D 0 where collector edag gave the window D 2),
 * and lambda = (W - D)/m + D follows. */
static void test_edag_approx_D_at_least_deepest_window(void **state)
{
	(void)state;
	struct edag_window_result w;
	memset(&w, 0, sizeof(w));
	w.n_insns = w.mt.vertices = 1000;
	w.mt.W = 6;
	w.mt.D = 2;
	for (int k = 1; k < EDAG_DEPTH_MARKS; k++)
		w.mt.D_at_pow2[k] = 2; /* D reached 2 by vertex 2 */
	w.capture = 1;
	assert_true(edag_depth_rate(&w.mt) == 0);
	struct edag_approx ap;
	assert_int_equal(edag_approx_combine(&w, 1, 4, 100, &ap), 0);
	assert_true(fabs(ap.D.value - 2) < 1e-12);
	assert_true(ap.D.lo >= 2 && ap.D.hi >= 2);
	assert_true(fabs(ap.lambda.value - ((6.0 - 2) / 4 + 2)) < 1e-12);
}

/* An upper bound takes D's upper side: windows whose depth grew early (a
 * steady-state rate of 0 after their first half) but whose D in series is
 * large give lambda_upper = (W - D_series)/m + D_series, above lambda. */
static void test_edag_approx_upper_bound_takes_depth_in_series(void **state)
{
	(void)state;
	struct edag_window_result w[2];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 2; i++) {
		w[i].n_insns = w[i].mt.vertices = 1000;
		w[i].mt.W = 400;
		w[i].mt.W_cold = 100; /* 25 % of W: flagged */
		w[i].mt.D = 200;
		for (int k = 1; k < EDAG_DEPTH_MARKS; k++)
			w[i].mt.D_at_pow2[k] = 200; /* all of it by vertex 2 */
		w[i].capture = 1;
	}
	struct edag_approx ap;
	assert_int_equal(edag_approx_combine(w, 2, 4, 100, &ap), 0);
	assert_true(ap.cold_bound);
	assert_true(fabs(ap.D.value - 200) < 1e-9);	    /* the deepest window's */
	assert_true(fabs(ap.D_series.value - 400) < 1e-9); /* 0.2 per instruction over 2000 */
	assert_true(fabs(ap.lambda.value - ((800.0 - 200) / 4 + 200)) < 1e-9);
	assert_true(fabs(ap.lambda_upper - ((800.0 - 400) / 4 + 400)) < 1e-9);
	assert_true(ap.lambda_cold_hits <= ap.lambda.value);
}

/* A window cut short (here 1 instruction, by a stop-time limit) weighs by its
 * length: it cannot pull the estimate (it once took a triad's W/instr from
 * 0.4286 to 0.2857 as one of three equal votes). */
static void test_edag_approx_weighs_windows_by_length(void **state)
{
	(void)state;
	struct edag_window_result w[3];
	memset(w, 0, sizeof(w));
	w[0].n_insns = w[0].mt.vertices = 1;
	for (int i = 1; i < 3; i++) {
		w[i].n_insns = w[i].mt.vertices = 200000;
		w[i].mt.W = 85714;
	}
	struct edag_approx ap;
	assert_int_equal(edag_approx_combine(w, 3, 4, 100, &ap), 0);
	double rate = ap.W.value / ap.represented_insns;
	assert_true(fabs(rate - 85714.0 * 2 / 400001) < 1e-9);
	assert_true(rate > 0.4285);
}

/* The warm-up summary (common/trace/warm.h): distinct lines in the order of
 * their last access, modes merged, an access over two lines is both; with
 * max_lines entries the oldest is forgotten. Replayed into an LRU cache it
 * leaves the same lines as the accesses themselves. */
static void test_trace_warm_lines_in_last_access_order(void **state)
{
	(void)state;
	struct trace_warm w;
	assert_int_equal(trace_warm_init(&w, 64, 4), 0);
	assert_int_equal(trace_warm_add(&w, 0x1000, 8, TRACE_WARM_READ), 0);  /* line 0x40 */
	assert_int_equal(trace_warm_add(&w, 0x2000, 8, TRACE_WARM_WRITE), 0); /* 0x80 */
	assert_int_equal(trace_warm_add(&w, 0x1008, 8, TRACE_WARM_WRITE), 0); /* 0x40 again: newest, rw */
	assert_int_equal(trace_warm_add(&w, 0x303c, 8, TRACE_WARM_READ), 0);  /* 0xc0 and 0xc1 */
	uint64_t *l;
	size_t n;
	assert_int_equal(trace_warm_lines(&w, &l, &n), 0);
	assert_int_equal(n, 4);
	const uint64_t want[4] = {0x80 << 2 | 2, 0x40 << 2 | 3, 0xc0 << 2 | 1, 0xc1 << 2 | 1};
	for (size_t i = 0; i < 4; i++)
		assert_int_equal(l[i], want[i]);
	free(l);
	/* full: a new line forgets the oldest (0x80) */
	assert_int_equal(trace_warm_add(&w, 0x5000, 4, TRACE_WARM_READ), 0);
	assert_int_equal(trace_warm_lines(&w, &l, &n), 0);
	assert_int_equal(n, 4);
	assert_int_equal(l[0], 0x40 << 2 | 3);
	assert_int_equal(l[3], 0x140 << 2 | 1);
	free(l);
	trace_warm_free(&w);
	/* a random stream over 4096 lines (256 KiB), summarised in full, replayed into an 8-way
	 * cache of 512 lines: the same state as the stream itself leaves */
	assert_int_equal(trace_warm_init(&w, 64, 4096), 0);
	struct edag_config cfg;
	edag_config_default(&cfg);
	cfg.nlevels = 1;
	assert_int_equal(edag_cache_level_parse("32K:8:64:4", &cfg.level[0]), 0); /* 512 lines */
	struct edag_state *a, *b;
	assert_int_equal(edag_new(&cfg, &a), 0);
	assert_int_equal(edag_new(&cfg, &b), 0);
	uint64_t x = 1;
	for (int i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t addr = 0x100000 + ((x >> 33) % 4096) * 64; /* 256 KiB */
		trace_warm_add(&w, addr, 8, TRACE_WARM_READ);
		edag_cache_warm(a, addr, 8, false);
	}
	assert_int_equal(trace_warm_lines(&w, &l, &n), 0);
	assert_true(n > 3500 && n <= 4096);
	for (size_t i = 0; i < n; i++)
		edag_cache_warm(b, (l[i] >> 2) * 64, 64, false);
	free(l);
	/* the same state in both: every probe of the range hits or misses alike (a
	 * deterministic cache from the same state) */
	edag_reset_keep_cache(a);
	edag_reset_keep_cache(b);
	size_t hits = 0;
	for (uint64_t i = 0; i < 4096; i++) {
		struct edag_insn in = {.cls = EDAG_LOAD, .mem = EDAG_MEM_READ, .size = 8, .addr = 0x100000 + i * 64};
		struct edag_vertex va, vb;
		assert_int_equal(edag_step(a, &in, &va), 0);
		assert_int_equal(edag_step(b, &in, &vb), 0);
		assert_int_equal(va.memory, vb.memory);
		hits += !va.memory;
	}
	fprintf(stderr, "# %zu of the 4096 probes hit in both\n", hits);
	assert_true(hits > 0);
	edag_free(a);
	edag_free(b);
	trace_warm_free(&w);
}

static void test_edag_machine_json(void **state)
{
	(void)state;
	const char *j =
	    "{\"name\": \"arndale\", \"alpha0\": 180, \"m\": 2, \"costs\": {\"float\": 5, \"fma\": 9},\n"
	    " \"caches\": [{\"name\": \"L1d\", \"size\": \"32K\", \"assoc\": 2, \"line\": 64, \"latency\": "
	    "4},\n"
	    "              {\"name\": \"L2\", \"size\": 1048576, \"assoc\": 16, \"line\": 64, \"latency\": "
	    "21,"
	    " \"note\": [1, {\"x\": null}]}]}";
	struct edag_config c;
	edag_config_default(&c);
	char err[200];
	assert_int_equal(edag_machine_parse(j, strlen(j), &c, err, sizeof(err)), 0);
	assert_int_equal(c.alpha0, 180);
	assert_true(c.m == 2);
	assert_int_equal(c.class_cost[EDAG_FLOAT], 5);
	assert_int_equal(c.class_cost[EDAG_INT], 1);
	assert_int_equal(c.nlevels, 2);
	assert_string_equal(c.level[0].name, "L1d");
	assert_int_equal(c.level[0].size, 32768);
	assert_int_equal(c.level[1].latency, 21);
	const char *bad = "{\"caches\": [{\"size\": 1000, \"assoc\": 3, \"line\": 64}]}";
	struct edag_config before = c;
	assert_int_equal(edag_machine_parse(bad, strlen(bad), &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "cache level 1"));
	assert_memory_equal(&c, &before, sizeof(c)); /* unchanged on error */
	assert_int_equal(edag_machine_parse("{\"m\": 2", 7, &c, err, sizeof(err)), -EINVAL);
	struct edag_cache_level lv;
	assert_int_equal(edag_cache_level_parse("256K:8:64:12", &lv), 0);
	assert_int_equal(lv.size, 262144);
	assert_int_equal(lv.latency, 12);
	assert_int_equal(edag_cache_level_parse("256K:8:64", &lv), -EINVAL);
}

/* ---------------------------------------------------------------- TraceWindow coding */

static void test_edag_window_encode_decode_validate(void **state)
{
	(void)state;
	enum { N = 500 };
	struct edag_insn *ins = calloc(N, sizeof(*ins));
	random_trace(ins, N, 42);
	ins[7].pc = 0x10; /* a backward jump: negative pc delta */
	Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
	assert_int_equal(edag_window_encode(ins, N, &tw), 0);
	tw.arch = EDAG_ARCH_RISCV64;
	tw.sampled_share = 0.5;
	char err[200];
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), 0);
	/* through the wire */
	size_t len = prof__trace_window__get_packed_size(&tw);
	uint8_t *buf = malloc(len);
	prof__trace_window__pack(&tw, buf);
	Prof__TraceWindow *back = prof__trace_window__unpack(NULL, len, buf);
	assert_non_null(back);
	struct edag_window_iter it;
	struct edag_insn in;
	edag_window_iter_init(&it, back);
	size_t i = 0;
	int rc;
	while ((rc = edag_window_next(&it, &in)) == 1) {
		assert_true(i < N);
		assert_memory_equal(&in, &ins[i], sizeof(in));
		i++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(i, N);
	prof__trace_window__free_unpacked(back, NULL);
	free(buf);
	/* broken shapes are refused */
	tw.n_size--;
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), -EINVAL);
	tw.n_size++;
	tw.nreads[0]++;
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), -EINVAL);
	tw.nreads[0]--;
	tw.sampled_share = 1.5;
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), -EINVAL);
	tw.sampled_share = 0.5;
	tw.iclass[3] = 6;
	assert_int_equal(validate_trace_window(&tw, err, sizeof(err)), -EINVAL);
	edag_window_encode_free(&tw);
	free(ins);
}

/* ---------------------------------------------------------------- approximate eDAG */

static void test_edag_approx_scales_by_coverage(void **state)
{
	(void)state;
	struct edag_window_result w[4];
	memset(w, 0, sizeof(w));
	for (int i = 0; i < 4; i++) {
		w[i].n_insns = 1000;
		w[i].info.share = 0.25;
		w[i].info.represented_insns = 100000; /* 1% coverage */
		w[i].mt.vertices = 1000;
		w[i].mt.W = 200;
		w[i].mt.D = 20;
		w[i].mt.D_at_pow2[8] = 5; /* D grew 15 over vertices 256..1000: the steady-state rate */
		w[i].mt.cp_compute = 300;
	}
	struct edag_approx ap;
	assert_int_equal(edag_approx_combine(w, 4, 2, 100, &ap), 0);
	assert_true(ap.coverage_known);
	assert_true(fabs(ap.coverage - 0.01) < 1e-12);
	assert_true(fabs(ap.W.value - 200 * 100 * 4) < 1e-6);
	assert_true(ap.W.lo == ap.W.value && ap.W.hi == ap.W.value); /* identical windows: no spread */
	const double rate = 15.0 / 744;
	assert_true(fabs(ap.D.value - rate * 400000) < 1e-6);
	assert_true(fabs(ap.D_series.value - 20 * 400) < 1e-6);
	assert_true(fabs(ap.lambda.value - ((0.2 - rate) / 2 + rate) * 400000) < 1e-6);
	assert_true(fabs(ap.D_mean - 20) < 1e-12);
	assert_true(ap.Lambda.value > 0 && ap.Lambda.value <= 1);
	/* different windows: the interval contains the estimate and widens with the spread */
	w[0].mt.W = 100;
	w[1].mt.W = 300;
	assert_int_equal(edag_approx_combine(w, 4, 2, 100, &ap), 0);
	assert_true(ap.W.lo < ap.W.value && ap.W.value < ap.W.hi);
	assert_true(fabs(ap.W.value - 200 * 400) < 1e-6);
	/* weights: a window standing for more of the run counts more */
	w[1].info.share = 0.75;
	w[0].info.share = w[2].info.share = w[3].info.share = 0.25 / 3;
	assert_int_equal(edag_approx_combine(w, 4, 2, 100, &ap), 0);
	assert_true(ap.W.value > 200 * 400);
	assert_int_equal(edag_approx_combine(w, 0, 2, 100, &ap), -EINVAL);
}

/* The machine model `collector calibrate --model` writes: "cache_levels" with
 * measured (non-power-of-two) sizes, unknown associativity, fractional latency. */
static void test_edag_machine_json_from_calibration(void **state)
{
	static const char json[] =
		"{\"schema\": \"prof-machine-model/1\", \"params\": {\"x\": {\"value\": 1}},\n"
		" \"cache_levels\": [\n"
		"  {\"level\": 1, \"size_bytes\": 46336, \"line_bytes\": 64, \"assoc\": 12, \"latency_cycles\": 3.2},\n"
		"  {\"level\": 2, \"size_bytes\": 741376, \"line_bytes\": 64, \"assoc\": null, \"latency_cycles\": 12.6}],\n"
		" \"roofline\": {\"peak_gflops\": 137}, \"alpha0\": 134, \"m\": null}";
	struct edag_config cfg;
	edag_config_default(&cfg);
	double m_default = cfg.m;
	char err[256] = "";
	assert_int_equal(edag_machine_parse(json, strlen(json), &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.nlevels, 2);
	assert_int_equal(cfg.level[0].assoc, 12);
	assert_int_equal(cfg.level[0].size, 46080); /* 60 sets of 12 x 64 B */
	assert_int_equal(cfg.level[0].latency, 3);
	assert_int_equal(cfg.level[1].assoc, 8); /* unknown: 8 ways */
	assert_int_equal(cfg.level[1].size % (8 * 64), 0);
	assert_true(cfg.level[1].size <= 741376 && cfg.level[1].size > 741376 - 512);
	assert_int_equal(cfg.level[1].latency, 13);
	assert_int_equal(cfg.alpha0, 134);
	assert_true(cfg.m == m_default); /* null: default kept */
	assert_int_equal(edag_config_check(&cfg, err, sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_edag_seed_false_deps_6_to_5),
	    cmocka_unit_test(test_edag_hand_dag_known_w_d_cp),
	    cmocka_unit_test(test_edag_register_raw_only_true_deps),
	    cmocka_unit_test(test_edag_zero_register_is_no_dependency),
	    cmocka_unit_test(test_edag_memory_raw_overlapping_sizes),
	    cmocka_unit_test(test_edag_cache_direct_mapped_and_lru),
	    cmocka_unit_test(test_edag_cache_model_edan_vs_project),
	    cmocka_unit_test(test_edag_bounds_ordering_and_Lambda_range),
	    cmocka_unit_test(test_edag_streaming_equals_graph_random),
	    cmocka_unit_test(test_edag_graph_bounded),
	    cmocka_unit_test(test_edag_state_memory_flat_in_trace_length),
	    cmocka_unit_test(test_edag_native_text_and_binary),
	    cmocka_unit_test(test_edag_edan_lines),
	    cmocka_unit_test(test_edag_edan_rounding_mode_before_destination),
	    cmocka_unit_test(test_edag_edan_default_cache_is_16k),
	    cmocka_unit_test(test_edag_cold_misses_only_into_sets_not_full),
	    cmocka_unit_test(test_edag_depth_rate_ignores_the_window_start),
	    cmocka_unit_test(test_edag_window_start_warms_from_summary),
	    cmocka_unit_test(test_edag_approx_cold_bound),
	    cmocka_unit_test(test_edag_approx_weighs_windows_by_length),
	    cmocka_unit_test(test_edag_approx_cold_share_flags_cache_resident_loop),
	    cmocka_unit_test(test_edag_approx_discards_short_and_cut_windows),
	    cmocka_unit_test(test_edag_approx_D_at_least_deepest_window),
	    cmocka_unit_test(test_edag_approx_upper_bound_takes_depth_in_series),
	    cmocka_unit_test(test_trace_warm_lines_in_last_access_order),
	    cmocka_unit_test(test_edag_machine_json),
	    cmocka_unit_test(test_edag_machine_json_from_calibration),
	    cmocka_unit_test(test_edag_window_encode_decode_validate),
	    cmocka_unit_test(test_edag_approx_scales_by_coverage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
