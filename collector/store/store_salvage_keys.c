/* collector recover, after the copy (store_salvage.c): each session's key ids
 * (store_keyids.h) made whole again (#40 w46c, review r7 #8). A chunk of
 * sample_key_ids on an unreadable page is lost while the blocks that refer to
 * its ids may be on pages that read: kept as they were, they were warned as
 * damaged at every read, and a collector writing the session on the
 * recovered store gave the lost ids to new keys (a chunk starts at the stored
 * ids' end), so those blocks then decoded to the wrong keys without a word.
 * Here a session's dictionary is its chunks from id 0 up to the first missing
 * or damaged one; the chunks past it (unreachable: a reader stops there) and
 * every id block that does not decode whole against it are deleted, counted
 * and named in one warning per session. Blocks that decode are kept. */
#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "store_keyids.h"
#include "store_priv.h"

static const char q_sessions[] = "SELECT session_id FROM main.sample_key_ids UNION SELECT session_id FROM"
				 " main.sample_blocks WHERE fmt = 1 ORDER BY 1";
static const char q_chunks[] =
    "SELECT first_id, n, data FROM main.sample_key_ids WHERE session_id = ?1 ORDER BY first_id";
static const char q_blocks[] = "SELECT seq, data, COALESCE(samples, 0) FROM main.sample_blocks WHERE "
			       "session_id = ?1 AND fmt = 1 ORDER BY seq";

/* Whether the block's data z[0..zlen) decodes whole against d: -ENOMEM, 0 (no) or 1 (yes). */
static int decodes(const uint8_t *z, size_t zlen, const struct store_keydict *d)
{
	size_t len, off = 0;
	uint8_t *owned;
	const uint8_t *p = store_block_unpack(z, zlen, &len, &owned);
	if (!p)
		return -ENOMEM;
	int64_t prev = -1;
	while (off < len) {
		struct store_block_key k;
		size_t used = store_block_next(p + off, len - off, STORE_BLOCK_FMT_IDS, d, &prev, &k);
		if (!used)
			break;
		off += used;
	}
	free(owned);
	return off == len;
}

/* Session sid's chunks in id order up to the first that does not follow or decode, into d: 0 or -errno. */
static int load_prefix(struct store *s, int64_t sid, struct store_keydict *d)
{
	struct db_stmt *st = store_query(s, q_chunks);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc, bad = 0;
	while ((rc = db_step(st)) == 1 && !bad) {
		size_t zlen;
		const uint8_t *z = db_col_blob(st, 2, &zlen);
		bad = store_keydict_add_chunk(d, db_col_i64(st, 0), db_col_i64(st, 1), z, zlen,
					      STORE_KEYIDS_READ_MAX);
	}
	db_finalize(st);
	return bad == -ENOMEM ? -ENOMEM : rc < 0 ? rc : 0;
}

/* The seqs of session sid's id blocks that do not decode against d (malloc'd *seqs, *n of them) and
 * the samples they held: 0 or -errno. */
static int undecodable(struct store *s, int64_t sid, const struct store_keydict *d, int64_t **seqs, size_t *n,
		       uint64_t *samples)
{
	struct db_stmt *st = store_query(s, q_blocks);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	size_t cap = 0;
	int rc, ok = 1;
	while ((rc = db_step(st)) == 1) {
		size_t zlen;
		const uint8_t *z = db_col_blob(st, 1, &zlen);
		if ((ok = decodes(z, zlen, d)) < 0)
			break;
		if (ok)
			continue;
		if (*n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			int64_t *nv = realloc(*seqs, nc * sizeof(*nv));
			if (!nv) {
				ok = -ENOMEM;
				break;
			}
			*seqs = nv;
			cap = nc;
		}
		(*seqs)[(*n)++] = db_col_i64(st, 0);
		*samples += (uint64_t)db_col_i64(st, 2);
	}
	db_finalize(st);
	return ok < 0 ? ok : rc < 0 ? rc : 0;
}

/* Run sql with (sid, v) bound: the rows it changed, or -errno. */
static int64_t run2(struct store *s, const char *sql, int64_t sid, int64_t v)
{
	struct db_stmt *st = store_query(s, sql);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, v);
	int rc = db_run(st);
	db_finalize(st);
	return rc < 0 ? rc : db_changes(s->db);
}

static int session_fix(struct store *s, int64_t sid, struct store_salvage_stats *out)
{
	struct store_keydict d = {0};
	int64_t *seqs = NULL;
	size_t n = 0;
	uint64_t samples = 0;
	int rc = load_prefix(s, sid, &d);
	if (rc == 0)
		rc = undecodable(s, sid, &d, &seqs, &n, &samples);
	int64_t chunks =
	    rc == 0 ? run2(s, "DELETE FROM main.sample_key_ids WHERE session_id = ?1 AND first_id >= ?2", sid,
			   d.n)
		    : 0;
	if (chunks < 0)
		rc = (int)chunks;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		int64_t c = run2(s, "DELETE FROM main.sample_blocks WHERE session_id = ?1 AND seq = ?2", sid,
				 seqs[i]);
		rc = c < 0 ? (int)c : 0;
	}
	if (rc == 0 && (chunks > 0 || n > 0)) {
		out->key_chunks_dropped += (uint64_t)chunks;
		out->id_blocks_dropped += n;
		out->id_samples_dropped += samples;
		log_warn("recover: session %lld: its sample keys end at id %u (the chunk after it is missing "
			 "or damaged:"
			 " an unreadable page): %lld chunks from there on and %zu blocks that refer to lost "
			 "ids (%llu samples) dropped",
			 (long long)sid, d.n, (long long)chunks, n, (unsigned long long)samples);
	}
	free(seqs);
	store_keydict_free(&d);
	return rc;
}

int store_salvage_key_ids(struct store *s, struct store_salvage_stats *out)
{
	struct db_stmt *st = store_query(s, q_sessions);
	if (!st)
		return -EIO;
	int64_t *sids = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (n == cap) {
			size_t nc = cap ? 2 * cap : 64;
			int64_t *nv = realloc(sids, nc * sizeof(*nv));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			sids = nv;
			cap = nc;
		}
		sids[n++] = db_col_i64(st, 0);
	}
	db_finalize(st);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = session_fix(s, sids[i], out);
	free(sids);
	return rc;
}
