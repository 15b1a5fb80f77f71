/* The sample keys of a session's time range, summed per key in C
 * (query_priv.h): from the packed sample_blocks, the only store of the
 * samples (#40), and an older collector's cpu_samples rows for the records
 * it stored without a block. Counts stored unchecked by an older collector
 * are read within today's record limit. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "query_priv.h"
#include "sat.h"
#include "validate_samples.h"

/* Records an older collector stored before sample_blocks: their rows, summed per key in C (no GROUP BY:
 * SQLite's sorter is several times slower on millions of rows); with blocks in the store, only the rows of
 * records without one (the collectors between wrote both). */
static const char q_keys[] = "SELECT pid, tid, ip, kip, stack_id, count FROM cpu_samples"
			     " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3";
static const char q_keys_uncovered[] =
    "SELECT pid, tid, ip, kip, stack_id, count FROM cpu_samples c"
    " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3"
    " AND NOT EXISTS (SELECT 1 FROM sample_blocks b WHERE b.session_id = ?1 AND b.seq = c.seq)";
static const char q_nblocks[] = "SELECT COUNT(*) FROM sample_blocks WHERE session_id = ?1";
static const char q_nrecords[] = "SELECT COUNT(*) FROM sample_intervals WHERE session_id = ?1 AND keys > 0";

/* Every field reaches every bit (splitmix64's finaliser): the low bits index the slots, and the
 * fields' own low bits vary little (ips of aligned functions, small pids). */
static uint64_t khash(const struct store_block_key *k)
{
	uint64_t h = (uint64_t)(uint32_t)k->pid << 32 | (uint32_t)k->tid;
	h ^= k->ip * 0x9e3779b97f4a7c15ull;
	h ^= (k->kip + ((uint64_t)k->stack_id << 32 | k->stack_id)) * 0xc2b2ae3d27d4eb4full;
	h += (uint64_t)k->inc * 0xd6e8feb86659fd93ull;
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static bool same_key(const struct store_block_key *a, const struct store_block_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->ip == b->ip && a->kip == b->kip &&
	       a->stack_id == b->stack_id && a->inc == b->inc;
}

/* Slots for n more keys at a load of at most one half. */
static int kset_room(struct kset *ks, size_t more)
{
	if ((ks->n + more) * 2 <= ks->scap)
		return 0;
	size_t nc = ks->scap ? ks->scap * 2 : 1024;
	while ((ks->n + more) * 2 > nc)
		nc *= 2;
	uint64_t *ns = calloc(nc, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < ks->n; i++) {
		uint64_t h = khash(&ks->rows[i]);
		size_t j = h & (nc - 1);
		while (ns[j])
			j = (j + 1) & (nc - 1);
		ns[j] = (h >> 32) << 32 | (uint32_t)(i + 1);
	}
	free(ks->slots);
	ks->slots = ns;
	ks->scap = nc;
	return 0;
}

/* k (hash h) summed in, its row's index in *row where row is not NULL; room made. */
static int kset_put_at(struct kset *ks, const struct store_block_key *k, uint64_t h, uint64_t first, size_t *row)
{
	uint64_t tag = (h >> 32) << 32;
	size_t j = h & (ks->scap - 1);
	for (; ks->slots[j]; j = (j + 1) & (ks->scap - 1)) {
		if ((ks->slots[j] & ~0xffffffffull) != tag) /* the hash's high half tells most keys apart */
			continue;
		size_t i = (uint32_t)ks->slots[j] - 1;
		struct store_block_key *r = &ks->rows[i];
		if (same_key(r, k)) {
			sat_inc_u64(&r->count, k->count);
			if (first < ks->first[i])
				ks->first[i] = first;
			if (row)
				*row = i;
			return 0;
		}
	}
	if (ks->n + 1 > ks->cap) {
		size_t cap = ks->cap;
		if (qm_grow((void **)&ks->rows, &cap, ks->n + 1, sizeof(*ks->rows)) < 0)
			return -ENOMEM;
		uint64_t *nf = realloc(ks->first, cap * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		ks->first = nf;
		ks->cap = cap;
	}
	if (row)
		*row = ks->n;
	ks->rows[ks->n] = *k;
	ks->first[ks->n] = first;
	ks->slots[j] = tag | (uint32_t)++ks->n;
	return 0;
}

static int kset_put(struct kset *ks, const struct store_block_key *k, uint64_t h, uint64_t first)
{
	return kset_put_at(ks, k, h, first, NULL);
}

int qm_kset_add(struct kset *ks, const struct store_block_key *k, uint64_t first)
{
	return kset_room(ks, 1) < 0 ? -ENOMEM : kset_put(ks, k, khash(k), first);
}

int qm_kset_add_at(struct kset *ks, const struct store_block_key *k, uint64_t first, size_t *row)
{
	return kset_room(ks, 1) < 0 ? -ENOMEM : kset_put_at(ks, k, khash(k), first, row);
}

#define AHEAD 8 /* keys whose slot (and then row) are fetched ahead of the one summed */

int qm_kset_add_many(struct kset *ks, const struct store_block_key *keys, size_t n, uint64_t first)
{
	/* The set outgrows the first-level cache (a fleet's keys): each key's slot and then its row were a
	 * miss, ~2/3 of the summing's CPU (perf annotate, #40); their addresses are known ahead. */
	uint64_t h[64];
	for (size_t base = 0; base < n; base += 64) {
		size_t m = n - base < 64 ? n - base : 64;
		if (kset_room(ks, m) < 0)
			return -ENOMEM;
		size_t mask = ks->scap - 1;
		for (size_t i = 0; i < m; i++) {
			h[i] = khash(&keys[base + i]);
			if (i < 2 * AHEAD)
				__builtin_prefetch(&ks->slots[h[i] & mask]);
		}
		for (size_t i = 0; i < m; i++) {
			if (i + 2 * AHEAD < m)
				__builtin_prefetch(&ks->slots[h[i + 2 * AHEAD] & mask]);
			if (i + AHEAD < m) {
				uint64_t sl = ks->slots[h[i + AHEAD] & mask];
				if (sl)
					__builtin_prefetch(&ks->rows[(uint32_t)sl - 1]);
			}
			if (kset_put(ks, &keys[base + i], h[i], first + base + i) < 0)
				return -ENOMEM;
		}
	}
	return 0;
}

int qm_kset_merge(struct kset *dst, const struct kset *src)
{
	for (size_t i = 0; i < src->n; i++)
		if (qm_kset_add(dst, &src->rows[i], src->first[i]) < 0)
			return -ENOMEM;
	return 0;
}

struct order {
	uint64_t first;
	size_t i;
};

static int by_first(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

int qm_kset_order(struct kset *ks)
{
	free(ks->slots);
	ks->slots = NULL;
	ks->scap = 0;
	if (!ks->unordered || ks->n < 2)
		return 0;
	struct order *o = malloc(ks->n * sizeof(*o));
	struct store_block_key *rows = malloc(ks->n * sizeof(*rows));
	if (!o || !rows) {
		free(o);
		free(rows);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ks->n; i++)
		o[i] = (struct order){ks->first[i], i};
	qsort(o, ks->n, sizeof(*o), by_first);
	for (size_t i = 0; i < ks->n; i++) {
		rows[i] = ks->rows[o[i].i];
		ks->first[i] = o[i].first;
	}
	free(o);
	free(ks->rows);
	ks->rows = rows;
	ks->cap = ks->n;
	ks->unordered = false;
	return 0;
}

void qm_kset_free(struct kset *ks)
{
	free(ks->rows);
	free(ks->first);
	free(ks->slots);
	*ks = (struct kset){0};
}

/* Whether the session has records an older collector stored as cpu_samples rows only (before
 * sample_blocks existed; this collector writes no rows). */
int qm_rows_needed(struct store *s, const struct build *b, int64_t sid, bool *yes)
{
	*yes = false;
	if (!b->have_rows)
		return 0;
	if (!b->have_blocks) {
		*yes = true;
		return 0;
	}
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
	*yes = n[0] < n[1];
	return 0;
}

int qm_keys_from_rows(struct store *s, int64_t sid, const struct query_filter *f, int64_t lo, int64_t hi,
		      bool uncovered, struct kset *ks)
{
	struct db_stmt *st = store_stmt(s, uncovered ? q_keys_uncovered : q_keys);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	int rc;
	/* after every block's key (query_blocks.c numbers the blocks from 0, each key below 1 << 24) */
	uint64_t first = UINT64_MAX / 2;
	while ((rc = db_step(st)) == 1) {
		struct store_block_key k = {.pid = (int32_t)db_col_i64(st, 0),
					    .tid = (int32_t)db_col_i64(st, 1),
					    .ip = db_col_u64(st, 2),
					    .kip = db_col_u64(st, 3),
					    .stack_id = (uint32_t)db_col_i64(st, 4),
					    .count = db_col_u64(st, 5)};
		if (f->npids && !qm_in_pid_list(f->pids, f->npids, k.pid))
			continue;
		if (k.count > VALIDATE_MAX_SAMPLE_COUNT)
			k.count = VALIDATE_MAX_SAMPLE_COUNT;
		if (qm_kset_add(ks, &k, first++) < 0) {
			rc = -ENOMEM;
			break;
		}
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}
