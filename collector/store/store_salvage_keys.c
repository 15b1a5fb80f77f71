/* collector recover, after the copy (store_salvage.c): each session's key ids
 * (store_keyids.h) made whole again (#40 w46c, review r7 #8). A chunk of
 * sample_key_ids on an unreadable page is lost while the blocks that refer to
 * its ids may be on pages that read: kept as they were, they were warned as
 * damaged at every read, and a collector writing the session on the
 * recovered store gave the lost ids to new keys (a chunk starts at the stored
 * ids' end), so those blocks then decoded to the wrong keys without a word.
 * Here a session's dictionary is its chunks from id 0 up to the first missing
 * or damaged one; the chunks past it (unreachable: a reader stops there) are
 * deleted, and each id block that does not decode whole against it is cut to
 * the keys it does decode (a reader kept only those before the first lost
 * one), deleted where none is left; counted and named in one warning per
 * session. Blocks that decode, and agree with their own row, are kept as they are. A block whose own
 * data is damaged (a zstd frame that does not decompress, a varint that does not read, an id past the
 * id cap, no data) is not cut: its bytes read as pairs would be made-up keys (review r10 F1, w46e); nor
 * is one whose pairs disagree with its row (put_block writes one pair per key, `keys` of them, and the
 * sum of their counts in `samples`; raw blocks and zstd frames have no checksum, so this is the only
 * sign of a changed count byte: review r11 F2, w46f); it is deleted whole, counted apart and warned as
 * damaged. The lost ids are bounded by the id cap, not by the end of the chunks that survived the copy:
 * the last chunks lost with their page leave no row that says where the session's ids ended (r11 F1).
*/
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "log.h"
#include "store_keyids.h"
#include "store_priv.h"
#include "validate_samples.h"

static const char q_sessions[] = "SELECT session_id FROM main.sample_key_ids UNION SELECT session_id FROM"
				 " main.sample_blocks WHERE fmt = 1 ORDER BY 1";
static const char q_chunks[] =
    "SELECT first_id, n, data FROM main.sample_key_ids WHERE session_id = ?1 ORDER BY first_id";
static const char q_blocks[] = "SELECT seq, data, samples, keys FROM main.sample_blocks WHERE "
			       "session_id = ?1 AND fmt = 1 ORDER BY seq";

/* What a block's row says of its data (columns col, col + 1: samples, keys; NULL, unknown: an older
 * store's, not checked). */
struct blkrow {
	bool has_samples, has_keys;
	uint64_t samples, keys;
};

static struct blkrow row_of(struct db_stmt *st, int col)
{
	struct blkrow r = {.has_samples = !db_col_null(st, col), .has_keys = !db_col_null(st, col + 1)};
	r.samples = r.has_samples ? db_col_u64(st, col) : 0;
	r.keys = r.has_keys ? db_col_u64(st, col + 1) : 0;
	return r;
}

/* The sums of a block's counts, as its writers take them. */
struct sums {
	uint64_t raw, clamped, pairs;
};

static void sums_add(struct sums *m, uint64_t count)
{
	m->raw = m->raw + count < m->raw ? UINT64_MAX : m->raw + count; /* compaction's sum saturates */
	m->clamped += count > VALIDATE_MAX_SAMPLE_COUNT ? VALIDATE_MAX_SAMPLE_COUNT : count; /* put_block's */
	m->pairs++;
}

/* Whether the pairs read agree with the block's row: the sum of their counts is its samples (put_block
 * sums them each within the record limit, compaction (query_downsample.c) as they are) and their number
 * its keys. */
static bool agrees(const struct blkrow *r, const struct sums *m)
{
	return (!r->has_samples || r->samples == m->clamped || r->samples == m->raw) &&
	       (!r->has_keys || r->keys == m->pairs);
}

/* Whether the block's data z[0..zlen) decodes whole against d and agrees with its row r: -ENOMEM, 0
 * (no) or 1 (yes). Empty or NULL data, and a zstd frame that does not decompress (unpack hands its
 * bytes back), do not. */
static int decodes(const uint8_t *z, size_t zlen, const struct store_keydict *d, const struct blkrow *r)
{
	if (!z || !zlen)
		return 0;
	size_t len, off = 0;
	uint8_t *owned;
	const uint8_t *p = store_block_unpack(z, zlen, &len, &owned);
	if (!p)
		return -ENOMEM;
	if (p == z && store_block_is_zstd(z, zlen))
		return 0;
	int64_t prev = -1;
	struct sums m = {0};
	while (off < len) {
		struct store_block_key k;
		size_t used = store_block_next(p + off, len - off, STORE_BLOCK_FMT_IDS, d, &prev, &k);
		if (!used)
			break;
		off += used;
		sums_add(&m, k.count);
	}
	free(owned);
	return off == len && agrees(r, &m);
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

/* The seqs of session sid's id blocks that do not decode whole against d (malloc'd *seqs, *n of
 * them): 0 or -errno. */
static int undecodable(struct store *s, int64_t sid, const struct store_keydict *d, int64_t **seqs, size_t *n)
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
		struct blkrow r = row_of(st, 2);
		if ((ok = decodes(z, zlen, d, &r)) < 0)
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

/* What cut_block did with a block. */
enum cut { CUT_KEPT, CUT_EMPTY, CUT_DAMAGED };

/* Block seq of session sid cut to its keys whose ids are below nids, where it can be: its data
 * decompressed (if a zstd frame) and read as (id, count) pairs to its end, each id below the id cap
 * (STORE_KEYIDS_READ_MAX: the chunks after the lost one may be lost too, so the chunks left do not say
 * where the session's ids ended, r11 F1), the sum of all its counts its row's samples and their number
 * its row's keys (where the row has them); the keys at ids nids.. dropped, their samples added to
 * *lost, the block deleted where no key is left (CUT_EMPTY), else rewritten with the kept keys, their
 * number and their samples (its pid range and bits, a superset of the kept keys', stay as they are:
 * CUT_KEPT). A block that does not read so (a frame that does not decompress, a varint that does not
 * read, an id past the cap, no data, pairs that disagree with its row) is damaged, not a block of lost
 * ids: whatever its bytes would give is not its keys; deleted whole, its samples lost (CUT_DAMAGED).
 * 0 or -errno. */
static int cut_block(struct store *s, int64_t sid, int64_t seq, uint32_t nids, uint64_t *lost, enum cut *what)
{
	struct db_stmt *st = store_query(s, "SELECT data, samples, keys FROM main.sample_blocks WHERE"
					    " session_id = ?1 AND seq = ?2");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, seq);
	int rc = db_step(st);
	if (rc != 1) {
		db_finalize(st);
		return rc < 0 ? rc : 0;
	}
	size_t zlen, len = 0, off = 0, o = 0, kept = 0;
	const uint8_t *z = db_col_blob(st, 0, &zlen);
	struct blkrow row = row_of(st, 1);
	struct sums all = {0};
	uint64_t total = 0;
	uint8_t *owned = NULL, *out = NULL;
	const uint8_t *p = z && zlen ? store_block_unpack(z, zlen, &len, &owned) : NULL;
	bool damaged = !z || !zlen || (p == z && store_block_is_zstd(z, zlen));
	if (!damaged && (!p || !(out = malloc(len + 1))))
		rc = -ENOMEM;
	int64_t prev = -1, oprev = -1;
	while (rc == 1 && !damaged && off < len) {
		uint32_t id;
		uint64_t count;
		size_t used = store_idblock_get(p + off, len - off, STORE_KEYIDS_READ_MAX, &prev, &id, &count);
		if (!used) {
			damaged = true; /* a varint that does not read or an id past the cap */
			break;
		}
		off += used;
		sums_add(&all, count);
		if (id >= nids)
			continue;
		o += store_idblock_put(out + o, id, &oprev, count);
		total += count > VALIDATE_MAX_SAMPLE_COUNT ? VALIDATE_MAX_SAMPLE_COUNT : count;
		kept++;
	}
	free(owned);
	db_finalize(st);
	if (rc == 1 && !damaged && !agrees(&row, &all))
		damaged = true; /* a changed count or a lost pair: its bytes parse but are not its keys (r11 F2) */
	/* what it held: its row's samples, else (an older store's NULL) what its pairs say where they read */
	uint64_t had = row.has_samples ? row.samples : damaged ? 0 : all.clamped;
	if (damaged)
		kept = 0, total = 0;
	uint8_t *zo = NULL;
	size_t zolen = 0;
	if (rc == 1 && kept && (rc = store_block_pack(out, o, &zo, &zolen)) == 0)
		rc = 1;
	if (rc == 1 && kept) {
		st = store_query(s, "UPDATE main.sample_blocks SET data = ?3, keys = ?4, samples = ?5 WHERE"
				    " session_id = ?1 AND seq = ?2");
		rc = st ? 0 : -EIO;
		if (st) {
			db_bind_i64(st, 1, sid);
			db_bind_i64(st, 2, seq);
			db_bind_blob(st, 3, zo ? zo : out, zo ? zolen : o);
			db_bind_i64(st, 4, (int64_t)kept);
			db_bind_u64(st, 5, total);
			rc = db_run(st);
			db_finalize(st);
		}
	} else if (rc == 1) {
		int64_t c =
		    run2(s, "DELETE FROM main.sample_blocks WHERE session_id = ?1 AND seq = ?2", sid, seq);
		rc = c < 0 ? (int)c : 0;
	}
	free(zo);
	free(out);
	*what = damaged ? CUT_DAMAGED : kept ? CUT_KEPT : CUT_EMPTY;
	*lost += had > total ? had - total : 0;
	return rc < 0 ? rc : 0;
}

static int session_fix(struct store *s, int64_t sid, struct store_salvage_stats *out)
{
	struct store_keydict d = {0};
	int64_t *seqs = NULL;
	size_t n = 0, cut = 0, emptied = 0, damaged = 0;
	uint64_t lost = 0;
	int rc = load_prefix(s, sid, &d);
	if (rc == 0)
		rc = undecodable(s, sid, &d, &seqs, &n);
	int64_t chunks =
	    rc == 0 ? run2(s, "DELETE FROM main.sample_key_ids WHERE session_id = ?1 AND first_id >= ?2", sid,
			   d.n)
		    : 0;
	if (chunks < 0)
		rc = (int)chunks;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		enum cut what = CUT_KEPT;
		rc = cut_block(s, sid, seqs[i], d.n, &lost, &what);
		cut += what == CUT_KEPT;
		emptied += what == CUT_EMPTY;
		damaged += what == CUT_DAMAGED;
	}
	if (rc == 0 && (chunks > 0 || n > 0)) {
		out->key_chunks_dropped += (uint64_t)chunks;
		out->id_blocks_cut += cut;
		out->id_blocks_dropped += emptied;
		out->id_blocks_damaged += damaged;
		out->id_samples_dropped += lost;
		if (chunks > 0 || cut || emptied)
			log_warn("recover: session %lld: its sample keys end at id %u (the chunk after it is"
				 " missing or damaged: an unreadable page): %lld chunks from there on dropped;"
				 " %zu blocks referred to lost ids: their other keys kept, %zu blocks left without"
				 " a key deleted",
				 (long long)sid, d.n, (long long)chunks, cut + emptied, emptied);
		if (damaged)
			log_warn("recover: session %lld: %zu sample blocks do not read (their data damaged: a"
				 " frame that does not decompress, a malformed varint, an id past the cap, or counts"
				 " that disagree with their row's samples or keys):"
				 " deleted whole",
				 (long long)sid, damaged);
		log_warn("recover: session %lld: %llu samples lost", (long long)sid, (unsigned long long)lost);
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
	/* one transaction (it reads only the new store: no I/O error of the damaged file can end it) */
	bool began = rc == 0 && n && (rc = db_exec(s->db, "BEGIN IMMEDIATE", "begin the key ids' pass")) == 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = session_fix(s, sids[i], out);
	if (began && db_exec(s->db, rc == 0 ? "COMMIT" : "ROLLBACK", "end the key ids' pass") < 0 && rc == 0)
		rc = -EIO;
	free(sids);
	return rc;
}
