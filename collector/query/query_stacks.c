/* A session's sample keys in a range turned into the result's stacks (query_priv.h: qm_read_keys): each
 * key's frames (a cache of addresses per file mapping, not per process), its stack (merged by process
 * name with query_opts.merge_tasks), the range read in slices of about QM_SLICE_KEYS keys so that the
 * keys summed at once stay bounded whatever the range holds (issue #40, w45d: a board whose processes
 * restart under new pids has as many keys as processes x functions). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "query_priv.h"
#include "sat.h"
#include "store/store_blocks.h"
#include "store/store_keyids.h"
#include "symbols.h"
#include "validate_perf_map.h"

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
	if (qm_grow((void **)&r->frames, &b->capframes, r->nframes + 1, sizeof(*r->frames)) < 0)
		return -ENOMEM;
	struct query_frame *f = &r->frames[r->nframes];
	f->function = str_pool_intern(&b->pool, sf->name);
	f->module = str_pool_intern(&b->pool, sf->module);
	f->raw = str_pool_intern(&b->pool, sf->raw ? sf->raw : "");
	f->ip = sf->ip;
	f->file_off = sf->file_off;
	f->path = str_pool_intern(&b->pool, sf->path ? sf->path : "");
	f->build_id = str_pool_intern(&b->pool, sf->build_id ? sf->build_id : "");
	f->src_file = str_pool_intern(&b->pool, sf->src_file ? sf->src_file : "");
	f->src_line = sf->src_line;
	if (!f->path || !f->build_id || !f->src_file)
		return -ENOMEM;
	f->kernel = kernel;
	f->resolved = sf->resolved;
	if (!f->function || !f->module || !f->raw || key_map_put(&b->frame_ids, key, (size_t)kl, (uint32_t)r->nframes) < 0)
		return -ENOMEM;
	*out = (uint32_t)r->nframes++;
	return 0;
}

/* The frame cache's key. A user address in a file mapping is described from the mapping alone, so
 * the processes that map one file at one place share its entries (a board's programs restarted under
 * new pids: one entry per address, not per address and process); an address in no mapping or in
 * anonymous memory (JIT code: the process's perf map) is the process's own. */
enum { IPK_OWN = 0, IPK_KERNEL = 1, IPK_FILE = 2 };
struct ip_key {
	uint32_t who; /* IPK_OWN: the pid; IPK_FILE: the mapping's ident; IPK_KERNEL: 0 */
	int32_t kind;
	uint64_t ip;
	uint32_t inc, pad; /* IPK_OWN where the session has a reused pid: the pid's process */
};

/* The frame of address ip of pid (kernel: a kernel address), described by
 * sym_describe (symbols.h): demangled functions, kallsyms kernel functions,
 * unresolved addresses grouped per module. */
static int frame_of(struct build *b, struct sess *se, int32_t pid, uint32_t inc, uint64_t ip, bool kernel,
		    uint32_t *out)
{
	const struct map_row *m = kernel ? NULL : qm_find_map_indexed(se, pid, inc, ip);
	struct ip_key k = {(uint32_t)pid, IPK_OWN, ip, inc, 0};
	if (kernel)
		k = (struct ip_key){0, IPK_KERNEL, ip, 0, 0};
	else if (m && !perf_map_anon(m->path))
		k = (struct ip_key){m->ident, IPK_FILE, ip, 0, 0};
	/* the process only where the session has a reused pid (the key as before otherwise) */
	size_t klen = se->nstarts && k.kind == IPK_OWN ? sizeof(k) : offsetof(struct ip_key, inc);
	if (key_map_get(&se->frame_of_ip, &k, klen, out))
		return 0;
	char buf[600];
	struct sym_frame sf;
	struct sym_mapping sm;
	if (m)
		sm = (struct sym_mapping){.path = m->path, .build_id = m->bid, .build_id_len = m->bidlen,
					  .start = m->start, .end = m->end, .pgoff = m->pgoff};
	/* anonymous memory: JIT code, named from the process's perf map where it has one */
	bool jit = !kernel && perf_map_anon(m ? m->path : NULL) && qm_jit_frame(se, pid, ip, buf, sizeof(buf), &sf);
	if (!jit)
		sym_describe(kernel && se->ksr ? se->ksr : b->sr, m ? &sm : NULL, ip, kernel, buf, sizeof(buf), &sf);
	char hex[2 * 64 + 1] = "";
	if (m && !jit) { /* what a later symbolizer needs (the pprof export's mappings) */
		sf.path = m->path;
		sf.build_id = m->bidlen ? sym_build_id_hex(m->bid, m->bidlen, hex, sizeof(hex)) : NULL;
	}
	int rc = intern_frame(b, &sf, kernel, out);
	if (rc == 0 && se->frame_of_ip.n >= b->frame_cache_max)
		key_map_free(&se->frame_of_ip); /* full: emptied (a miss describes the address again) */
	if (rc == 0)
		rc = key_map_put(&se->frame_of_ip, &k, klen, *out);
	return rc;
}

#define MAX_FRAMES 256
#define CHAIN_CHUNK 4096 /* keys whose chains are held at once (at most 4096 x 127 frames) */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The user and (where stored) kernel chains of n keys' stacks into uc and kc. */
static int load_chunk(struct store *s, const struct build *b, int64_t sid, const struct store_block_key *keys,
		      size_t n, uint32_t **ids, size_t *capids, struct qm_chains *uc, struct qm_chains *kc)
{
	if (qm_grow((void **)ids, capids, n, sizeof(**ids)) < 0)
		return -ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (keys[i].stack_id)
			(*ids)[m++] = keys[i].stack_id;
	if (m > 1)
		qsort(*ids, m, sizeof(**ids), cmp_u32);
	size_t u = 0;
	for (size_t i = 0; i < m; i++)
		if (u == 0 || (*ids)[i] != (*ids)[u - 1])
			(*ids)[u++] = (*ids)[i];
	int rc = qm_chains_load(s, false, sid, *ids, u, MAX_FRAMES / 2 - 1, uc);
	if (rc == 0 && b->have_kstacks)
		rc = qm_chains_load(s, true, sid, *ids, u, MAX_FRAMES / 2 - 1, kc);
	return rc;
}

static int new_stack(struct build *b, struct sess *se, struct key_map *map, const void *key, size_t klen,
		     const char *comm, const char *thread, int32_t pid, int32_t tid, uint32_t inc,
		     const uint32_t *fr, size_t nfr, uint64_t count);

/* count added to se's "[other]" stack (the result has b->max_stacks): made the first time, its key
 * (session, -1, -1) shorter than any stack's (those have a frame). */
static int other_stack(struct build *b, struct sess *se, uint64_t count)
{
	struct query_result *r = b->r;
	unsigned char key[16];
	int32_t none = -1;
	memcpy(key, &se->id, 8);
	memcpy(key + 8, &none, 4);
	memcpy(key + 12, &none, 4);
	uint32_t idx;
	sat_inc_u64(&r->other, count);
	if (key_map_get(&b->stack_ids, key, sizeof(key), &idx)) {
		sat_inc_u64(&r->stacks[idx].count, count);
		return 0;
	}
	/* a function of its own (an export names it), not an unresolved address of a module */
	struct sym_frame sf = {.name = "[other]", .module = "[other]", .resolved = true};
	uint32_t f;
	const char *other = str_pool_intern(&b->pool, "[other]");
	if (!other || intern_frame(b, &sf, false, &f) < 0)
		return -ENOMEM;
	size_t keep = b->max_stacks;
	b->max_stacks = SIZE_MAX; /* this one is made */
	int rc = new_stack(b, se, &b->stack_ids, key, sizeof(key), other, other, 0, 0, 0, &f, 1, count);
	b->max_stacks = keep;
	if (rc == 0)
		r->stacks[r->nstacks - 1].other = true; /* not the idle task's (pid 0) nor a task's (views) */
	return rc;
}

/* A new stack of frames fr for its task; its key in map (stack_ids or name_stack_ids). Past
 * b->max_stacks: counted in the session's "[other]" stack. */
static int new_stack(struct build *b, struct sess *se, struct key_map *map, const void *key, size_t klen,
		     const char *comm, const char *thread, int32_t pid, int32_t tid, uint32_t inc,
		     const uint32_t *fr, size_t nfr, uint64_t count)
{
	struct query_result *r = b->r;
	if (r->nstacks >= b->max_stacks)
		return other_stack(b, se, count);
	if (qm_grow((void **)&r->stacks, &b->capstacks, r->nstacks + 1, sizeof(*r->stacks)) < 0 ||
	    qm_grow((void **)&b->stack_off, &b->capoff, r->nstacks + 1, sizeof(*b->stack_off)) < 0)
		return -ENOMEM;
	size_t *so = b->stack_off;
	if (qm_grow((void **)&b->fidx, &b->capfidx, b->nfidx + nfr, sizeof(*b->fidx)) < 0)
		return -ENOMEM;
	memcpy(b->fidx + b->nfidx, fr, nfr * sizeof(uint32_t));
	so[r->nstacks] = b->nfidx;
	b->nfidx += nfr;
	struct query_stack *k = &r->stacks[r->nstacks];
	memset(k, 0, sizeof(*k));
	k->nframes = nfr;
	k->count = count;
	k->comm = comm;
	k->thread = thread;
	k->pid = pid;
	k->tid = tid;
	k->inc = inc;
	k->agent_id = se->agent_id;
	k->board = se->board;
	k->session_id = se->id;
	k->sample_ns = se->sample_ns;
	if (key_map_put(map, key, klen, (uint32_t)r->nstacks) < 0)
		return -ENOMEM;
	r->nstacks++;
	return 0;
}

/* The names of (pid, tid) in pid's process inc, pooled (names from the mappings are not: sess memory
 * goes away); the last task's kept (a block's keys come by task). */
struct names_memo {
	bool set;
	int64_t sid;
	int32_t pid, tid;
	uint32_t inc;
	const char *comm, *thread;
};

static int task_names(struct build *b, const struct sess *se, int32_t pid, int32_t tid, uint32_t inc,
		      struct names_memo *nm)
{
	if (nm->set && nm->sid == se->id && nm->pid == pid && nm->tid == tid && nm->inc == inc)
		return 0;
	const char *comm, *thread;
	qm_task_names(se, pid, tid, inc, &comm, &thread);
	nm->comm = str_pool_intern(&b->pool, comm);
	nm->thread = str_pool_intern(&b->pool, thread);
	nm->set = nm->comm && nm->thread;
	nm->sid = se->id;
	nm->pid = pid;
	nm->tid = tid;
	nm->inc = inc;
	return nm->set ? 0 : -ENOMEM;
}

static int add_stack(struct build *b, struct sess *se, int32_t pid, int32_t tid, uint32_t inc, const uint32_t *fr,
		     size_t nfr, uint64_t count, struct names_memo *nm)
{
	struct query_result *r = b->r;
	unsigned char key[sizeof(int64_t) + 3 * sizeof(int32_t) + MAX_FRAMES * sizeof(uint32_t)];
	uint32_t idx;
	memcpy(key, &se->id, sizeof(int64_t));
	if (b->merge_tasks) {
		int rc = task_names(b, se, pid, tid, inc, nm);
		if (rc < 0)
			return rc;
	}
	if (b->merge_tasks && nm->comm[0]) { /* (session, pooled name, frames) */
		size_t klen = sizeof(int64_t) + sizeof(nm->comm) + nfr * sizeof(uint32_t);
		memcpy(key + 8, &nm->comm, sizeof(nm->comm));
		memcpy(key + 8 + sizeof(nm->comm), fr, nfr * sizeof(uint32_t));
		if (!key_map_get(&b->name_stack_ids, key, klen, &idx))
			return new_stack(b, se, &b->name_stack_ids, key, klen, nm->comm, nm->thread, pid, tid,
					 inc, fr, nfr, count);
		struct query_stack *k = &r->stacks[idx];
		sat_inc_u64(&k->count, count);
		if (k->pid != pid || k->inc != inc)
			k->inc = 0; /* several processes (r13 F3) */
		if (k->pid != pid)
			k->pid = 0; /* several */
		if (k->tid != tid)
			k->tid = 0;
		if (k->thread != nm->thread && k->thread[0] && !(k->thread = str_pool_intern(&b->pool, "")))
			return -ENOMEM;
		return 0;
	}
	size_t ilen = se->nstarts ? sizeof(uint32_t) : 0; /* a pid's processes apart where one was reused */
	size_t klen = sizeof(int64_t) + 2 * sizeof(int32_t) + ilen + nfr * sizeof(uint32_t);
	memcpy(key + 8, &pid, 4);
	memcpy(key + 12, &tid, 4);
	memcpy(key + 16, &inc, ilen);
	memcpy(key + 16 + ilen, fr, nfr * sizeof(uint32_t));
	if (key_map_get(&b->stack_ids, key, klen, &idx)) {
		sat_inc_u64(&r->stacks[idx].count, count);
		return 0;
	}
	if (!b->merge_tasks) {
		int rc = task_names(b, se, pid, tid, inc, nm);
		if (rc < 0)
			return rc;
	}
	return new_stack(b, se, &b->stack_ids, key, klen, nm->comm, nm->thread, pid, tid, inc, fr, nfr,
			 count);
}

/* The keys of [lo, hi) summed, then each turned into its stack in the order first met; where
 * stop_keys keys are summed before hi, only [lo, *stop_t) (query_priv.h: qm_keys_from_blocks). */
static int slice_stacks(struct store *s, struct build *b, struct sess *se, const struct query_filter *f,
			const struct store_keydict *kd, int64_t lo, int64_t hi, size_t stop_keys, int64_t *stop_t,
			bool old_rows, struct names_memo *memo, size_t *distinct, uint64_t *samples)
{
	struct kset ks = {0};
	int rc = 0;
	*stop_t = hi;
	if (b->have_blocks)
		rc = qm_keys_from_blocks(s, b, se, f, kd, lo, hi, old_rows ? 0 : stop_keys, stop_t, &ks);
	if (rc == 0 && old_rows)
		rc = qm_keys_from_rows(s, se->id, f, lo, hi, b->have_blocks, &ks);
	if (rc == 0)
		rc = qm_kset_order(&ks); /* frees the slots */
	const struct store_block_key *rows = ks.rows;
	size_t n = ks.n;
	*distinct = n;
	if (n > b->r->keys_held_max)
		b->r->keys_held_max = n;
	struct qm_chains uc = {0}, kc = {0};
	uint32_t *ids = NULL;
	size_t capids = 0;
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		const struct store_block_key *k = &rows[i];
		if (i % CHAIN_CHUNK == 0 && !b->tasks_only) /* the next CHAIN_CHUNK keys' chains, in batches */
			rc = load_chunk(s, b, se->id, rows + i, n - i < CHAIN_CHUNK ? n - i : CHAIN_CHUNK, &ids, &capids,
					&uc, &kc);
		if (rc < 0)
			break;
		if (f->ncomms) {
			const char *comm, *thread;
			qm_task_names(se, k->pid, k->tid, k->inc, &comm, &thread);
			if (!qm_in_str_list(f->comms, f->ncomms, comm))
				continue;
		}
		if (b->tasks_only) { /* the task's one stack */
			uint32_t t;
			struct sym_frame sf = {.name = "[task]", .module = "[task]", .resolved = true};
			rc = intern_frame(b, &sf, false, &t);
			if (rc == 0)
				rc = add_stack(b, se, k->pid, k->tid, k->inc, &t, 1, k->count, memo);
			sat_inc_u64(samples, k->count);
			continue;
		}
		uint64_t ips[MAX_FRAMES], kips[MAX_FRAMES / 2];
		size_t nchain = 0, nk = 0;
		if (k->stack_id) {
			nchain = qm_chains_get(&uc, k->stack_id, ips);
			if (b->have_kstacks)
				nk = qm_chains_get(&kc, k->stack_id, kips);
		}
		uint32_t fr[MAX_FRAMES];
		size_t nfr = 0;
		for (size_t j = 0; rc == 0 && j < nk; j++) /* the kernel's chain: its first frame is kip */
			rc = frame_of(b, se, k->pid, k->inc, kips[j], true, &fr[nfr++]);
		if (!nk && k->kip)
			rc = frame_of(b, se, k->pid, k->inc, k->kip, true, &fr[nfr++]);
		else if (k->ip && (nchain == 0 || ips[0] != k->ip))
			rc = frame_of(b, se, k->pid, k->inc, k->ip, false, &fr[nfr++]);
		for (size_t j = 0; rc == 0 && j < nchain && nfr < MAX_FRAMES; j++)
			rc = frame_of(b, se, k->pid, k->inc, ips[j], false, &fr[nfr++]);
		if (rc == 0 && nfr == 0)
			rc = frame_of(b, se, k->pid, k->inc, 0, true, &fr[nfr++]); /* ip 0 and no kip: the kernel */
		if (rc == 0)
			rc = add_stack(b, se, k->pid, k->tid, k->inc, fr, nfr, k->count, memo);
		sat_inc_u64(samples, k->count);
	}
	qm_chains_free(&uc);
	qm_chains_free(&kc);
	free(ids);
	qm_kset_free(&ks);
	return rc < 0 ? rc : 0;
}


/* The records of [lo, hi), each's keys (sample_intervals.keys: its block's, an upper bound on the
 * distinct keys it adds; the intervals' rows, not the blocks': a few bytes each where a block's row is
 * its data), put in t_ns order here, to cut the range into slices. Any cut is right: a slice ends only
 * where t_ns changes, so the blocks of the slices, read in turn, are those of the whole range in the
 * order the range's own statement reads them (the (session_id, t_ns) index's); the keys only size them.
 * Sorted here, not by the server (#40 w46a: no index has the intervals' t_ns; PostgreSQL sorted a
 * 10^8-sample store's 252,526 rows to disk for each report, where they come in t_ns order as stored). */
static const char q_block_keys[] = "SELECT t_ns, keys FROM sample_intervals WHERE session_id = ?1 AND t_ns >= ?2"
				   " AND t_ns < ?3";

struct block_keys {
	int64_t t;
	uint64_t keys;
};

static int cmp_block_keys(const void *a, const void *b)
{
	const struct block_keys *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->keys < y->keys ? -1 : x->keys > y->keys; /* ties in one order whatever the rows' */
}

static int range_blocks(struct store *s, int64_t sid, int64_t lo, int64_t hi, struct block_keys **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	struct db_stmt *st = store_stmt(s, q_block_keys);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	size_t cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (qm_grow((void **)out, &cap, *n + 1, sizeof(**out)) < 0) {
			rc = -ENOMEM;
			break;
		}
		int64_t k = db_col_i64(st, 1);
		(*out)[(*n)++] = (struct block_keys){db_col_i64(st, 0), k > 0 ? (uint64_t)k : 0};
	}
	db_reset(st);
	bool sorted = true;
	for (size_t i = 1; sorted && i < *n; i++)
		sorted = cmp_block_keys(&(*out)[i - 1], &(*out)[i]) <= 0;
	if (!sorted)
		qsort(*out, *n, sizeof(**out), cmp_block_keys);
	return rc < 0 ? rc : 0;
}

/* QM_SLICE_KEYS, or PROF_QUERY_SLICE_KEYS (tests: a small store read in many slices). */
static uint64_t slice_keys(void)
{
	const char *e = getenv("PROF_QUERY_SLICE_KEYS");
	long long n = e && *e ? strtoll(e, NULL, 10) : 0;
	return n > 0 ? (uint64_t)n : QM_SLICE_KEYS;
}

int qm_read_keys(struct store *s, struct build *b, struct sess *se, const struct query_filter *f, int64_t lo,
		 int64_t hi, uint64_t *samples)
{
	const uint64_t slice = slice_keys();
	bool old_rows = false;
	int rc = qm_rows_needed(s, b, se->id, &old_rows);
	struct block_keys *bk = NULL;
	size_t nb = 0;
	/* an older collector's rows are summed after the blocks: the range in one piece there */
	if (rc == 0 && b->have_blocks && !old_rows)
		rc = range_blocks(s, se->id, lo, hi, &bk, &nb);
	struct store_keydict kd = {0};
	if (rc == 0 && b->have_blocks)
		rc = qm_keydict_load(s, b, se->id, &kd);
	struct names_memo memo = {0};
	/* A slice's blocks hold about limit keys. Where the keys repeat from block to block (a board's
	 * long-lived processes), each slice holds far fewer distinct keys than that: the next slice's
	 * limit grows by the last one's ratio, at most 16 times the last limit (a slice that ends early
	 * below reads the rest of its blocks for nothing on PostgreSQL, whose rows are streamed: at most
	 * 16 times the last slice's), so such a range is read in a few slices (a normal 10^7 store: 3;
	 * x2 made it 7, +0.03 s of 0.27). Whatever the limit, a slice ends (where t_ns changes) once it has summed `slice`
	 * keys (review r6 of w45d: long-lived processes first raised the limit, and a later burst of
	 * short-lived ones was read as one piece); the next one starts there at the first limit. */
	uint64_t limit = slice, read0 = b->r->blocks_read;
	int64_t from = lo;
	for (size_t i = 0; rc == 0;) {
		uint64_t acc = 0;
		size_t j = i;
		while (j < nb && (acc == 0 || acc + bk[j].keys <= limit || bk[j].t == bk[j - 1].t))
			acc += bk[j++].keys;
		int64_t to = j < nb ? bk[j].t : hi, stop = to;
		size_t distinct = 0;
		if (from > lo && b->have_blocks)
			rc = qm_keydict_extend(s, b, se->id, &kd);
		if (rc == 0)
			rc = slice_stacks(s, b, se, f, &kd, from, to, (size_t)slice, &stop, old_rows, &memo, &distinct,
					  samples);
		if (rc == 0 && stop < to) { /* ended early: the next slice from stop */
			while (i < nb && bk[i].t < stop)
				i++;
			from = stop;
			limit = slice;
			continue;
		}
		if (j >= nb)
			break;
		uint64_t ratio = acc / (distinct ? distinct : 1);
		uint64_t next = slice * (ratio > 1 ? (ratio < 4096 ? ratio : 4096) : 1);
		limit = next < 16 * limit ? next : 16 * limit;
		from = to;
		i = j;
	}
	free(bk);
	store_keydict_free(&kd);
	if (rc == 0 && b->have_blocks && f->npids && b->have_pid_cols)
		rc = qm_count_passed(s, b, se->id, lo, hi, b->r->blocks_read - read0);
	return rc;
}
