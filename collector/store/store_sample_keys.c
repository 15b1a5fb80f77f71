/* store_sample_keys.h */
#include "store_sample_keys.h"

#include <errno.h>
#include <stdlib.h>

#include "store_blocks.h"
#include "store_keyids.h"
#include "store_priv.h"

static const char q_rows[] = "SELECT seq, t_ns, pid, tid, ip, kip, stack_id, count FROM cpu_samples c"
			     " WHERE session_id = ?1 ORDER BY seq";
static const char q_rows_uncovered[] =
    "SELECT seq, t_ns, pid, tid, ip, kip, stack_id, count FROM cpu_samples c WHERE session_id = ?1"
    " AND NOT EXISTS (SELECT 1 FROM sample_blocks b WHERE b.session_id = ?1 AND b.seq = c.seq) ORDER BY seq";
static const char q_blocks[] = "SELECT seq, t_ns, data, 0 FROM sample_blocks WHERE session_id = ?1 ORDER BY seq";
/* fmt: whole keys or ids of the session's dictionary (store_keyids.h) */
static const char q_blocks_fmt[] =
    "SELECT seq, t_ns, data, fmt FROM sample_blocks WHERE session_id = ?1 ORDER BY seq";

static int rows_of(struct store *s, int64_t sid, bool blocks, store_key_cb cb, void *arg)
{
	struct db_stmt *st = store_query(s, blocks ? q_rows_uncovered : q_rows);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc, ret = 0;
	while (ret == 0 && (rc = db_step(st)) == 1) {
		struct store_key_row r = {.seq = db_col_u64(st, 0),
					  .t_ns = db_col_i64(st, 1),
					  .pid = (int32_t)db_col_i64(st, 2),
					  .tid = (int32_t)db_col_i64(st, 3),
					  .ip = db_col_u64(st, 4),
					  .kip = db_col_u64(st, 5),
					  .stack_id = (uint32_t)db_col_i64(st, 6),
					  .count = db_col_u64(st, 7)};
		ret = cb(&r, arg);
	}
	db_finalize(st);
	return ret ? ret : rc < 0 ? rc : 0;
}

/* The keys of one stored block. */
static int keys_of(struct store *s, int64_t sid, struct db_stmt *st, struct store_keydict *kd, bool *extended,
		   store_key_cb cb, void *arg)
{
	size_t zlen, len, off = 0;
	const uint8_t *z = db_col_blob(st, 2, &zlen);
	uint8_t *owned;
	const uint8_t *p = store_block_unpack(z, zlen, &len, &owned);
	if (!p)
		return -ENOMEM;
	int ret = 0, fmt = db_col_null(st, 3) ? STORE_BLOCK_FMT_KEYS : (int)db_col_i64(st, 3);
	int64_t prev = -1;
	while (ret == 0 && off < len) {
		struct store_block_key k;
		size_t used = store_block_next_fresh(s, sid, p + off, len - off, fmt, kd, extended, &prev, &k);
		if (!used) {
			ret = -EBADMSG;
			break;
		}
		off += used;
		struct store_key_row r = {.seq = db_col_u64(st, 0),
					  .t_ns = db_col_i64(st, 1),
					  .pid = k.pid,
					  .tid = k.tid,
					  .ip = k.ip,
					  .kip = k.kip,
					  .stack_id = k.stack_id,
					  .count = k.count};
		ret = cb(&r, arg);
	}
	free(owned);
	return ret;
}

static int list_keys(struct store *s, int64_t session_id, store_key_cb cb, void *arg)
{
	bool blocks = store_has_table(s, "sample_blocks");
	int ret = store_has_table(s, "cpu_samples") ? rows_of(s, session_id, blocks, cb, arg) : 0;
	if (ret || !blocks)
		return ret;
	bool ids = store_has_key_ids(s);
	struct store_keydict kd = {0};
	if (ids && (ret = store_keydict_load(s, session_id, STORE_KEYIDS_READ_MAX, &kd)) < 0)
		return ret;
	ret = 0;
	struct db_stmt *st = store_query(s, ids ? q_blocks_fmt : q_blocks);
	if (!st) {
		store_keydict_free(&kd);
		return -EIO;
	}
	db_bind_i64(st, 1, session_id);
	int rc;
	bool extended = false;
	while (ret == 0 && (rc = db_step(st)) == 1)
		ret = keys_of(s, session_id, st, &kd, &extended, cb, arg);
	db_finalize(st);
	store_keydict_free(&kd);
	return ret ? ret : rc < 0 ? rc : 0;
}

int store_list_sample_keys(struct store *s, int64_t session_id, store_key_cb cb, void *arg)
{
	/* the dictionary and the blocks in one snapshot (PostgreSQL: REPEATABLE READ) */
	int reading = store_read_begin(s);
	if (reading < 0)
		return reading;
	int rc = list_keys(s, session_id, cb, arg);
	store_read_end(s, reading);
	return rc;
}
