/* Sample keys stored once per session: the decode of both block formats and
 * the dictionary's reader (store_keyids.h). */
#include "store_keyids.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "store_priv.h"
#include "store_varint.h"

static const char q_chunks[] =
    "SELECT first_id, n, data FROM sample_key_ids WHERE session_id = ?1 ORDER BY first_id";
static const char q_chunks_from[] =
    "SELECT first_id, n, data FROM sample_key_ids WHERE session_id = ?1 AND first_id >= ?2 ORDER BY first_id";

size_t store_idblock_put(uint8_t *p, uint32_t id, int64_t *prev, uint64_t count)
{
	size_t n = put_var(p, zigzag((int64_t)id - *prev - 1));
	n += put_var(p + n, count);
	*prev = id;
	return n;
}

size_t store_block_next(const uint8_t *p, size_t len, int fmt, const struct store_keydict *d, int64_t *prev,
			struct store_block_key *k)
{
	if (fmt != STORE_BLOCK_FMT_IDS)
		return store_block_get(p, len, k);
	uint32_t id;
	uint64_t count;
	size_t used = d ? store_idblock_get(p, len, d->n, prev, &id, &count) : 0;
	if (used) {
		*k = d->keys[id];
		k->count = count;
	}
	return used;
}

int store_keydict_add_chunk(struct store_keydict *d, int64_t first_id, int64_t n, const uint8_t *z, size_t zlen,
			    uint32_t max)
{
	if (first_id != (int64_t)d->n || n <= 0 || n > (int64_t)max - (int64_t)d->n || !z)
		return -EBADMSG;
	size_t len, off = 0;
	uint8_t *owned;
	const uint8_t *p = store_block_unpack(z, zlen, &len, &owned);
	if (!p)
		return -ENOMEM;
	if (d->n + (size_t)n > d->cap) {
		size_t nc = d->cap ? d->cap : 256;
		while (nc < d->n + (size_t)n)
			nc *= 2;
		struct store_block_key *nk = realloc(d->keys, nc * sizeof(*nk));
		if (!nk) {
			free(owned);
			return -ENOMEM;
		}
		d->keys = nk;
		d->cap = nc;
	}
	int64_t i = 0;
	for (; i < n && off < len; i++) {
		size_t used = store_block_get(p + off, len - off, &d->keys[d->n + i]);
		if (!used)
			break;
		d->keys[d->n + i].count = 0;
		off += used;
	}
	free(owned);
	if (i != n || off != len)
		return -EBADMSG;
	d->n += (uint32_t)n;
	return 0;
}

void store_keydict_free(struct store_keydict *d)
{
	free(d->keys);
	*d = (struct store_keydict){0};
}

int store_keydict_extend(struct store *s, int64_t sid, uint32_t max, struct store_keydict *d)
{
	s->keydict_extends++;
	struct db_stmt *st = store_stmt(s, q_chunks_from);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, d->n);
	int rc, bad = 0;
	while ((rc = db_step(st)) == 1) {
		if (bad)
			continue; /* the statement read to its end */
		size_t zlen;
		const uint8_t *z = db_col_blob(st, 2, &zlen);
		bad = store_keydict_add_chunk(d, db_col_i64(st, 0), db_col_i64(st, 1), z, zlen, max);
	}
	db_reset(st);
	return bad == -ENOMEM ? -ENOMEM : rc < 0 ? rc : 0;
}

size_t store_block_next_fresh(struct store *s, int64_t sid, const uint8_t *p, size_t len, int fmt,
			      struct store_keydict *d, bool *extended, int64_t *prev, struct store_block_key *k)
{
	size_t used = store_block_next(p, len, fmt, d, prev, k);
	/* in a read snapshot (store_read_begin) the dictionary holds every id its blocks refer to: an id
	 * past it is damage, and no statement runs while the block's is mid-stream (r8 F4: PostgreSQL then
	 * read the rest of its rows ahead and held them) */
	if (used || fmt != STORE_BLOCK_FMT_IDS || !d || *extended || store_read_snapshot(s))
		return used;
	*extended = true;
	uint32_t n = d->n;
	if (store_keydict_extend(s, sid, STORE_KEYIDS_READ_MAX, d) < 0 || d->n == n)
		return 0;
	return store_block_next(p, len, fmt, d, prev, k); /* *prev is left as it was at a failure */
}

bool store_has_key_ids(struct store *s)
{
	return store_has_table(s, "sample_key_ids") && store_has_column(s, "sample_blocks", "fmt");
}

int store_keydict_load(struct store *s, int64_t sid, uint32_t max, struct store_keydict *d)
{
	d->n = 0;
	s->keydict_loads++;
	struct db_stmt *st = store_stmt(s, q_chunks);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc, bad = 0;
	while ((rc = db_step(st)) == 1) {
		if (bad)
			continue; /* the rest read (and dropped): the statement ends at its last row */
		size_t zlen;
		int64_t first = db_col_i64(st, 0), n = db_col_i64(st, 1);
		const uint8_t *z = db_col_blob(st, 2, &zlen);
		bad = store_keydict_add_chunk(d, first, n, z, zlen, max);
		if (bad == -ENOMEM)
			break;
		if (bad)
			log_warn("session %lld: its sample keys from id %lld on are missing, damaged or past the"
				 " bound of %u keys: blocks referring to them are read as damaged",
				 (long long)sid, (long long)d->n, max);
	}
	db_reset(st);
	if (s->keydict_hook)
		s->keydict_hook(s->keydict_hook_arg);
	return bad == -ENOMEM ? -ENOMEM : rc < 0 ? rc : bad ? 1 : 0;
}
