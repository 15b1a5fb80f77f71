/* Sample keys stored once per session (#40, w45a): a session's dictionary of
 * keys and the sample blocks that hold (key id, count) pairs.
 *
 *   sample_key_ids(session_id, first_id, seq, n, data, PRIMARY KEY(session_id, first_id))
 *     -- the n keys record seq introduced, ids first_id..first_id+n-1, dense per session in commit
 *        order; data: the keys as store_block_put writes them (count 0), packed (store_block_pack)
 *   sample_blocks.fmt -- NULL or 0: the block holds whole keys (store_blocks.h, every older block);
 *     STORE_BLOCK_FMT_IDS: per key the varints zigzag(id - previous id - 1) and count (the first key's
 *     previous id is -1), packed the same way.
 *
 * A chunk always starts at the ids the session had when it was written, so two collectors adding
 * keys to one session meet on the primary key and one commit fails (the record is resent; that
 * writer reloads the dictionary). An id block refers only to ids committed with it or before. */
#ifndef COLLECTOR_STORE_KEYIDS_H
#define COLLECTOR_STORE_KEYIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store_blocks.h"

struct store;

#define STORE_BLOCK_FMT_KEYS 0
#define STORE_BLOCK_FMT_IDS 1
/* Most bytes of one key of an id block (two varints). */
#define STORE_IDBLOCK_MAX_KEY_BYTES 20
/* Most ids a reader loads for one session (a writer's cap is at most this): past it, blocks referring
 * to later ids are read as damaged. 2^22 keys of 40 bytes: 160 MiB, the bound of one query's dictionary. */
#define STORE_KEYIDS_READ_MAX (1u << 22)
/* The writer's default cap per session (PROF_STORE_KEY_IDS sets another, 0: no ids, every block in
 * the key format) and for all its sessions' dictionaries together (whole sessions evicted past it;
 * PROF_STORE_KEY_IDS_BYTES sets a lower one, for tests). */
#define STORE_KEYIDS_SESSION_MAX (1u << 20)
#define STORE_KEYIDS_WRITER_BYTES (64u << 20)
/* A dictionary is evicted for another session's only after this many seconds without a record
 * (PROF_STORE_KEY_IDS_IDLE_S sets another, for tests): where the sessions written within it do not fit
 * the bound, the one without room writes whole keys (w45g: no reload on every record). */
#define STORE_KEYIDS_IDLE_S 60

/* A session's keys by id (count 0). */
struct store_keydict {
	struct store_block_key *keys;
	uint32_t n;
	size_t cap;
};

/* Append key id at p (prev: the block's previous id, -1 at its start, updated): bytes written. */
size_t store_idblock_put(uint8_t *p, uint32_t id, int64_t *prev, uint64_t count);

/* The next key of a block's varints p[0..len) in format fmt (STORE_BLOCK_FMT_*), d the session's
 * dictionary (NULL: none loaded, every id block damaged), prev the block's previous id (-1 at its
 * start, updated): the whole key in *k (inc 0), bytes read; 0 when the data is cut or malformed or
 * the id is past the dictionary (a damaged block). The one decode of both formats. */
size_t store_block_next(const uint8_t *p, size_t len, int fmt, const struct store_keydict *d, int64_t *prev,
			struct store_block_key *k);

/* The id block's next (id, count), checked against nkeys ids: bytes read, 0 when damaged. */
static inline size_t store_idblock_get(const uint8_t *p, size_t len, uint32_t nkeys, int64_t *prev, uint32_t *id,
				       uint64_t *count)
{
	uint64_t v[2];
	size_t off = 0;
	for (int i = 0; i < 2; i++) {
		if (off < len && p[off] < 0x80) {
			v[i] = p[off++];
			continue;
		}
		uint64_t r = 0;
		size_t j = 0;
		for (;; j++) {
			if (off + j >= len || j >= 10)
				return 0;
			r |= (uint64_t)(p[off + j] & 0x7f) << (7 * j);
			if (!(p[off + j] & 0x80))
				break;
		}
		v[i] = r;
		off += j + 1;
	}
	if ((v[0] >> 1) > (uint64_t)nkeys + 1)
		return 0; /* past any id either way (and *prev + 1 + d below could overflow) */
	int64_t d = (int64_t)(v[0] >> 1) ^ -(int64_t)(v[0] & 1);
	int64_t x = *prev + 1 + d;
	if (x < 0 || x >= (int64_t)nkeys)
		return 0;
	*prev = x;
	*id = (uint32_t)x;
	*count = v[1];
	return off;
}

/* Chunk first_id (n keys, its stored bytes z[0..zlen)) appended to d: 0; -EBADMSG where it does not
 * follow d's last id, does not decode to n keys, or would pass max ids (d unchanged); -ENOMEM. */
int store_keydict_add_chunk(struct store_keydict *d, int64_t first_id, int64_t n, const uint8_t *z, size_t zlen,
			    uint32_t max);
void store_keydict_free(struct store_keydict *d);

/* Whether the store has the dictionary (table sample_key_ids and sample_blocks.fmt): an older store
 * opened read-only has not, and holds no id block. */
bool store_has_key_ids(struct store *s);
/* Session sid's dictionary read from the store into d (emptied first), at most max ids: chunks in id
 * order up to the first that is missing or damaged (one warning: blocks referring to later ids are
 * then read as damaged). 0, 1 (stopped at such a chunk) or -errno. */
int store_keydict_load(struct store *s, int64_t sid, uint32_t max, struct store_keydict *d);

/* The chunks of session sid stored past d's last id appended to d (up to the first missing or
 * damaged one, quietly: the load warned), at most max ids: 0 or -errno. */
int store_keydict_extend(struct store *s, int64_t sid, uint32_t max, struct store_keydict *d);
/* store_block_next for a reader whose dictionary was loaded before its blocks' statement ran (w45g:
 * without one read snapshot a block and its chunk committed in between refer to ids past d): at an
 * id block's key that does not decode, the first time (*extended false), d is extended from the
 * store (ids only grow) and the key decoded again; 0 only then. */
size_t store_block_next_fresh(struct store *s, int64_t sid, const uint8_t *p, size_t len, int fmt,
			      struct store_keydict *d, bool *extended, int64_t *prev, struct store_block_key *k);

/* Writer (store_keyids_w.c): the record's keys as an id block of session sid into out (room for
 * n * STORE_IDBLOCK_MAX_KEY_BYTES), its new keys' chunk written in the open transaction. 1: out
 * holds the id block (*len bytes); 0: write the key format (ids off, or the session's cap reached);
 * -errno. keys[i].count is each key's count. A chunk that meets another writer's at its first id (SQLite
 * says so at once) has the dictionary reloaded in the transaction and the record encoded again, once
 * (w46c; PostgreSQL says so only at the commit: the transaction fails, its records are resent). */
int store_keyids_encode(struct store *s, int64_t sid, uint64_t seq, const struct store_block_key *keys, size_t n,
			uint8_t *out, size_t *len);
/* The transaction ended: committed (the dictionaries' new ids kept) or not (every dictionary dropped,
 * each reloaded at its session's next record). */
void store_keyids_tx_end(struct store *s, bool committed);
/* Session sid deleted: its dictionary dropped (a session given its id again starts at id 0). */
void store_keyids_forget(struct store *s, int64_t sid);
/* A savepoint was sent (records sent ahead, store_ahead.c) / rolled back to. */
void store_keyids_savepoint(struct store *s);
void store_keyids_to_savepoint(struct store *s);
void store_keyids_free(struct store *s);
/* The writer's counts since the store was opened: sessions' dictionaries loaded (a session evicted
 * and written again loads again), records written as whole keys for lack of room in the bound, reads
 * of a session's stored ids' end (at most one per session and transaction, w46b), and the
 * dictionaries' bytes now. */
struct store_keyids_stats {
	uint64_t loads, fallbacks, end_reads;
	uint64_t collisions; /* chunks that met another writer's ids, the record's keys encoded again (w46c) */
	size_t bytes;
};
void store_keyids_stats(const struct store *s, struct store_keyids_stats *st);
/* For tests: the writer's per-session cap now in force. */
uint32_t store_keyids_session_max(void);

#endif
