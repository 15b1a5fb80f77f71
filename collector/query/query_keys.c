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
static const char q_blocks[] =
    "SELECT data FROM sample_blocks WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3";
static const char q_nblocks[] = "SELECT COUNT(*) FROM sample_blocks WHERE session_id = ?1";
static const char q_nrecords[] = "SELECT COUNT(*) FROM sample_intervals WHERE session_id = ?1 AND keys > 0";

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

int qm_kset_add(struct kset *ks, const struct store_block_key *k)
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
			sat_inc_u64(&r->count, k->count);
			return 0;
		}
	}
	if (qm_grow((void **)&ks->rows, &ks->cap, ks->n + 1, sizeof(*ks->rows)) < 0)
		return -ENOMEM;
	ks->rows[ks->n] = *k;
	ks->slots[j] = (uint32_t)++ks->n;
	return 0;
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

int qm_keys_from_blocks(struct store *s, int64_t sid, const struct query_filter *f, int64_t lo, int64_t hi,
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
		size_t zlen, len, off = 0;
		const uint8_t *z = db_col_blob(st, 0, &zlen);
		uint8_t *owned;
		const uint8_t *p = store_block_unpack(z, zlen, &len, &owned);
		if (!p) {
			db_reset(st);
			return -ENOMEM;
		}
		while (off < len) {
			struct store_block_key k;
			size_t used = store_block_get(p + off, len - off, &k);
			if (!used) {
				log_warn("session %lld: a damaged sample block (ignored from there)",
					 (long long)sid);
				break;
			}
			off += used;
			if (f->npids && !qm_in_pid_list(f->pids, f->npids, k.pid))
				continue;
			if (k.count > VALIDATE_MAX_SAMPLE_COUNT) /* stored unchecked by an older collector */
				k.count = VALIDATE_MAX_SAMPLE_COUNT;
			if (qm_kset_add(ks, &k) < 0) {
				free(owned);
				db_reset(st);
				return -ENOMEM;
			}
		}
		free(owned);
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
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
		if (qm_kset_add(ks, &k) < 0) {
			rc = -ENOMEM;
			break;
		}
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}
