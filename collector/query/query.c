/* query_run(): the CPU samples a filter selects, across the sessions of a
 * store, as aggregated stacks resolved on this host (query.h).
 *
 * Per selected session: its time bounds become t_ns bounds (wall =
 * sessions.realtime_ns + t_ns), the database groups the rows of the range by
 * key (pid, tid, ip, kip, stack_id) from the packed sample_blocks (or the
 * cpu_samples rows of older sessions), and each key becomes a stack of
 * interned frames: the kernel chain (or [kip]) + the user chain, or [ip]
 * when there is no chain. Keys that end with the same frames, task and
 * session are merged. Process and thread names come from sample_tasks (the
 * agent's interned names); without them the process is the basename of the
 * pid's lowest mapped file (its executable), pid 0 is "swapper". */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "query.h"
#include "query_pool.h"
#include "store/store_blocks.h"
#include "store/store_kallsyms.h"
#include "store/store_kinds.h"
#include "symbols.h"

static const char q_sessions[] = "SELECT id, agent_id, board, realtime_ns FROM sessions ORDER BY id";
static const char q_maps[] = "SELECT map_id, pid, start, \"end\", pgoff, path, build_id FROM sample_mappings"
			     " WHERE session_id = ?1 ORDER BY map_id";
static const char q_tasks[] = "SELECT pid, tid, comm, thread FROM sample_tasks WHERE session_id = ?1";
/* The samples over time (query_opts.series): per record and pid, from the rows or the packed blocks. */
static const char q_series[] = "SELECT t_ns, pid, SUM(count) FROM cpu_samples"
			       " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3 GROUP BY t_ns, pid ORDER BY t_ns";
static const char q_series_blocks[] = "SELECT t_ns, data FROM sample_blocks"
				      " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3 ORDER BY t_ns";
/* Sessions stored before sample_blocks: their rows, summed per key in C (no GROUP BY: SQLite's sorter is
 * several times slower on millions of rows). */
static const char q_keys[] = "SELECT pid, tid, ip, kip, stack_id, count FROM cpu_samples"
			     " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3";
static const char q_blocks[] = "SELECT data FROM sample_blocks WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3";
static const char q_nblocks[] = "SELECT COUNT(*) FROM sample_blocks WHERE session_id = ?1";
static const char q_nrecords[] = "SELECT COUNT(*) FROM sample_intervals WHERE session_id = ?1 AND keys > 0";
static const char q_stack[] = "SELECT ips FROM sample_stacks WHERE session_id = ?1 AND stack_id = ?2";
static const char q_kstack[] = "SELECT ips FROM sample_kernel_stacks WHERE session_id = ?1 AND stack_id = ?2";
static const char q_info[] = "SELECT COUNT(*), COALESCE(SUM(lost), 0), COALESCE(MIN(backend), 0),"
			     " COALESCE(MAX(backend), 0), COALESCE(MAX(freq_hz), 0), COALESCE(SUM(interval_ns), 0),"
			     " COALESCE(MIN(t_ns - interval_ns), 0), COALESCE(MAX(t_ns), 0), COALESCE(MIN(event_id), 0),"
			     " COALESCE(MAX(event_id), 0) FROM sample_intervals"
			     " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3";
static const char q_event[] = "SELECT name FROM events WHERE session_id = ?1 AND event_id = ?2";

struct map_row {
	int64_t id;
	int32_t pid;
	uint64_t start, end, pgoff;
	char *path;
	uint8_t bid[64];
	size_t bidlen;
};

struct task_row {
	int32_t pid, tid;
	const char *comm, *thread; /* pooled */
};

/* The session being read. */
struct sess {
	int64_t id;
	int64_t realtime_ns;
	const char *agent_id, *board; /* pooled */
	struct map_row *maps;
	size_t nmaps;
	struct task_row *tasks;
	size_t ntasks;
	struct key_map frame_of_ip; /* (pid, ip, kernel) -> frame index */
	struct sym_resolver *ksr;   /* kernel functions of its boot (the agent's KernelSymbols), NULL: b->sr's */
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
	uint32_t *fidx;		  /* every stack's frame indexes */
	size_t nfidx, capfidx;
	size_t *stack_off; /* stacks[i].frames = fidx + stack_off[i] */
	size_t capoff;
	size_t capframes, capstacks, capsessions, cappoints;
	struct sym_resolver *sr;
	bool have_tasks, have_blocks, have_kstacks; /* tables an older collector's store may lack */
	struct kboot *kboots;
	size_t nkboots;
	int event_id; /* -1 none yet, -2 mixed */
	int64_t event_sid;
	int be_min, be_max;
};

struct result_priv {
	struct str_pool pool;
	uint32_t *fidx;
};

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
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

static bool in_str_list(const char *const *list, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

static bool in_pid_list(const int32_t *list, size_t n, int32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

static bool in_sid_list(const int64_t *list, size_t n, int64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (list[i] == v)
			return true;
	return false;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void sess_free(struct sess *se)
{
	for (size_t i = 0; i < se->nmaps; i++)
		free(se->maps[i].path);
	free(se->maps);
	free(se->tasks);
	key_map_free(&se->frame_of_ip);
	memset(se, 0, sizeof(*se));
}

static int load_maps(struct store *s, struct sess *se)
{
	struct db_stmt *st = store_stmt(s, q_maps);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	size_t cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (grow((void **)&se->maps, &cap, se->nmaps + 1, sizeof(*se->maps)) < 0) {
			rc = -ENOMEM;
			break;
		}
		struct map_row *m = &se->maps[se->nmaps];
		m->id = db_col_i64(st, 0);
		m->pid = (int32_t)db_col_i64(st, 1);
		m->start = db_col_u64(st, 2);
		m->end = db_col_u64(st, 3);
		m->pgoff = db_col_u64(st, 4);
		m->path = strdup(db_col_text(st, 5));
		size_t bl;
		const void *bid = db_col_blob(st, 6, &bl);
		m->bidlen = bl <= sizeof(m->bid) ? bl : 0;
		if (m->bidlen)
			memcpy(m->bid, bid, m->bidlen);
		if (!m->path) {
			rc = -ENOMEM;
			break;
		}
		se->nmaps++;
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}

static int load_tasks(struct store *s, struct build *b, struct sess *se)
{
	if (!b->have_tasks)
		return 0;
	struct db_stmt *st = store_stmt(s, q_tasks);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	size_t cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (grow((void **)&se->tasks, &cap, se->ntasks + 1, sizeof(*se->tasks)) < 0) {
			rc = -ENOMEM;
			break;
		}
		struct task_row *t = &se->tasks[se->ntasks];
		t->pid = (int32_t)db_col_i64(st, 0);
		t->tid = (int32_t)db_col_i64(st, 1);
		t->comm = str_pool_intern(&b->pool, db_col_text(st, 2));
		t->thread = str_pool_intern(&b->pool, db_col_text(st, 3));
		if (!t->comm || !t->thread) {
			rc = -ENOMEM;
			break;
		}
		se->ntasks++;
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}

/* Maps by (pid, map id), tasks by (pid, tid): a pid's rows are one run, found by bisection
 * (a system-wide week holds many thousands of both). */
static int map_cmp(const void *a, const void *b)
{
	const struct map_row *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int task_cmp(const void *a, const void *b)
{
	const struct task_row *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void sess_sort(struct sess *se)
{
	if (se->nmaps > 1)
		qsort(se->maps, se->nmaps, sizeof(*se->maps), map_cmp);
	if (se->ntasks > 1)
		qsort(se->tasks, se->ntasks, sizeof(*se->tasks), task_cmp);
}

/* First index in rows (sorted by pid, each elem bytes with the pid at pid_off) whose pid >= pid. */
static size_t lower_pid(const void *rows, size_t n, size_t elem, size_t pid_off, int32_t pid)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int32_t v;
		memcpy(&v, (const char *)rows + mid * elem + pid_off, sizeof(v));
		if (v < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mapping of pid holding ip; the latest declared wins (a pid's maps are in declaration order). */
static const struct map_row *find_map(const struct sess *se, int32_t pid, uint64_t ip)
{
	size_t i = lower_pid(se->maps, se->nmaps, sizeof(*se->maps), offsetof(struct map_row, pid), pid + 1);
	while (i-- > 0 && se->maps[i].pid == pid)
		if (ip >= se->maps[i].start && ip < se->maps[i].end)
			return &se->maps[i];
	return NULL;
}

/* Process and thread names of (pid, tid). */
static void task_names(const struct sess *se, int32_t pid, int32_t tid, const char **comm, const char **thread)
{
	*comm = *thread = "";
	size_t i = lower_pid(se->tasks, se->ntasks, sizeof(*se->tasks), offsetof(struct task_row, pid), pid);
	for (; i < se->ntasks && se->tasks[i].pid == pid; i++) {
		if (!**comm || se->tasks[i].tid == pid)
			*comm = se->tasks[i].comm;
		if (se->tasks[i].tid == tid)
			*thread = se->tasks[i].thread;
	}
	if (!**comm) {
		if (pid == 0) {
			*comm = "swapper";
		} else {
			/* the executable: the file mapped lowest (programs load below their libraries) */
			const struct map_row *exe = NULL;
			size_t j = lower_pid(se->maps, se->nmaps, sizeof(*se->maps), offsetof(struct map_row, pid), pid);
			for (; j < se->nmaps && se->maps[j].pid == pid; j++)
				if (se->maps[j].path[0] == '/' && (!exe || se->maps[j].start < exe->start))
					exe = &se->maps[j];
			if (exe)
				*comm = base_name(exe->path);
		}
	}
}

static int intern_frame(struct build *b, const struct sym_frame *sf, bool kernel, uint32_t *out)
{
	/* one frame per (function, module); an unresolved address (user: its file
	 * offset, kernel: the address) one frame each, under the same "[module]" or
	 * "[kernel]" name: views group them by name, exports keep the addresses */
	char key[1100];
	unsigned long long addr = sf->resolved ? 0ull : kernel ? (unsigned long long)sf->ip : (unsigned long long)sf->file_off;
	int kl = snprintf(key, sizeof(key), "%s%c%s%c%llx", sf->name, 0, sf->module, 0, addr);
	if (kl < 0 || (size_t)kl >= sizeof(key))
		kl = sizeof(key) - 1;
	if (key_map_get(&b->frame_ids, key, (size_t)kl, out))
		return 0;
	struct query_result *r = b->r;
	if (grow((void **)&r->frames, &b->capframes, r->nframes + 1, sizeof(*r->frames)) < 0)
		return -ENOMEM;
	struct query_frame *f = &r->frames[r->nframes];
	f->function = str_pool_intern(&b->pool, sf->name);
	f->module = str_pool_intern(&b->pool, sf->module);
	f->raw = str_pool_intern(&b->pool, sf->raw ? sf->raw : "");
	f->ip = sf->ip;
	f->file_off = sf->file_off;
	f->path = str_pool_intern(&b->pool, sf->path ? sf->path : "");
	f->build_id = str_pool_intern(&b->pool, sf->build_id ? sf->build_id : "");
	if (!f->path || !f->build_id)
		return -ENOMEM;
	f->kernel = kernel;
	f->resolved = sf->resolved;
	if (!f->function || !f->module || !f->raw || key_map_put(&b->frame_ids, key, (size_t)kl, (uint32_t)r->nframes) < 0)
		return -ENOMEM;
	*out = (uint32_t)r->nframes++;
	return 0;
}

/* The frame of address ip of pid (kernel: a kernel address), described by
 * sym_describe (symbols.h): demangled functions, kallsyms kernel functions,
 * unresolved addresses grouped per module. */
static int frame_of(struct build *b, struct sess *se, int32_t pid, uint64_t ip, bool kernel, uint32_t *out)
{
	struct {
		int32_t pid;
		int32_t kernel;
		uint64_t ip;
	} k = {kernel ? 0 : pid, kernel, ip};
	if (key_map_get(&se->frame_of_ip, &k, sizeof(k), out))
		return 0;
	char buf[600];
	struct sym_frame sf;
	struct sym_mapping sm;
	const struct map_row *m = kernel ? NULL : find_map(se, pid, ip);
	if (m)
		sm = (struct sym_mapping){.path = m->path, .build_id = m->bid, .build_id_len = m->bidlen,
					  .start = m->start, .end = m->end, .pgoff = m->pgoff};
	sym_describe(kernel && se->ksr ? se->ksr : b->sr, m ? &sm : NULL, ip, kernel, buf, sizeof(buf), &sf);
	char hex[2 * 64 + 1] = "";
	if (m) { /* what a later symbolizer needs (the pprof export's mappings) */
		sf.path = m->path;
		sf.build_id = m->bidlen ? sym_build_id_hex(m->bid, m->bidlen, hex, sizeof(hex)) : NULL;
	}
	int rc = intern_frame(b, &sf, kernel, out);
	if (rc == 0)
		rc = key_map_put(&se->frame_of_ip, &k, sizeof(k), *out);
	return rc;
}

static int load_chain(struct store *s, const char *sql, int64_t sid, uint32_t stack_id, uint64_t *ips, size_t max,
		      size_t *n)
{
	*n = 0;
	struct db_stmt *st = store_stmt(s, sql);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, stack_id);
	int rc = db_step(st);
	if (rc == 1) {
		size_t len;
		const uint8_t *p = db_col_blob(st, 0, &len);
		for (size_t i = 0; i + 8 <= len && *n < max; i += 8) {
			uint64_t v = 0;
			for (int k = 0; k < 8; k++)
				v |= (uint64_t)p[i + k] << (8 * k);
			ips[(*n)++] = v;
		}
		rc = 0;
	}
	db_reset(st);
	return rc;
}

#define MAX_FRAMES 256

static int add_stack(struct build *b, struct sess *se, int32_t pid, int32_t tid, const uint32_t *fr, size_t nfr,
		     uint64_t count)
{
	struct query_result *r = b->r;
	size_t klen = sizeof(int64_t) + 2 * sizeof(int32_t) + nfr * sizeof(uint32_t);
	unsigned char key[sizeof(int64_t) + 2 * sizeof(int32_t) + MAX_FRAMES * sizeof(uint32_t)];
	memcpy(key, &se->id, sizeof(int64_t));
	memcpy(key + 8, &pid, 4);
	memcpy(key + 12, &tid, 4);
	memcpy(key + 16, fr, nfr * sizeof(uint32_t));
	uint32_t idx;
	if (key_map_get(&b->stack_ids, key, klen, &idx)) {
		r->stacks[idx].count += count;
		return 0;
	}
	if (grow((void **)&r->stacks, &b->capstacks, r->nstacks + 1, sizeof(*r->stacks)) < 0 ||
	    grow((void **)&b->stack_off, &b->capoff, r->nstacks + 1, sizeof(*b->stack_off)) < 0)
		return -ENOMEM;
	size_t *so = b->stack_off;
	if (grow((void **)&b->fidx, &b->capfidx, b->nfidx + nfr, sizeof(*b->fidx)) < 0)
		return -ENOMEM;
	memcpy(b->fidx + b->nfidx, fr, nfr * sizeof(uint32_t));
	so[r->nstacks] = b->nfidx;
	b->nfidx += nfr;
	struct query_stack *k = &r->stacks[r->nstacks];
	memset(k, 0, sizeof(*k));
	k->nframes = nfr;
	k->count = count;
	task_names(se, pid, tid, &k->comm, &k->thread);
	/* names from the mappings are not pooled: pool them (sess memory goes away) */
	k->comm = str_pool_intern(&b->pool, k->comm);
	k->thread = str_pool_intern(&b->pool, k->thread);
	k->pid = pid;
	k->tid = tid;
	k->agent_id = se->agent_id;
	k->board = se->board;
	k->session_id = se->id;
	if (!k->comm || !k->thread || key_map_put(&b->stack_ids, key, klen, (uint32_t)r->nstacks) < 0)
		return -ENOMEM;
	r->nstacks++;
	return 0;
}

/* The keys of a range summed: an open-addressing set on the key's fields. */
struct kset {
	struct store_block_key *rows;
	size_t n, cap;
	uint32_t *slots; /* row index + 1, 0 free */
	size_t scap;
};

static uint64_t khash(const struct store_block_key *k)
{
	uint64_t h = ((uint64_t)(uint32_t)k->pid << 32 | (uint32_t)k->tid) * 0x9e3779b97f4a7c15ull;
	h ^= (k->ip + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= (k->kip ^ ((uint64_t)k->stack_id << 40)) * 0x94d049bb133111ebull;
	return h ^ (h >> 29);
}

static bool same_key(const struct store_block_key *a, const struct store_block_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->ip == b->ip && a->kip == b->kip &&
	       a->stack_id == b->stack_id;
}

static int kset_add(struct kset *ks, const struct store_block_key *k)
{
	if ((ks->n + 1) * 2 > ks->scap) {
		size_t nc = ks->scap ? ks->scap * 2 : 1024;
		uint32_t *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < ks->n; i++) {
			size_t j = khash(&ks->rows[i]) & (nc - 1);
			while (ns[j])
				j = (j + 1) & (nc - 1);
			ns[j] = (uint32_t)i + 1;
		}
		free(ks->slots);
		ks->slots = ns;
		ks->scap = nc;
	}
	size_t j = khash(k) & (ks->scap - 1);
	for (; ks->slots[j]; j = (j + 1) & (ks->scap - 1)) {
		struct store_block_key *r = &ks->rows[ks->slots[j] - 1];
		if (same_key(r, k)) {
			r->count += k->count;
			return 0;
		}
	}
	if (grow((void **)&ks->rows, &ks->cap, ks->n + 1, sizeof(*ks->rows)) < 0)
		return -ENOMEM;
	ks->rows[ks->n] = *k;
	ks->slots[j] = (uint32_t)++ks->n;
	return 0;
}

/* Whether every samples record of the session has its packed block (stores written before
 * sample_blocks existed have none: their rows are read from cpu_samples). */
static int has_blocks(struct store *s, int64_t sid, bool *yes)
{
	int64_t n[2] = {0, 0};
	const char *q[2] = {q_nblocks, q_nrecords};
	for (int i = 0; i < 2; i++) {
		struct db_stmt *st = store_stmt(s, q[i]);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, sid);
		int rc = db_step(st);
		if (rc == 1)
			n[i] = db_col_i64(st, 0);
		db_reset(st);
		if (rc < 0)
			return rc;
	}
	*yes = n[0] > 0 && n[0] >= n[1];
	return 0;
}

static int keys_from_blocks(struct store *s, int64_t sid, const struct query_filter *f, int64_t lo, int64_t hi,
			    struct kset *ks)
{
	struct db_stmt *st = store_stmt(s, q_blocks);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	int rc;
	while ((rc = db_step(st)) == 1) {
		size_t len, off = 0;
		const uint8_t *p = db_col_blob(st, 0, &len);
		while (off < len) {
			struct store_block_key k;
			size_t used = store_block_get(p + off, len - off, &k);
			if (!used) {
				log_warn("session %lld: a damaged sample block (ignored from there)", (long long)sid);
				break;
			}
			off += used;
			if (f->npids && !in_pid_list(f->pids, f->npids, k.pid))
				continue;
			if (kset_add(ks, &k) < 0) {
				db_reset(st);
				return -ENOMEM;
			}
		}
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}

static int keys_from_rows(struct store *s, int64_t sid, const struct query_filter *f, int64_t lo, int64_t hi,
			  struct kset *ks)
{
	struct db_stmt *st = store_stmt(s, q_keys);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	int rc;
	while ((rc = db_step(st)) == 1) {
		struct store_block_key k = {.pid = (int32_t)db_col_i64(st, 0), .tid = (int32_t)db_col_i64(st, 1),
					    .ip = db_col_u64(st, 2), .kip = db_col_u64(st, 3),
					    .stack_id = (uint32_t)db_col_i64(st, 4), .count = db_col_u64(st, 5)};
		if (f->npids && !in_pid_list(f->pids, f->npids, k.pid))
			continue;
		if (kset_add(ks, &k) < 0) {
			rc = -ENOMEM;
			break;
		}
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}

static int read_keys(struct store *s, struct build *b, struct sess *se, const struct query_filter *f, int64_t lo,
		     int64_t hi, uint64_t *samples)
{
	struct kset ks = {0};
	bool blocks = false;
	int rc = b->have_blocks ? has_blocks(s, se->id, &blocks) : 0;
	if (rc == 0)
		rc = blocks ? keys_from_blocks(s, se->id, f, lo, hi, &ks) : keys_from_rows(s, se->id, f, lo, hi, &ks);
	free(ks.slots);
	const struct store_block_key *rows = ks.rows;
	size_t n = ks.n;
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		const struct store_block_key *k = &rows[i];
		if (f->ncomms) {
			const char *comm, *thread;
			task_names(se, k->pid, k->tid, &comm, &thread);
			if (!in_str_list(f->comms, f->ncomms, comm))
				continue;
		}
		uint64_t ips[MAX_FRAMES], kips[MAX_FRAMES / 2];
		size_t nchain = 0, nk = 0;
		if (k->stack_id) {
			rc = load_chain(s, q_stack, se->id, k->stack_id, ips, MAX_FRAMES / 2 - 1, &nchain);
			if (rc == 0 && b->have_kstacks)
				rc = load_chain(s, q_kstack, se->id, k->stack_id, kips, MAX_FRAMES / 2 - 1, &nk);
			if (rc < 0)
				break;
		}
		uint32_t fr[MAX_FRAMES];
		size_t nfr = 0;
		for (size_t j = 0; rc == 0 && j < nk; j++) /* the kernel's chain: its first frame is kip */
			rc = frame_of(b, se, k->pid, kips[j], true, &fr[nfr++]);
		if (!nk && k->kip)
			rc = frame_of(b, se, k->pid, k->kip, true, &fr[nfr++]);
		else if (k->ip && (nchain == 0 || ips[0] != k->ip))
			rc = frame_of(b, se, k->pid, k->ip, false, &fr[nfr++]);
		for (size_t j = 0; rc == 0 && j < nchain && nfr < MAX_FRAMES; j++)
			rc = frame_of(b, se, k->pid, ips[j], false, &fr[nfr++]);
		if (rc == 0 && nfr == 0)
			rc = frame_of(b, se, k->pid, 0, true, &fr[nfr++]); /* ip 0 and no kip: the kernel */
		if (rc == 0)
			rc = add_stack(b, se, k->pid, k->tid, fr, nfr, k->count);
		*samples += k->count;
	}
	free(ks.rows);
	return rc < 0 ? rc : 0;
}

static int read_info(struct store *s, struct build *b, struct sess *se, int64_t lo, int64_t hi,
		     struct query_session_info *si)
{
	struct query_result *r = b->r;
	struct db_stmt *st = store_stmt(s, q_info);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	int rc = db_step(st);
	int ev_min = 0, ev_max = 0;
	if (rc == 1 && db_col_i64(st, 0) > 0) {
		r->intervals += db_col_u64(st, 0);
		r->lost += db_col_u64(st, 1);
		int bmin = (int)db_col_i64(st, 2), bmax = (int)db_col_i64(st, 3);
		if (b->be_min == 0 || bmin < b->be_min)
			b->be_min = bmin;
		if (bmax > b->be_max)
			b->be_max = bmax;
		uint64_t fq = db_col_u64(st, 4);
		if (fq > r->freq_hz)
			r->freq_hz = fq;
		r->interval_ns += db_col_u64(st, 5);
		si->first_ns = se->realtime_ns + db_col_i64(st, 6);
		si->last_ns = se->realtime_ns + db_col_i64(st, 7);
		ev_min = (int)db_col_i64(st, 8);
		ev_max = (int)db_col_i64(st, 9);
	}
	db_reset(st);
	if (rc < 0)
		return rc;
	if (si->first_ns && (!r->first_ns || si->first_ns < r->first_ns))
		r->first_ns = si->first_ns;
	if (si->last_ns > r->last_ns)
		r->last_ns = si->last_ns;
	if (ev_min == 0)
		return 0;
	char name[128] = "";
	if (ev_min != ev_max) {
		snprintf(name, sizeof(name), "mixed");
	} else {
		st = store_stmt(s, q_event);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, se->id);
		db_bind_i64(st, 2, ev_min);
		if (db_step(st) == 1)
			snprintf(name, sizeof(name), "%s", db_col_text(st, 0));
		else
			snprintf(name, sizeof(name), "event#%d", ev_min);
		db_reset(st);
	}
	if (!r->event[0])
		snprintf(r->event, sizeof(r->event), "%s", name);
	else if (strcmp(r->event, name) != 0)
		snprintf(r->event, sizeof(r->event), "mixed");
	return 0;
}

/* The samples over time of one session (query_opts.series), filtered as the stacks are. */
/* One point of the series (query_opts.series), filtered as the stacks are. */
static int add_point(struct build *b, struct sess *se, const struct query_filter *f, int64_t t_ns, int32_t pid,
		     uint64_t count)
{
	if (f->npids && !in_pid_list(f->pids, f->npids, pid))
		return 0;
	const char *comm, *thread;
	task_names(se, pid, pid, &comm, &thread);
	if (f->ncomms && !in_str_list(f->comms, f->ncomms, comm))
		return 0;
	struct query_result *r = b->r;
	if (grow((void **)&r->points, &b->cappoints, r->npoints + 1, sizeof(*r->points)) < 0)
		return -ENOMEM;
	struct query_point *pt = &r->points[r->npoints];
	pt->session_t_ns = t_ns;
	pt->t_ns = se->realtime_ns + t_ns;
	pt->session_id = se->id;
	pt->count = count;
	pt->comm = str_pool_intern(&b->pool, comm);
	pt->pid = pid;
	pt->agent_id = se->agent_id;
	if (!pt->comm)
		return -ENOMEM;
	r->npoints++;
	return 0;
}

/* The samples over time of one session: per record (sampling interval) and
 * pid, from the packed blocks or, for sessions stored before them, the rows. */
static int read_series(struct store *s, struct build *b, struct sess *se, const struct query_filter *f, int64_t lo,
		       int64_t hi)
{
	bool blocks = false;
	int rc = b->have_blocks ? has_blocks(s, se->id, &blocks) : 0;
	if (rc < 0)
		return rc;
	struct db_stmt *st = store_stmt(s, blocks ? q_series_blocks : q_series);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	/* per block: counts per pid (a record has few processes: a short list) */
	struct {
		int32_t pid;
		uint64_t count;
	} *per = NULL;
	size_t nper = 0, capper = 0;
	while (rc == 0 && (rc = db_step(st)) == 1) {
		rc = 0;
		int64_t t = db_col_i64(st, 0);
		if (!blocks) {
			rc = add_point(b, se, f, t, (int32_t)db_col_i64(st, 1), db_col_u64(st, 2));
			continue;
		}
		size_t len, off = 0;
		const uint8_t *p = db_col_blob(st, 1, &len);
		nper = 0;
		while (off < len) {
			struct store_block_key k;
			size_t used = store_block_get(p + off, len - off, &k);
			if (!used)
				break; /* damaged: read_keys warned */
			off += used;
			size_t i = 0;
			while (i < nper && per[i].pid != k.pid)
				i++;
			if (i == nper) {
				if (grow((void **)&per, &capper, nper + 1, sizeof(*per)) < 0) {
					rc = -ENOMEM;
					break;
				}
				per[nper].pid = k.pid;
				per[nper++].count = 0;
			}
			per[i].count += k.count;
		}
		for (size_t i = 0; rc == 0 && i < nper; i++)
			rc = add_point(b, se, f, t, per[i].pid, per[i].count);
	}
	db_reset(st);
	free(per);
	return rc < 0 ? rc : 0;
}

/* Symbols of a stored table collected for sym_resolver_set_kernel. */
struct ktab {
	uint64_t *addr;
	char **names;
	size_t n, cap;
};

static int ktab_add(void *arg, uint64_t addr, const char *name)
{
	struct ktab *t = arg;
	if (t->n == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 4096;
		uint64_t *na = realloc(t->addr, nc * sizeof(*na));
		if (na)
			t->addr = na;
		char **nn = realloc(t->names, nc * sizeof(*nn));
		if (nn)
			t->names = nn;
		if (!na || !nn)
			return -ENOMEM;
		t->cap = nc;
	}
	t->names[t->n] = strdup(name);
	if (!t->names[t->n])
		return -ENOMEM;
	t->addr[t->n++] = addr;
	return 0;
}

/* The resolver of the kernel functions of se's boot, from the table its
 * agent sent (loaded once per agent and boot; NULL when none is stored). */
static int kernel_of(struct store *s, struct build *b, struct sess *se)
{
	char boot[KSYMS_BOOT_ID_MAX + 1];
	int rc = store_session_kernel_boot(s, se->id, boot, sizeof(boot));
	if (rc < 0 || !boot[0])
		return rc;
	for (size_t i = 0; i < b->nkboots; i++)
		if (b->kboots[i].agent_id == se->agent_id && strcmp(b->kboots[i].boot, boot) == 0) {
			se->ksr = b->kboots[i].sr;
			return 0;
		}
	struct kboot *nk = realloc(b->kboots, (b->nkboots + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	b->kboots = nk;
	struct kboot *kb = &b->kboots[b->nkboots++];
	kb->agent_id = se->agent_id;
	snprintf(kb->boot, sizeof(kb->boot), "%s", boot);
	kb->sr = NULL;
	struct ktab t = {0};
	rc = store_kernel_symbols(s, se->agent_id, boot, ktab_add, &t);
	if (rc == 0)
		rc = sym_resolver_create(NULL, &kb->sr);
	if (rc == 0)
		rc = sym_resolver_set_kernel(kb->sr, t.addr, (const char *const *)t.names, t.n);
	if (rc == -ENOENT) /* none stored (or no address): the kernel stays [kernel] */
		rc = 0;
	else if (rc == 0)
		log_debug("query: %zu kernel functions of %s boot %s", t.n, se->agent_id, boot);
	for (size_t i = 0; i < t.n; i++)
		free(t.names[i]);
	free(t.names);
	free(t.addr);
	se->ksr = kb->sr;
	return rc;
}

static int run_session(struct store *s, struct build *b, struct sess *se, const struct query_opts *o)
{
	const struct query_filter *f = &o->f;
	int64_t lo = f->since_ns ? f->since_ns - se->realtime_ns : INT64_MIN;
	int64_t hi = f->until_ns ? f->until_ns - se->realtime_ns : INT64_MAX;
	struct query_result *r = b->r;
	if (grow((void **)&r->sessions, &b->capsessions, r->nsessions + 1, sizeof(*r->sessions)) < 0)
		return -ENOMEM;
	struct query_session_info si = {.id = se->id, .agent_id = se->agent_id, .board = se->board};
	int rc = read_info(s, b, se, lo, hi, &si);
	if (rc == 0 && si.first_ns == 0)
		return 0; /* no intervals in range */
	if (rc == 0)
		rc = load_maps(s, se);
	if (rc == 0 && !o->kallsyms) /* --kallsyms FILE overrides what the agents sent */
		rc = kernel_of(s, b, se);
	if (rc == 0)
		rc = load_tasks(s, b, se);
	if (rc == 0)
		sess_sort(se);
	if (rc == 0)
		rc = read_keys(s, b, se, f, lo, hi, &si.samples);
	if (rc == 0 && o->series)
		rc = read_series(s, b, se, f, lo, hi);
	if (rc == 0) {
		r->sessions[r->nsessions++] = si;
		r->total += si.samples;
	}
	return rc;
}

static void build_free(struct build *b)
{
	key_map_free(&b->frame_ids);
	key_map_free(&b->stack_ids);
	free(b->stack_off);
	sym_resolver_free(b->sr);
	for (size_t i = 0; i < b->nkboots; i++)
		sym_resolver_free(b->kboots[i].sr);
	free(b->kboots);
}

int query_run(struct store *s, const struct query_opts *o, struct query_result **out)
{
	*out = NULL;
	const struct query_filter *f = &o->f;
	struct query_result *r = calloc(1, sizeof(*r));
	struct result_priv *p = calloc(1, sizeof(*p));
	if (!r || !p) {
		free(r);
		free(p);
		return -ENOMEM;
	}
	r->priv = p;
	struct build b = {.r = r,
			  .have_tasks = store_has_table(s, "sample_tasks"),
			  .have_blocks = store_has_table(s, "sample_blocks"),
			  .have_kstacks = store_has_table(s, "sample_kernel_stacks")};
	int rc = sym_resolver_create(o->symfs, &b.sr);
	if (rc == 0 && o->debug_dir)
		rc = sym_resolver_set_debug_dir(b.sr, o->debug_dir);
	if (rc == 0 && o->kallsyms) {
		rc = sym_resolver_load_kallsyms(b.sr, o->kallsyms);
		if (rc == -ENOENT)
			log_error("--kallsyms %s: no kernel function with an address in it (read /proc/kallsyms as root "
				  "on the board: without privilege every address reads 0)",
				  o->kallsyms);
		else if (rc < 0)
			log_error("--kallsyms %s: %s", o->kallsyms, strerror(-rc));
	}
	struct db_stmt *st = rc == 0 ? store_stmt(s, q_sessions) : NULL;
	if (rc == 0 && !st)
		rc = -EIO;
	/* The sessions first: their statement is done before the per-session ones run. */
	struct sess *ss = NULL;
	size_t nss = 0, capss = 0;
	while (rc == 0 && (rc = db_step(st)) == 1) {
		rc = 0;
		int64_t id = db_col_i64(st, 0);
		const char *agent = db_col_text(st, 1), *board = db_col_text(st, 2);
		if ((f->nsessions && !in_sid_list(f->sessions, f->nsessions, id)) ||
		    (f->nagents && !in_str_list(f->agents, f->nagents, agent)) ||
		    (f->nboards && !in_str_list(f->boards, f->nboards, board)))
			continue;
		if (grow((void **)&ss, &capss, nss + 1, sizeof(*ss)) < 0) {
			rc = -ENOMEM;
			break;
		}
		memset(&ss[nss], 0, sizeof(ss[nss]));
		ss[nss].id = id;
		ss[nss].realtime_ns = db_col_i64(st, 3);
		ss[nss].agent_id = str_pool_intern(&b.pool, agent);
		ss[nss].board = str_pool_intern(&b.pool, board);
		if (!ss[nss].agent_id || !ss[nss].board)
			rc = -ENOMEM;
		nss++;
	}
	if (st)
		db_reset(st);
	for (size_t i = 0; rc == 0 && i < nss; i++)
		rc = run_session(s, &b, &ss[i], o);
	for (size_t i = 0; i < nss; i++)
		sess_free(&ss[i]);
	free(ss);
	if (rc == 0) {
		for (size_t i = 0; i < r->nstacks; i++)
			r->stacks[i].frames = b.fidx + b.stack_off[i];
		snprintf(r->backend, sizeof(r->backend), "%s",
			 b.be_min != b.be_max ? "mixed" : b.be_min == 1 ? "bpf" : b.be_min == 2 ? "ring" : "");
	}
	p->pool = b.pool;
	p->fidx = b.fidx;
	build_free(&b);
	if (rc < 0) {
		query_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void query_result_free(struct query_result *r)
{
	if (!r)
		return;
	struct result_priv *p = r->priv;
	if (p) {
		str_pool_free(&p->pool);
		free(p->fidx);
		free(p);
	}
	free(r->frames);
	free(r->stacks);
	free(r->sessions);
	free(r->points);
	free(r);
}

int query_stack_folded(const struct query_result *r, const struct query_stack *k, char *buf, size_t len)
{
	size_t pos = 0;
	int total = 0;
	for (size_t j = k->nframes; j-- > 0;) {
		const char *fn = r->frames[k->frames[j]].function;
		if (j + 1 != k->nframes) {
			if (pos + 1 < len)
				buf[pos++] = ';';
			total++;
		}
		for (const char *c = fn; *c; c++, total++)
			if (pos + 1 < len)
				buf[pos++] = *c == ';' ? ':' : *c;
	}
	if (len)
		buf[pos < len ? pos : len - 1] = 0;
	return total;
}
