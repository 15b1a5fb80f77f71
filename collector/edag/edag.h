/* eDAG engine (EDAN): execution-DAG metrics of instruction traces.
 *
 * This header is the whole API of the library. The library is pure: no I/O,
 * no logging, no global mutable state. Every function returns 0 or a
 * negative errno unless documented otherwise; callers own all buffers.
 *
 * Model. Each instruction of a trace is a vertex. Edges are true
 * dependencies only: read-after-write through registers and through memory
 * (per byte, using each access's size). WAR, WAW and RAR make no edge unless
 * edag_config.all_deps is set. Memory accesses go through an optional
 * set-associative LRU cache model; accesses that miss the last level are
 * *memory vertices* (cost alpha0), hits are non-memory vertices costing the
 * latency of the level that hit, other instructions cost their class cost.
 *
 * Metrics (struct edag_metrics): V vertices, W memory vertices (memory work),
 * D memory depth (most memory vertices on one path), the critical path in
 * vertices and in cost, average parallelism V / critical path (vertices),
 * and from edag_bounds(): max(D, W/m)*a <= M <= ((W-D)/m + D)*a,
 * lambda = (W-D)/m + D and Lambda = lambda / (lambda*alpha0 + C), where C is
 * the non-memory cost on the cost-critical path.
 *
 * Streaming: edag_step() computes each vertex's depth and path lengths from
 * the last writer of its registers and bytes, so memory is O(registers +
 * touched 8-byte chunks), never O(trace length). A full graph is built only
 * on request (struct edag_graph, bounded size).
 *
 * Register numbering: one space of EDAG_NREGS numbers for every arch, defined
 * in common/isa_regs.h (0 = zero register / none, never a dependency). */
#ifndef COLLECTOR_EDAG_EDAG_H
#define COLLECTOR_EDAG_EDAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"
#include "trace/native.h"
#include "trace/window_codec.h"

/* Instructions (struct edag_insn, classes, arches, register names) and the
 * native trace codec are shared with the agent: common/trace/native.h. */

/* ---------------------------------------------------------------- configuration */

#define EDAG_MAX_LEVELS 4

struct edag_cache_level {
	char name[16];	  /* "L1d", "L2", ... */
	uint64_t size;	  /* bytes */
	uint32_t assoc;	  /* ways */
	uint32_t line;	  /* bytes, power of two */
	uint32_t latency; /* cost of a hit at this level */
};

/* How the cache levels are used (edag_config.cache_model; README "Cache models"). */
enum edag_cache_model {
	/* the project's: every access (load or store) probes the levels, line by
	 * line over all the bytes it touches; a miss fills (write-allocate);
	 * sets = size / (ways x line), any count */
	EDAG_CACHE_PROJECT = 0,
	/* EDAN's (eDAG_generator/cache_model.py): only accesses that read and do
	 * not write (loads) probe, with their first byte only; stores (and
	 * read-modify-writes) never probe or fill and are always memory vertices;
	 * set index = the low floor(log2(size / (ways x line))) bits of the line
	 * number, so a set count that is no power of two is rounded down to one */
	EDAG_CACHE_EDAN = 1,
};

struct edag_config {
	bool all_deps;	      /* add WAR, WAW and RAR edges (the seed's comparison) */
	unsigned nlevels;     /* 0: no cache model, every access is a memory vertex */
	unsigned cache_model; /* enum edag_cache_model (with nlevels > 0) */
	struct edag_cache_level level[EDAG_MAX_LEVELS];
	uint32_t alpha0;		  /* cost of a memory vertex (baseline latency), > 0 */
	uint32_t class_cost[EDAG_NCLASS]; /* cost of non-memory vertices per class */
	double m;			  /* memory issue slots for the bounds, >= 1 */
	double alpha;			  /* latency for the bounds M */
	uint64_t time_slice; /* width of a time slice (cost units) for the time layering; 0: alpha0 */
};

/* "project" / "edan" (and "none" when nlevels is 0, for output). */
const char *edag_cache_model_name(const struct edag_config *cfg);
/* "project" (or "default") / "edan"; -EINVAL if unknown. */
int edag_cache_model_parse(const char *name);

/* Defaults: no cache, alpha0 = alpha = 100, m = 1, class costs 1 (float 4). */
void edag_config_default(struct edag_config *cfg);
/* Check a configuration (sizes are powers of two, levels grow, ...). */
int edag_config_check(const struct edag_config *cfg, char *err, size_t errlen);
/* Parse a machine model (JSON, shape in collector/edag/README.md) into cfg,
 * overriding only the fields present. */
int edag_machine_parse(const char *json, size_t len, struct edag_config *cfg, char *err, size_t errlen);
/* Parse a cache level "SIZE:ASSOC:LINE:LATENCY" (SIZE may end in K or M). */
int edag_cache_level_parse(const char *spec, struct edag_cache_level *out);

/* ---------------------------------------------------------------- metrics */

#define EDAG_LAYER_BINS 1024 /* bins of each layering histogram (they widen to fit) */
#define EDAG_DEPTH_MARKS 48  /* edag_metrics.D_at_pow2 */

struct edag_histogram {
	uint64_t width;			 /* units per bin (doubles when the range outgrows the bins) */
	uint32_t nbins;			 /* bins in use */
	uint64_t count[EDAG_LAYER_BINS]; /* memory vertices */
	uint64_t bytes[EDAG_LAYER_BINS]; /* bytes they access */
};

struct edag_metrics {
	uint64_t vertices;
	uint64_t accesses;		      /* instructions that access memory */
	uint64_t W;			      /* memory vertices (misses of the last level) */
	/* of which cold: every line of the access that missed the last level went into a
	 * set with an empty way (fewer distinct lines than ways since the cache was last
	 * emptied). LRU keeps a set's most recent distinct lines, so a miss into a full
	 * set is a miss whatever the cache held before; a cold one might have hit a cache
	 * warmed by what ran before the trace: W - W_cold is a lower bound on W there. */
	uint64_t W_cold;
	uint64_t D;			      /* memory depth */
	uint64_t level_miss[EDAG_MAX_LEVELS]; /* accesses missing each level (W per level) */
	uint64_t level_hit[EDAG_MAX_LEVELS];
	/* D when the vertex count reached 2^k (k < EDAG_DEPTH_MARKS): the growth of D
	 * over a window's later part, without its start (edag_approx_combine) */
	uint64_t D_at_pow2[EDAG_DEPTH_MARKS];
	uint64_t cp_vertices;		/* longest path, in vertices */
	uint64_t cp_cost;		/* longest path, in cost */
	uint64_t cp_compute;		/* C: non-memory cost on that path */
	uint64_t cp_memory;		/* memory vertices on that path */
	uint64_t edges_reg, edges_mem;	/* true-dependence edges found (duplicates included) */
	uint64_t edges_false;		/* WAR/WAW/RAR edges (all_deps only) */
	double parallelism;		/* vertices / cp_vertices */
	struct edag_histogram by_depth; /* memory vertices per memory-depth layer */
	struct edag_histogram by_time;	/* memory vertices per start-time slice */
};

struct edag_bounds {
	double m, alpha, alpha0;
	double lower, upper; /* max(D, W/m)*alpha <= M <= ((W-D)/m + D)*alpha */
	double lambda;	     /* (W-D)/m + D */
	double Lambda;	     /* lambda / (lambda*alpha0 + C), in [0,1] */
};

/* Bounds for m, alpha and alpha0 from W, D and C of mt. */
void edag_bounds(const struct edag_metrics *mt, double m, double alpha, double alpha0,
		 struct edag_bounds *out);
/* Sweep: out[i*nalpha + j] = bounds at ms[i], alphas[j] (alpha0 = cfg alpha0). */
void edag_sweep(const struct edag_metrics *mt, uint32_t alpha0, const double *ms, size_t nm,
		const double *alphas, size_t nalpha, struct edag_bounds *out);

/* ---------------------------------------------------------------- streaming engine */

enum edag_dep { EDAG_DEP_RAW_REG, EDAG_DEP_RAW_MEM, EDAG_DEP_FALSE_REG, EDAG_DEP_FALSE_MEM };

/* Optional edge observer (graph materialisation): from and to are vertex
 * indices (0-based order of edag_step calls); an edge may be reported more
 * than once. Return non-zero to stop: edag_step then returns -ECANCELED. */
typedef int (*edag_edge_cb)(void *arg, uint64_t from, uint64_t to, enum edag_dep kind);

/* Per-vertex facts, optional output of edag_step. */
struct edag_vertex {
	bool memory;   /* a memory vertex (missed the last level) */
	bool cold;     /* a memory vertex that was a cold miss (edag_metrics.W_cold) */
	int hit_level; /* level that hit, -1 for none / no access */
	uint32_t cost;
	uint64_t depth;	 /* memory depth ending here (saturates at 2^32-1) */
	uint64_t path;	 /* longest path ending here, vertices (saturates at 2^32-1) */
	uint64_t finish; /* longest path ending here, cost (start = finish - cost) */
};

struct edag_state;

/* New engine (cfg copied; checked with edag_config_check). */
int edag_new(const struct edag_config *cfg, struct edag_state **out);
void edag_free(struct edag_state *st);
/* Forget the trace (registers, memory, cache, metrics), keep the configuration. */
void edag_reset(struct edag_state *st);
/* Forget registers, memory and metrics but keep what the cache model holds: the
 * instructions so far only warmed the caches (a window's warm-up part). */
void edag_reset_keep_cache(struct edag_state *st);
/* Touch the cache model as an access of [addr, addr+size) would (a store when
 * write; the cache model's rules: edan stores do not fill), without a vertex or
 * metrics: warming the caches from a summary of the lines a window's warm-up
 * touched. */
void edag_cache_warm(struct edag_state *st, uint64_t addr, uint32_t size, bool write);
void edag_set_edge_cb(struct edag_state *st, edag_edge_cb cb, void *arg);
/* Add one instruction. -EINVAL for a malformed instruction (class, size,
 * register counts); the state is unchanged then. v may be NULL. */
int edag_step(struct edag_state *st, const struct edag_insn *in, struct edag_vertex *v);
/* edag_step over n instructions (faster: it prefetches the memory-table
 * slots of instructions a few steps ahead). Stops at the first error. */
int edag_step_batch(struct edag_state *st, const struct edag_insn *ins, size_t n);
/* Current metrics (cheap: no copy of the histograms beyond the struct). */
void edag_metrics_get(const struct edag_state *st, struct edag_metrics *out);
/* Bytes the state holds now (tables, cache model). */
size_t edag_state_bytes(const struct edag_state *st);
const struct edag_config *edag_state_config(const struct edag_state *st);

/* Whole trace at once: edag_new + edag_step each + edag_metrics_get. */
int edag_build_window(const struct edag_config *cfg, const struct edag_insn *ins, size_t n,
		      struct edag_metrics *out);

/* ---------------------------------------------------------------- materialised graph */

#define EDAG_GRAPH_MAX_DEFAULT 100000u

struct edag_gvertex {
	uint64_t pc, addr;
	uint32_t size, cost;
	uint8_t cls, memory;
	int8_t hit_level;
	uint32_t first_edge, nedges; /* incoming edges in edges[] */
};

struct edag_gedge {
	uint64_t from;
	uint8_t kind; /* enum edag_dep */
};

struct edag_graph {
	size_t max_vertices;
	size_t nv, ne, cape, capv;
	struct edag_gvertex *v;
	struct edag_gedge *e; /* grouped by target vertex, unique per (from, to) */
	struct edag_state *st;
};

/* A graph of at most max_vertices (0: EDAG_GRAPH_MAX_DEFAULT). */
int edag_graph_new(const struct edag_config *cfg, size_t max_vertices, struct edag_graph **out);
void edag_graph_free(struct edag_graph *g);
/* Add an instruction: -E2BIG once max_vertices are in. */
int edag_graph_add(struct edag_graph *g, const struct edag_insn *in);
/* Metrics recomputed from the stored vertices and edges (longest paths by
 * dynamic programming over the graph, independent of the streaming tables). */
void edag_graph_metrics(const struct edag_graph *g, struct edag_metrics *out);

/* ---------------------------------------------------------------- importers (pure parsers) */

/* The native text and binary formats: common/trace/native.h. */

/* One line of EDAN's QEMU execlog plugin output ("CPU;0xPC;DISASM[;0xADDR]..."),
 * RISC-V. Returns 1 and fills *in (and *cpu, -1 if the line has no CPU
 * column), 0 for a blank line, -EINVAL with a reason otherwise. */
int edag_parse_edan_line(const char *line, size_t len, struct edag_insn *in, int *cpu, char *err,
			 size_t errlen);

/* The same with what the reader reports: edag_edan_parse returns 1 for an
 * instruction, 0 for a blank or '#' comment line, -EINVAL (reason in err)
 * for a line that is no instruction (bad columns, mnemonic or operand
 * bytes, too few operands for a memory access). An instruction whose
 * mnemonic is not in the parser's table is still returned (class guessed
 * from its first letter, first operand written) with unknown set. */
struct edag_edan_info {
	int cpu;	     /* the CPU column, -1 if the line has none */
	bool unknown;	     /* mnemonic not known: class guessed */
	bool no_addr;	     /* a memory instruction without an address column: no access */
	const char *mnem;    /* the mnemonic ("c." stripped), into the line */
	size_t mnem_len;
};
int edag_edan_parse(const char *line, size_t len, struct edag_insn *in, struct edag_edan_info *info, char *err,
		    size_t errlen);
/* The first line of buf[0..len) (up to and with its '\n'), split and
 * parsed in one pass: *used = its bytes. Returns as edag_edan_parse (same
 * results), or -EAGAIN when buf holds no whole line (give more bytes, or
 * the last line to edag_edan_parse). cache (may be NULL): decoded
 * instructions by PC, reused when a line repeats the disassembly text of
 * the last line seen at that PC (loops); about 512 KiB. */
struct edag_edan_cache;
struct edag_edan_cache *edag_edan_cache_new(void);
void edag_edan_cache_free(struct edag_edan_cache *c);
int edag_edan_parse_next(const char *buf, size_t len, size_t *used, struct edag_insn *in,
			 struct edag_edan_info *info, struct edag_edan_cache *cache, char *err, size_t errlen);

/* TraceWindow records <-> instructions (edag_window_iter, edag_window_next,
 * edag_window_encode): common/trace/window_codec.h. */

/* ---------------------------------------------------------------- approximate eDAG */

/* One window's result, for edag_approx_combine. */
struct edag_window_result {
	struct edag_window_info info;
	uint64_t n_insns;
	struct edag_metrics mt; /* histograms not used */
	/* how it was taken (TraceWindow): capture 0 unknown, 1 single steps, 2 replay, 3 full
	 * trace; instructions that only warmed the cache before it; the thread's stop time */
	uint32_t capture;
	uint64_t warm_insns;
	uint64_t stop_ns;
	uint32_t end_reason; /* TraceWindow.end_reason (0 complete; EDAG_END_TIME: the stop-time limit) */
};

/* Start a window of a TraceWindow record: forget the previous one (edag_reset),
 * then, when the record carries a warm-up summary (warm_lines), touch the cache
 * model with its lines in order and forget registers and memory again
 * (edag_reset_keep_cache): the window's instructions find the caches as the
 * warm-up left them. Returns the number of warm-up lines used. */
size_t edag_window_start(struct edag_state *st, const Prof__TraceWindow *tw);

struct edag_estimate {
	double value;  /* whole-run estimate */
	double lo, hi; /* 95% confidence interval */
};

/* The cold-miss tolerance: the windows support a cache-model W when their cold
 * misses (edag_metrics.W_cold, which might have hit a cache warmed before the
 * window) are at most EDAG_COLD_REL of W: a material share of W makes W, lambda
 * and Lambda upper bounds however few misses per instruction that is (a
 * cache-resident loop whose only misses are cold ones has no memory cost at all). */
#define EDAG_COLD_REL 0.10

/* Sampled windows (capture 1 single steps, 2 replay) that give no vote: shorter
 * than EDAG_WINDOW_MIN_INSNS recorded instructions (a window of a few steps says
 * nothing about depth or misses), or ended by the stop-time limit (TraceWindow
 * end_reason EDAG_END_TIME: its length was decided by the machine's load, not by
 * the program). Full traces (3) and windows of unknown origin (0: trace files) are
 * always used. */
#define EDAG_WINDOW_MIN_INSNS 256
#define EDAG_END_TIME 7 /* agent/trace/window.h TRACE_END_TIME */

struct edag_approx {
	size_t windows;		 /* windows used */
	size_t taken;		 /* windows given (used + discarded) */
	size_t discarded_short;	 /* sampled windows under EDAG_WINDOW_MIN_INSNS instructions */
	size_t discarded_cut;	 /* sampled windows cut by the stop-time limit */
	uint64_t sampled_insns;	  /* instructions in the windows */
	double represented_insns; /* instructions they stand for (sampled_insns if unknown) */
	double coverage;	  /* sampled / represented */
	bool coverage_known;	  /* every window carried represented_insns */
	/* D (and lambda, Lambda) from each window's steady-state depth growth
	 * (edag_depth_rate); D_series adds the windows' D in series, an upper side */
	struct edag_estimate V, W, D, cp_vertices, cp_compute, lambda, Lambda;
	struct edag_estimate W_cold, D_series;
	double lambda_cold_hits; /* lambda with every cold miss taken as a hit (the low end) */
	/* lambda with D's upper side (the windows' D in series, D_series, at most W): the
	 * high end an upper bound prints, since lambda grows with D for m > 1 and a short
	 * window's steady-state depth rate can be low (a quicksort printed "<= 0.153" where
	 * its full trace has 0.168) */
	double lambda_upper;
	bool cold_bound;	 /* cold misses above the tolerance: W, lambda, Lambda are upper bounds */
	double D_min, D_max, D_mean; /* per-window memory depth */
	/* how the windows were taken (edag_window_result.capture: counts per kind) */
	size_t by_capture[4];
	uint64_t warm_insns; /* all the windows' warm-up instructions */
	uint64_t stop_ns;    /* all the windows' stop time */
};

/* Growth of the memory depth per instruction over the later part of a window
 * (from vertex 2^k, the largest power of two <= vertices/2, to its end): the
 * steady-state rate D grows at in a long run, without the window's start,
 * where chains begin from nothing and D/vertices overstates it. A window of
 * fewer than EDAG_DEPTH_RATE_MIN vertices gives D / vertices. */
#define EDAG_DEPTH_RATE_MIN 256
double edag_depth_rate(const struct edag_metrics *mt);

/* Whole-run estimates from n windows. Per-instruction rates (W/n, lambda/n,
 * ...) are averaged with weights sampled share x instructions (a window cut
 * short weighs less; windows of one length weigh by their share); totals are the
 * rate times the represented instructions (so W and lambda scale with
 * 1/coverage). D's rate is each window's steady-state growth
 * (edag_depth_rate; D_series: D/n, windows in series); lambda's rate is
 * (W/n - D rate)/m + D rate. The interval is mean +- t(0.975, k-1) * weighted
 * standard error (none for a single window: lo = hi = value). D is at least
 * the largest D of one window (the run holds every window's chains). cold_bound
 * is set when the cold misses exceed EDAG_COLD_REL of W. Windows that give no
 * vote (EDAG_WINDOW_MIN_INSNS, EDAG_END_TIME) are counted in discarded_*; with
 * none left: -ENODATA (out->taken and the discarded counts set). */
int edag_approx_combine(const struct edag_window_result *w, size_t n, double m, double alpha0,
			struct edag_approx *out);

#endif
