/* Private to collector/query/: the state query_run() builds (query.c) and the
 * parts each file of the query model reads (query_sess.c: a session's mappings
 * and task names; query_keys.c: a range's sample keys summed; query_series.c:
 * the samples over time; query_kernel.c: the kernel tables the agents sent).
 * Not an API: include query.h. */
#ifndef COLLECTOR_QUERY_PRIV_H
#define COLLECTOR_QUERY_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"
#include "query.h"
#include "query_pool.h"
#include "store/store_blocks.h"
#include "store/store_kinds.h" /* store_stmt and the db_* readers */
#include "store/store_perf_map.h"
#include "symbols.h"

#define QM_BID_MAX 64 /* bytes of a build-id kept (a longer one is left out) */
struct map_row {
	int64_t id;
	int32_t pid;
	uint32_t ident; /* the same file mapped the same way (path, build-id, start, end, pgoff) in any
			   process of the session: one number (qm_maps_ident), the frame cache's key */
	uint64_t start, end, pgoff;
	const char *path;   /* the session's one copy of (build-id, path) (sess.files): a board whose */
	const uint8_t *bid; /* programs restart maps the same files again and again */
	size_t bidlen;
};

struct task_row {
	int32_t pid, tid;
	const char *comm, *thread; /* pooled */
};

/* A later process of a pid in the session (pid reuse, w44a: sample_task_incs, TaskName.incarnation > 0). */
struct inc_row {
	int32_t pid, tid;
	uint32_t inc;
	int64_t seq;		   /* the first record that declared it: the pid's keys are its from there */
	uint32_t first_map_id;	   /* the pid's mapping ids from this one on are its (0: not known) */
	const char *comm, *thread; /* pooled */
};

/* Where a pid's process changes: its keys in the records from seq on are incarnation inc's (the highest
 * declared up to there). Sorted by (pid, seq). */
struct inc_start {
	int32_t pid;
	uint32_t inc;
	int64_t seq;
};

/* qm_find_map: any mapping of the pid (the latest declared holding the address), whichever process. */
#define QM_INC_ANY UINT32_MAX

/* A process's mappings by start (ties: in declaration order), each with the largest end of it and
 * those before it: the mappings holding an address are found from the last start at or below it,
 * going down while that largest end is above it (mappings met over a session may overlap: a file
 * mapped again where another was; the latest declared wins, as in qm_find_map). query_sess.c */
struct mix_ent {
	uint64_t start, end, maxend;
	size_t row; /* in sess.maps */
};
struct map_index {
	bool set;
	int32_t pid;
	uint32_t inc;
	struct mix_ent *ent;
	size_t n, cap;
};

/* The session being read. */
struct sess {
	int64_t id;
	int64_t realtime_ns;
	const char *agent_id, *board; /* pooled */
	struct map_row *maps;
	size_t nmaps, capmaps;
	struct key_map file_ids; /* (build-id, path) -> index in files */
	uint8_t **files;	 /* each: its build-id's length, the build-id, the path and its NUL */
	size_t nfiles, capfiles;
	struct task_row *tasks;
	size_t ntasks;
	struct inc_row *incs; /* sorted by (pid, inc, tid); none in most sessions and every older store */
	size_t nincs;
	struct inc_start *starts;
	size_t nstarts;
	struct key_map frame_of_ip; /* (pid, ip, kernel) -> frame index */
	struct map_index *mix;	    /* QM_MIX_SLOTS, made at the first qm_find_map_indexed (query_sess.c) */
	struct sym_resolver
	    *ksr; /* kernel functions of its boot (the agent's KernelSymbols), NULL: b->sr's */
	struct perf_map_sym *jit; /* JIT symbols (PerfMap records), sorted by (pid, start) */
	size_t njit;
	uint64_t sample_ns; /* one sample's time in this session (read_info: sample_period_ns) */
};

/* The kernel tables the agents sent, one per (agent, kernel boot id) met. */
struct kboot {
	const char *agent_id; /* pooled */
	char boot[KSYMS_BOOT_ID_MAX + 1];
	struct sym_resolver *sr; /* NULL: none stored (or none usable) */
};

struct build {
	struct query_result *r;
	struct str_pool pool;
	struct key_map frame_ids; /* (function, module) -> frame index */
	struct key_map stack_ids; /* (session, pid, tid, frames) -> stack index */
	struct key_map name_stack_ids; /* query_opts.merge_tasks: (session, process name, frames) -> index */
	bool merge_tasks;
	bool tasks_only; /* query_opts.tasks_only */
	size_t frame_cache_max; /* QM_FRAME_CACHE_MAX (PROF_QUERY_FRAME_CACHE: tests) */
	size_t max_stacks; /* QUERY_MAX_STACKS (PROF_QUERY_MAX_STACKS: tests) */
	uint32_t *fidx;		  /* every stack's frame indexes */
	size_t nfidx, capfidx;
	size_t *stack_off; /* stacks[i].frames = fidx + stack_off[i] */
	size_t capoff;
	size_t capframes, capstacks, capsessions, cappoints;
	struct sym_resolver *sr;
	bool have_tasks, have_blocks, have_kstacks; /* tables an older collector's store may lack */
	bool have_rows;				    /* cpu_samples: only in an older collector's store */
	bool have_pid_cols; /* sample_blocks.pid_*: not in an older collector's store */
	bool have_incs;	    /* sample_task_incs: not in an older collector's store */
	bool have_block_samples; /* sample_blocks.samples: not in an older store opened read-only */
	bool have_key_ids;	 /* sample_key_ids, sample_blocks.fmt (#40 w45a): not in an older store opened read-only */
	struct kboot *kboots;
	size_t nkboots;
	int event_id; /* -1 none yet, -2 mixed */
	int64_t event_sid;
	int be_min, be_max;
	int64_t damaged_sid; /* the session a damaged block was last warned of (0: none) */
};

/* The keys of a range summed: an open-addressing set on the key's fields (query_keys.c). */
struct kset {
	struct store_block_key *rows;
	uint64_t *first; /* where each row's key was first met (block << 24 | key): the order rows are
			    handed on in, whichever thread met them (query_blocks.c) */
	size_t n, cap;
	uint64_t *slots; /* the key's hash's high half << 32 | row index + 1, 0 free */
	size_t scap;
	bool unordered; /* rows merged from threads: not in first-met order until qm_kset_order */
};

static inline int qm_grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap * 2 : 64;
	while (nc < need)
		nc *= 2;
	void *n = realloc(*arr, nc * elem);
	if (!n)
		return -ENOMEM;
	*arr = n;
	*cap = nc;
	return 0;
}

static inline bool qm_in_str_list(const char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

static inline bool qm_in_pid_list(const int32_t *list, size_t n, int32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

static inline bool qm_in_sid_list(const int64_t *list, size_t n, int64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

/* query_sess.c */
void qm_sess_free(struct sess *se);
int qm_load_maps(struct store *s, struct sess *se);
/* The vdso image se's agent sent, given to b's resolver where se has a [vdso] mapping (query_vdso.c). */
int qm_vdso_of(struct store *s, struct build *b, struct sess *se);
int qm_load_tasks(struct store *s, struct build *b, struct sess *se);
/* The names of the pids' later processes (pid reuse, w44a); qm_sess_sort then makes se->starts. */
int qm_load_incs(struct store *s, struct build *b, struct sess *se);
/* The process (incarnation) of pid whose keys record seq holds: 0 where the pid was not used again. */
uint32_t qm_inc_of(const struct sess *se, int32_t pid, int64_t seq);
/* The JIT symbols se's agent sent (query_perf_map.c); an address of pid in none of its
 * mappings is described from them: true (out set, its module in buf) or false. */
int qm_perf_map_of(struct store *s, struct sess *se);
bool qm_jit_frame(const struct sess *se, int32_t pid, uint64_t ip, char *buf, size_t buflen, struct sym_frame *out);
/* Sorts the session's maps, tasks and later processes (0, -ENOMEM). */
int qm_sess_sort(struct sess *se);
/* Each map's ident: equal for the maps of one file at one place (a program restarted under new pids
 * maps the same files at the same addresses), so an address's frame is described once per such
 * mapping, not once per process (0, -ENOMEM). */
int qm_maps_ident(struct sess *se);
/* query_incs.c: the later processes sorted and their starts made (0, -ENOMEM); the map ids of pid's
 * process inc, [*lo, *hi); its names from its rows (false: it has none). */
int qm_incs_sort(struct sess *se);
void qm_inc_map_ids(const struct sess *se, int32_t pid, uint32_t inc, int64_t *lo, int64_t *hi);
bool qm_inc_names(const struct sess *se, int32_t pid, int32_t tid, uint32_t inc, const char **comm,
		  const char **thread);
/* The mapping of pid's process inc (QM_INC_ANY: any of the pid's) holding ip, NULL if none. */
const struct map_row *qm_find_map(const struct sess *se, int32_t pid, uint32_t inc, uint64_t ip);
/* The same mapping, found by bisection in an index of the process's mappings by address (made at its
 * first look-up, kept for the last process met in each of QM_MIX_SLOTS slots by pid): a process with
 * thousands of mappings (ART, JVM) is not scanned at every frame. */
#define QM_MIX_SLOTS 64
const struct map_row *qm_find_map_indexed(struct sess *se, int32_t pid, uint32_t inc, uint64_t ip);
/* Process and thread names of (pid, tid) in pid's process inc. */
void qm_task_names(const struct sess *se, int32_t pid, int32_t tid, uint32_t inc, const char **comm,
		   const char **thread);
/* Is one of pid's processes (any incarnation) named one of f's --comm names? */
bool qm_pid_named(const struct sess *se, const struct query_filter *f, int32_t pid);
/* query_comm.c: f with a --comm list turned into the session's pids of those names (and of f's
 * pids), in out (f as it is when there is no --comm, or more such pids than a list holds).
 * 0: out set, 1: no pid of the session has one of the names (it adds no sample). */
int qm_comm_pids(const struct sess *se, const struct query_filter *f, struct query_filter *out);
/* query_keys.c */
int qm_kset_add(struct kset *ks, const struct store_block_key *k, uint64_t first);
/* The same, the index of k's row in ks->rows in *row (stays its row: rows are only added). */
int qm_kset_add_at(struct kset *ks, const struct store_block_key *k, uint64_t first, size_t *row);
/* n keys, first met at first, first + 1, ... (one block's: their memory fetched ahead). */
int qm_kset_add_many(struct kset *ks, const struct store_block_key *keys, size_t n, uint64_t first);
/* src's rows summed into dst (src left as it was). */
int qm_kset_merge(struct kset *dst, const struct kset *src);
/* The rows in the order their keys were first met (their slots dropped: no add after this). */
int qm_kset_order(struct kset *ks);
void qm_kset_free(struct kset *ks);
int qm_rows_needed(struct store *s, const struct build *b, int64_t sid, bool *yes);
/* query_kcache.c: a block's keys summed into ks through a cache of their bytes, kept from block to block
 * (a decoder's: its rows are ks's), blocks given in increasing first. After qm_kcache_flush, the same
 * sums, rows and first-met order as decoding each key with store_block_get, filtering it by f's pids
 * and adding it with qm_kset_add_at at first + its place among the block's kept keys. A key whose
 * identity (pid, tid, ip, kip and stack id varints) is over QM_KCACHE_IDENT bytes, or met when the
 * table holds QM_KCACHE_MAX, is decoded each time. */
#define QM_KCACHE_WORDS 3
#define QM_KCACHE_IDENT (8 * QM_KCACHE_WORDS)
#define QM_KCACHE_MAX (1u << 17) /* entries (40 bytes each) and 2^18 slots of 8: at most 7 MiB */
struct qm_kcache_ent {
	uint64_t w[QM_KCACHE_WORDS]; /* the identity's bytes, zero past them */
	uint64_t count;		     /* summed since it was met (its row's count is summed at flush) */
	uint32_t len;		     /* its length */
	uint32_t row;		     /* its row in the set, UINT32_MAX: dropped by the filter */
};
struct qm_kcache {
	uint64_t *slots; /* the identity's hash's high half << 32 | entry index + 1, 0 free */
	size_t cap;
	struct qm_kcache_ent *ents; /* in the order met */
	size_t n, capents;
};
/* 0 (*damaged set where a key does not decode: the block's later keys are not read), or -ENOMEM. */
int qm_kcache_sum_block(struct qm_kcache *c, struct kset *ks, const uint8_t *p, size_t len,
			const struct query_filter *f, uint64_t first, bool *damaged);
/* The counts summed in c's entries since the last flush added to their rows in ks (before ks is read). */
void qm_kcache_flush(struct qm_kcache *c, struct kset *ks);
void qm_kcache_free(struct qm_kcache *c);
/* query_blocks.c: the blocks of a range decoded (on up to qm_decode_threads() threads) and summed, each
 * key's inc set from its block's seq where se has a reused pid. */
/* stop_keys (0: none): the read ends at the first change of t_ns once about that many keys are
 * summed, *stop_t that t_ns (hi where the range was read whole): [lo, *stop_t) was read. */
struct store_keydict;
int qm_keys_from_blocks(struct store *s, struct build *b, const struct sess *se, const struct query_filter *f,
			const struct store_keydict *kd, int64_t lo, int64_t hi, size_t stop_keys, int64_t *stop_t,
			struct kset *ks);
/* The session's key dictionary (id blocks, store_keyids.h) for qm_keys_from_blocks: loaded once per
 * session's range, not per slice (none where the store has no key ids). */
int qm_keydict_load(struct store *s, struct build *b, int64_t sid, struct store_keydict *kd);
/* Before each slice after the first: the ids the session's writers committed since (on PostgreSQL, whose
 * queries have no read snapshot, a block written during a long report holds them; review r8 of the
 * merge, as w45g's 0a5b4e3 did). */
int qm_keydict_extend(struct store *s, struct build *b, int64_t sid, struct store_keydict *kd);
/* The blocks of [lo, hi) a --pid filter passed over (read: those decoded) added to blocks_passed:
 * once per session's range (qm_read_keys), not per slice. */
int qm_count_passed(struct store *s, struct build *b, int64_t sid, int64_t lo, int64_t hi, uint64_t read);
unsigned qm_decode_threads(void);
int qm_keys_from_rows(struct store *s, int64_t sid, const struct query_filter *f, int64_t lo, int64_t hi,
		      bool uncovered, struct kset *ks);
/* query_chains.c: the chains (sample_stacks, or sample_kernel_stacks with kernel) of n stack ids, sorted
 * and distinct, each cut to max frames, read QM_CHAIN_BATCH ids a statement; an id without a row has none. */
#define QM_CHAIN_BATCH 64
struct qm_chain_ent {
	uint32_t id, n;
	size_t off;
};
struct qm_chains {
	struct qm_chain_ent *ent; /* sorted by id */
	size_t nent, capent;
	uint64_t *ips;
	size_t nips, capips;
};
int qm_chains_load(struct store *s, bool kernel, int64_t sid, const uint32_t *ids, size_t n, size_t max,
		   struct qm_chains *c);
/* id's chain copied into ips (room for the load's max); its frame count, 0 for none. */
size_t qm_chains_get(const struct qm_chains *c, uint32_t id, uint64_t *ips);
void qm_chains_free(struct qm_chains *c);
/* query_stacks.c: the keys of [lo, hi) of se (f's pids) as the result's stacks, their samples added to
 * *samples; the range read in slices of blocks holding about QM_SLICE_KEYS keys (at most ~60 bytes
 * each while summed, per decoding thread), the stacks the same as in one piece. */
#define QM_SLICE_KEYS (1u << 17)
/* Entries of a session's frame cache (~120 bytes each with the table: at most ~32 MiB); emptied
 * when full (query_stacks.c). */
#define QM_FRAME_CACHE_MAX (1u << 18)
int qm_read_keys(struct store *s, struct build *b, struct sess *se, const struct query_filter *f, int64_t lo,
		 int64_t hi, uint64_t *samples);
/* query_series.c */
int qm_read_series(struct store *s, struct build *b, struct sess *se, const struct query_filter *f,
		   int64_t lo, int64_t hi);
/* query_kernel.c */
int qm_kernel_of(struct store *s, struct build *b, struct sess *se);

#endif
