/* The query model under every field-profiling view (DESIGN.md "Field
 * profiling views"): filters (time range, agents, boards, sessions, process
 * names, pids) select the CPU samples of a store, across sessions and agents,
 * SQLite and PostgreSQL alike; the result is a set of aggregated stacks
 * (frames + count + the process/thread/pid/tid/agent/session they belong to)
 * and, per grouping, top rows with self and total counts. Top tables, flame
 * graphs, diffs, exports and the live pages render these; no view runs its
 * own SQL.
 *
 * One option parser for every command that takes filters: put
 * QUERY_LONG_OPTIONS in the command's getopt_long table and hand each option
 * to query_opt(); print QUERY_OPTS_HELP in its usage.
 *
 * Times are wall-clock ns since the Unix epoch (a sample's wall time is its
 * session's Hello.realtime_ns + its t_ns). Functions return 0 or a negative
 * errno. This header is the whole API of collector/query/ (stable: extend,
 * don't change). */
#ifndef COLLECTOR_QUERY_H
#define COLLECTOR_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

#define QUERY_MAX_LIST 64 /* entries of one list filter (--agent a,b ... or repeated) */

enum query_group {
	QUERY_BY_FUNCTION = 0, /* function (with its module and process) */
	QUERY_BY_MODULE,       /* module: file basename, "[kernel]", "[unknown]" */
	QUERY_BY_PROCESS,      /* process name (comm) */
	QUERY_BY_THREAD,       /* thread name and tid, within its process */
	QUERY_BY_AGENT,        /* agent id */
	QUERY_BY_STACK,        /* the whole call chain */
};

struct query_filter {
	int64_t since_ns, until_ns; /* wall clock, unix ns; 0 = open-ended */
	size_t nagents, nboards, ncomms, npids, nsessions;
	const char *agents[QUERY_MAX_LIST]; /* agent ids (exact) */
	const char *boards[QUERY_MAX_LIST]; /* Hello.board (exact) */
	const char *comms[QUERY_MAX_LIST];  /* process names (exact) */
	int32_t pids[QUERY_MAX_LIST];
	int64_t sessions[QUERY_MAX_LIST];
};

/* What a command parsed: the filter, the grouping and the resolver's options. */
struct query_opts {
	struct query_filter f;
	enum query_group by; /* --by; default QUERY_BY_FUNCTION */
	bool by_set;	     /* --by was given */
	const char *symfs;   /* --symfs DIR (NULL: none) */
	const char *debug_dir; /* --debug-dir DIR: separate debug files by build-id (NULL: /usr/lib/debug) */
	const char *kallsyms;  /* --kallsyms FILE: kernel symbols of the profiled boot (NULL: kernel is one lump) */
	int64_t now_ns;	     /* "now" for durations (0: the clock at query_opts_init) */
	bool series;	     /* also the samples over time (query_result.points): CPU charts, Perfetto */
	bool merge_tasks;    /* a session's stacks of one process name merged across its pids and tids
				(query_stack.pid / tid 0 and thread "" where a stack holds several): the
				result's size is the names', not the processes' (a board whose programs
				restart under new pids). For views that show no pid of their own (report's
				top by function, module, process, agent or stack); the order of first meeting
				is kept. A stack without a process name is never merged. */
	bool tasks_only;     /* no call chains: one stack per task (session, pid, tid), its one frame
				"[task]" (report's top by thread, which reads no frame: its rows stay right
				however many stacks the tasks' chains would make) */
	void *priv;	     /* copies of list arguments: query_opts_free() */
};

/* getopt_long values of the shared options (above any short option). */
enum {
	QUERY_OPT_SINCE = 0x5100,
	QUERY_OPT_UNTIL,
	QUERY_OPT_AGENT,
	QUERY_OPT_BOARD,
	QUERY_OPT_COMM,
	QUERY_OPT_PID,
	QUERY_OPT_SESSION,
	QUERY_OPT_BY,
	QUERY_OPT_SYMFS,
	QUERY_OPT_DEBUG_DIR,
	QUERY_OPT_KALLSYMS,
};

/* Entries for a command's struct option table (no terminator). A command
 * that handles --session or --symfs itself leaves those out by listing
 * QUERY_LONG_OPTIONS_FILTERS instead and calling query_opt() for the rest. */
#define QUERY_LONG_OPTIONS_FILTERS                                                                         \
	{"since", required_argument, NULL, QUERY_OPT_SINCE}, {"until", required_argument, NULL, QUERY_OPT_UNTIL}, \
	    {"agent", required_argument, NULL, QUERY_OPT_AGENT},                                              \
	    {"board", required_argument, NULL, QUERY_OPT_BOARD},                                              \
	    {"comm", required_argument, NULL, QUERY_OPT_COMM}, {"pid", required_argument, NULL, QUERY_OPT_PID}, \
	    {"by", required_argument, NULL, QUERY_OPT_BY}
#define QUERY_LONG_OPTIONS                                                                                 \
	QUERY_LONG_OPTIONS_FILTERS, {"session", required_argument, NULL, QUERY_OPT_SESSION},                  \
	    {"symfs", required_argument, NULL, QUERY_OPT_SYMFS},                                               \
	    {"debug-dir", required_argument, NULL, QUERY_OPT_DEBUG_DIR},                                       \
	    {"kallsyms", required_argument, NULL, QUERY_OPT_KALLSYMS}

#define QUERY_OPTS_HELP                                                                                    \
	"filters (any combination; lists: comma-separated or the option repeated):\n"                        \
	"  --since T / --until T   time range: a duration back from now (30s, 10m, 2h, 7d, 1w), now,\n"             \
	"                          an ISO-8601 time (2026-12-03T18:00:00Z, +hh:mm offsets) or unix seconds\n"   \
	"  --agent ID   --board NAME   --comm NAME   --pid N   --session N[,M...]\n"                            \
	"  --by function|module|process|thread|agent|stack   grouping of the rows (default function)\n"        \
	"  --symfs DIR  look for the profiled binaries under DIR (like perf --symfs)\n"                         \
	"  --debug-dir DIR  separate debug files under DIR/.build-id/ too (before /usr/lib/debug's;\n"           \
	"               DEBUGINFOD_URLS set: a debuginfod server is asked too)\n"                                \
	"  --kallsyms FILE  kernel functions from FILE (/proc/kallsyms of the profiled board's boot)\n"

/* Zero the options; now_ns 0 = CLOCK_REALTIME now. */
void query_opts_init(struct query_opts *o, int64_t now_ns);
/* Free what query_opt() kept (the filter's strings point into it). */
void query_opts_free(struct query_opts *o);
/* Take one getopt_long result: 1 if ch was a query option and arg was good,
 * 0 if ch is not a query option, -EINVAL (message in err) for a bad value. */
int query_opt(struct query_opts *o, int ch, const char *arg, char *err, size_t errlen);
/* Check the combination (since < until, ...); -EINVAL with a message. */
int query_opts_check(const struct query_opts *o, char *err, size_t errlen);
/* Whether any filter other than --session is set. */
bool query_filter_any(const struct query_filter *f);

/* Parsers, exposed for tests and other commands (prune --older-than). */
/* "30s", "10m", "2h", "7d", "1w", "500ms", "1h30m" -> ns (> 0). */
int query_parse_duration(const char *s, int64_t *ns);
/* A duration back from now_ns, an ISO-8601 time or unix seconds (fraction allowed) -> unix ns. */
int query_parse_time(const char *s, int64_t now_ns, int64_t *unix_ns);
int query_parse_group(const char *s, enum query_group *g);
const char *query_group_name(enum query_group g);

/* ------------------------------------------------------------- results */

struct query_frame {
	const char *function; /* symbol (demangled), "[module]" (unresolved addresses of a module, grouped),
				 "[kernel]" (no kallsyms) or "[unknown]" (no mapping) */
	const char *module;   /* file basename, "[kernel]" or "[unknown]" */
	uint64_t ip;
	bool kernel;   /* a kernel address */
	bool resolved; /* function is a symbol name */
	const char *raw;   /* the symbol as in the file (mangled), "" if unresolved */
	uint64_t file_off; /* ip's offset in the module's file (unresolved frames: one frame per address) */
	const char *path;     /* the mapped file's path ("" kernel/unknown; a function's: the first mapping seen) */
	const char *build_id; /* its build-id in hex ("" none) */
	const char *src_file; /* source file of the first address seen (DWARF), "" unknown */
	uint32_t src_line;    /* its line, 0 unknown */
};

/* One aggregated stack: its samples in the range, and the keys it belongs to. */
struct query_stack {
	const uint32_t *frames; /* indexes into query_result.frames; frames[0] the leaf (innermost) */
	size_t nframes;		/* >= 1 */
	uint64_t count;
	const char *comm;   /* process name ("" unknown) */
	const char *thread; /* thread name ("" unknown) */
	int32_t pid, tid;
	const char *agent_id, *board;
	int64_t session_id;
	uint64_t sample_ns; /* ns one of its samples stands for: its session's (sample_period.h) */
	/* which of the pid's processes (pid reuse: query_task_time.inc), 0 where not reused or where
	 * merged by name across processes; here, not beside tid, to keep the struct at 88 bytes (r13 F2) */
	uint32_t inc;
	bool other; /* the session's "[other]" stack (past QUERY_MAX_STACKS): no task's, pid and tid 0 */
};

struct query_session_info {
	int64_t id;
	const char *agent_id, *board;
	int64_t first_ns, last_ns; /* wall time: start of the first interval in range, end of the last (0 none) */
	uint64_t samples;	   /* samples in range */
	uint64_t freq_hz, period;  /* its records' largest frequency and their period at it (as the result's) */
	uint64_t sample_ns;	   /* ns one of its samples stands for: sample_period_ns(freq_hz, period), or
				      where its records' periods differ (an agent upgraded within one boot)
				      their samples' mean period, to the ns */
};

/* Samples of one sampling interval of one process (with series). */
struct query_point {
	int64_t t_ns;	  /* wall clock, unix ns: the interval's start */
	int64_t session_t_ns; /* the same, on its session's clock (after Hello.base_ns) */
	int64_t session_id;
	uint64_t count;
	const char *comm; /* process name ("" unknown) */
	int32_t pid;
	const char *agent_id;
};

/* The most distinct stacks a result holds (~340 bytes each with its key and frames: ~350 MiB, measured
 * on a store of 505,060 processes, report --by thread, bench/RESULTS.md w45d); the samples of
 * any further one are counted in its session's "[other]" stack (query_result.other), never dropped,
 * and the query warns once, naming the limit and how to narrow the query. */
#define QUERY_MAX_STACKS (1u << 20)

struct query_result {
	struct query_frame *frames; /* interned: one per (function, module); kernel frames one per address */
	size_t nframes;
	struct query_stack *stacks;
	size_t nstacks;
	struct query_session_info *sessions; /* sessions that matched the filter, by id */
	size_t nsessions;
	uint64_t total;	       /* samples of every stack */
	uint64_t lost;	       /* samples the agents reported lost in the range */
	uint64_t intervals;    /* sample records in the range */
	uint64_t interval_ns;  /* sum of their intervals */
	uint64_t freq_hz;      /* largest requested frequency (0 if by period) */
	uint64_t period;       /* the records' sample period at freq_hz (timers: ns; 0 unknown); sessions
				  differ (an older agent's timer: 1/F, a newer one's 1/F + 1/128 of it):
				  time is each stack's count x its own sample_ns, never total x this */
	char event[128];       /* sampled event ("cpu-clock"; "mixed" if several) */
	char backend[8];       /* "bpf", "ring" or "mixed" */
	int64_t first_ns, last_ns; /* wall range of the selected intervals */
	struct query_point *points; /* with query_opts.series: by session, then time */
	size_t npoints;
	size_t skipped;		/* sessions left out because they could not be read (each warned once) */
	uint64_t blocks_read;	/* sample blocks decoded */
	uint64_t blocks_passed; /* sample blocks of the time range a --pid filter passed over unread (their
				   pid range or bits: sample_blocks.pid_*) */
	uint64_t other;		/* samples of the stacks past QUERY_MAX_STACKS, counted in one stack per session
				   of process, thread and function "[other]" (warned once), 0 if none */
	uint64_t keys_held_max; /* the most distinct keys one slice of a session's range summed at once
				   (query_stacks.c: at most about QM_SLICE_KEYS, whatever the range holds) */
	void *priv;		/* owned storage */
};

/* Run the filter over the store: stacks resolved on this host (symfs may be
 * NULL). *out is freed with query_result_free(). An empty result is not an
 * error (total 0). */
int query_run(struct store *s, const struct query_opts *o, struct query_result **out);
void query_result_free(struct query_result *r);

/* A session's on/off-CPU time (task_times, the bpf back end's sched_switch accounting) of one task of
 * one process, summed over the session (query_task_times.c). A pid used again within the session
 * (pid reuse, w44a) is one row per process, as its samples are: a record's times of pid are the
 * process its keys would be (TaskName.incarnation), each named by its own process's names. */
struct query_task_time {
	int32_t pid, tid;
	uint32_t inc; /* which of the pid's processes: 0 its first in the session (every older store's) */
	uint64_t on_ns, off_ns, switches;
	const char *comm, *thread; /* "" unknown; valid during the callback only */
};
typedef int (*query_task_time_cb)(const struct query_task_time *t, void *arg);
/* Every task of session sid, by (pid, tid, inc), in one read transaction; cb's error stops it. One
 * pass over the session's task_times; memory: its later processes' names (sample_task_incs), not its
 * tasks. 0 or -errno. */
int query_task_times(struct store *s, int64_t sid, query_task_time_cb cb, void *arg);

/* One row of a top table. */
struct query_top_row {
	const char *name;    /* the group's name: function, module, process, "thread (tid)", agent, stack */
	const char *module;  /* function: its module; else "" */
	const char *process; /* the process with the most samples in the row ("" none) */
	int32_t pid;	     /* that process's pid if the row has one pid, else 0 */
	const char *agent_id; /* the agent with the most samples in the row */
	uint64_t self;	      /* samples whose leaf is in the row */
	uint64_t total;	      /* samples with the row anywhere on their stack (counted once per stack) */
};

struct query_top {
	struct query_top_row *rows; /* by self, then total, then name */
	size_t nrows;
	uint64_t samples; /* the result's total */
	void *priv;
};

int query_top(const struct query_result *r, enum query_group by, struct query_top *out);
void query_top_free(struct query_top *t);

/* Write the stack's frames root first as "f1;f2;...;leaf" (the folded
 * format's key; ';' in names replaced by ':'). Returns the length as
 * snprintf does. */
int query_stack_folded(const struct query_result *r, const struct query_stack *k, char *buf, size_t len);

/* ------------------------------------------------------- downsampling */

struct query_downsample_stats {
	uint64_t sessions;	/* looked at */
	uint64_t sessions_left; /* left as they are: an older collector's cpu_samples rows */
	uint64_t windows;	/* merged */
	uint64_t blocks_in, blocks_out;
	bool more; /* query_downsample_some: it stopped at max_windows, windows are left */
};

/* Long retention (#40, query_downsample.c): in every session, the sample blocks of records that ended
 * before cutoff_ns (unix ns) merged per window_ns of the session's time into one block of the summed
 * keys (the window's first seq, its last record's time): the same totals and per-key sums, at the
 * window's time resolution. Windows already merged are left (run it again at will). 0 or -errno. */
int query_downsample(struct store *s, int64_t cutoff_ns, int64_t window_ns, struct query_downsample_stats *out);
/* The same, a pass of at most max_windows windows merged (0: no bound); out->more when it stopped
 * there with windows left: the next pass goes on (windows merged are not met again). */
int query_downsample_some(struct store *s, int64_t cutoff_ns, int64_t window_ns, size_t max_windows,
			  struct query_downsample_stats *out);

#endif
