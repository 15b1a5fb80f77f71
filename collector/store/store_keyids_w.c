/* The writer's side of the sessions' key dictionaries (store_keyids.h, #40
 * w45a). Per session it writes, the collector keeps key -> id in memory,
 * loaded from the store the first time this process writes the session (a
 * restart, or an agent moving to another collector on the same PostgreSQL,
 * continues the ids). A record's new keys get the next ids and are written as
 * one chunk in the record's transaction; at its commit they are the session's,
 * at a rollback (or a rollback to the savepoint of records sent ahead) the
 * in-memory dictionary goes back to what the store holds: at a rollback every
 * session's dictionary is dropped and reloaded at its next record (rollbacks
 * are rare; one loaded in the transaction may hold its ids), at a rollback to
 * the savepoint the ids added since are dropped; so two collectors racing on
 * one session (one commit failed on the chunk's primary key) continue from the
 * winner's ids.
 * Bounded: STORE_KEYIDS_SESSION_MAX ids a session (PROF_STORE_KEY_IDS), past
 * which its records are written in the key format; STORE_KEYIDS_WRITER_BYTES
 * for all dictionaries, whole sessions without uncommitted ids evicted (least
 * recently used first), and a record written in the key format where even
 * then its session's dictionary would not fit. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "store_keyids.h"
#include "store_priv.h"

struct kw_sess {
	int64_t sid;
	struct store_keydict d;
	uint32_t committed, sp; /* ids committed; at the last savepoint */
	uint32_t *slots;	/* id + 1, 0 free; at most half full */
	size_t scap;
	uint64_t used;	 /* the writer's tick at its last record */
	int64_t used_s;	 /* the monotonic second of its last record */
	uint64_t tx;   /* the writer's transaction it was loaded or checked in */
	bool off;      /* its stored dictionary is damaged: the key format only */
};

struct store_keyw {
	struct kw_sess **v;
	size_t n, cap;
	uint64_t tick;
	uint64_t tx; /* transactions ended */
	struct store_keyids_stats st;
	/* sessions refused room in transaction refused_tx: their further records in it are whole keys
	 * without asking the store again (r8 F3: one stored-end query a record) */
	int64_t *refused;
	size_t nrefused, caprefused;
	uint64_t refused_tx;
};

static const char q_end[] =
    "SELECT first_id + n FROM sample_key_ids WHERE session_id = ?1 ORDER BY first_id DESC LIMIT 1";
static const char ins_chunk[] =
    "INSERT INTO sample_key_ids (session_id, first_id, seq, n, data) VALUES (?1, ?2, ?3, ?4, ?5)";

uint32_t store_keyids_session_max(void)
{
	const char *e = getenv("PROF_STORE_KEY_IDS");
	if (e && *e) {
		long long v = strtoll(e, NULL, 10);
		return v <= 0 ? 0 : v > (long long)STORE_KEYIDS_READ_MAX ? STORE_KEYIDS_READ_MAX : (uint32_t)v;
	}
	return STORE_KEYIDS_SESSION_MAX;
}

static size_t sess_bytes(const struct kw_sess *k)
{
	return sizeof(*k) + k->d.cap * sizeof(*k->d.keys) + k->scap * sizeof(*k->slots);
}

static uint64_t key_hash(const struct store_block_key *k)
{
	uint64_t h = (uint64_t)(uint32_t)k->pid * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)k->tid * 0xc2b2ae3d27d4eb4full;
	h ^= k->ip * 0x165667b19e3779f9ull;
	h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ull;
	h ^= k->kip * 0x94d049bb133111ebull ^ (uint64_t)k->stack_id * 0x2545f4914f6cdd1dull;
	h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static bool same_key(const struct store_block_key *a, const struct store_block_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->ip == b->ip && a->kip == b->kip && a->stack_id == b->stack_id;
}

/* The id of k, or UINT32_MAX (*at: its free slot). */
static uint32_t find(const struct kw_sess *k, const struct store_block_key *key, size_t *at)
{
	size_t mask = k->scap - 1;
	for (size_t j = key_hash(key) & mask;; j = (j + 1) & mask) {
		uint32_t v = k->slots[j];
		if (!v) {
			*at = j;
			return UINT32_MAX;
		}
		if (same_key(&k->d.keys[v - 1], key))
			return v - 1;
	}
}

/* The slots made again for ids [0, d.n) with room for want ids. 0 or -ENOMEM. */
static int rehash(struct kw_sess *k, size_t want)
{
	size_t nc = 1024;
	while (nc < 2 * want)
		nc *= 2;
	uint32_t *ns = calloc(nc, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	free(k->slots);
	k->slots = ns;
	k->scap = nc;
	for (uint32_t i = 0; i < k->d.n; i++) {
		size_t at;
		find(k, &k->d.keys[i], &at);
		k->slots[at] = i + 1;
	}
	return 0;
}

static void sess_free(struct kw_sess *k)
{
	store_keydict_free(&k->d);
	free(k->slots);
	free(k);
}

static void drop_at(struct store_keyw *w, size_t i)
{
	sess_free(w->v[i]);
	w->v[i] = w->v[--w->n];
}

static size_t writer_bytes(const struct store_keyw *w)
{
	size_t b = 0;
	for (size_t i = 0; i < w->n; i++)
		b += sess_bytes(w->v[i]);
	return b;
}

/* The writer's bound on its dictionaries' bytes (PROF_STORE_KEY_IDS_BYTES: another, for tests). */
static size_t writer_max(void)
{
	const char *e = getenv("PROF_STORE_KEY_IDS_BYTES");
	if (e && *e) {
		long long v = strtoll(e, NULL, 10);
		return v <= 0 ? 0 : v > (long long)STORE_KEYIDS_WRITER_BYTES ? STORE_KEYIDS_WRITER_BYTES : (size_t)v;
	}
	return STORE_KEYIDS_WRITER_BYTES;
}

/* How long a dictionary's session must have had no record before it may be evicted for another's
 * (PROF_STORE_KEY_IDS_IDLE_S: another, for tests): where the sessions written within it do not fit, the
 * one without room writes whole keys rather than evicting and reloading on every record (w45g). */
static int64_t idle_s(void)
{
	const char *e = getenv("PROF_STORE_KEY_IDS_IDLE_S");
	if (e && *e) {
		long long v = strtoll(e, NULL, 10);
		return v < 0 ? 0 : v;
	}
	return STORE_KEYIDS_IDLE_S;
}

static int64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* Whole sessions without uncommitted ids evicted, least recently used first, until need more bytes fit
 * the writer's bound (keep: the session being written). false: they do not. */
static bool make_room(struct store_keyw *w, const struct kw_sess *keep, size_t need)
{
	size_t have = writer_bytes(w), max = writer_max();
	int64_t now = now_s(), idle = idle_s();
	while (have + need > max) {
		size_t best = SIZE_MAX;
		for (size_t i = 0; i < w->n; i++) {
			const struct kw_sess *k = w->v[i];
			if (k != keep && k->d.n == k->committed && now - k->used_s >= idle &&
			    (best == SIZE_MAX || k->used < w->v[best]->used))
				best = i;
		}
		if (best == SIZE_MAX)
			return false;
		have -= sess_bytes(w->v[best]);
		drop_at(w, best);
	}
	return true;
}

/* Where session sid's stored ids end (0: none) into *end. 0 or -errno. */
static int stored_end(struct store *s, int64_t sid, int64_t *end)
{
	struct db_stmt *st = store_stmt(s, q_end);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	s->keyw->st.end_reads++;
	int rc = db_step(st);
	*end = rc == 1 ? db_col_i64(st, 0) : 0;
	db_reset(st);
	return rc < 0 ? rc : 0;
}

/* The bytes a session of n stored ids takes once loaded (rehash's slots for n). */
static size_t bytes_for(uint64_t n)
{
	size_t nc = 1024, cap = n ? 256 : 0;
	while (nc < 2 * n)
		nc *= 2;
	while (cap && cap < n)
		cap *= 2;
	return sizeof(struct kw_sess) + cap * sizeof(struct store_block_key) + nc * sizeof(uint32_t);
}

/* Session sid's writer state, loaded where not in memory; NULL with *err 0: no room for it (others
 * written recently fill the bound), its record written as whole keys. */
static struct kw_sess *sess_of(struct store *s, int64_t sid, int *err)
{
	struct store_keyw *w = s->keyw;
	*err = 0;
	if (!w && !(w = s->keyw = calloc(1, sizeof(*w)))) {
		*err = -ENOMEM;
		return NULL;
	}
	w->tick++;
	for (size_t i = 0; i < w->n; i++)
		if (w->v[i]->sid == sid) {
			struct kw_sess *k = w->v[i];
			if (k->tx != w->tx && !k->off) {
				/* its first record in this transaction: the store's ids end where the dictionary's
				 * committed ones do, else it is stale (the session deleted and its id given again,
				 * another process wrote it): loaded again */
				int64_t end = 0;
				int rc = stored_end(s, sid, &end);
				if (rc < 0) {
					*err = rc;
					return NULL;
				}
				if (end != (int64_t)k->committed) {
					drop_at(w, i);
					break;
				}
			}
			k->tx = w->tx;
			k->used = w->tick;
			k->used_s = now_s();
			return k;
		}
	/* not in memory: loaded only where its stored ids fit beside the sessions written recently; one
	 * refused in this transaction is not asked about again in it */
	if (w->refused_tx != w->tx)
		w->nrefused = 0, w->refused_tx = w->tx;
	for (size_t i = 0; i < w->nrefused; i++)
		if (w->refused[i] == sid) {
			w->st.fallbacks++;
			return NULL;
		}
	int64_t end = 0;
	int rc = stored_end(s, sid, &end);
	if (rc < 0) {
		*err = rc;
		return NULL;
	}
	uint32_t max = store_keyids_session_max();
	if (!make_room(w, NULL, bytes_for(end < 0 ? 0 : end > (int64_t)max ? max : (uint64_t)end))) {
		w->st.fallbacks++;
		if (w->nrefused == w->caprefused) { /* not remembered without memory: asked again */
			size_t nc = w->caprefused ? 2 * w->caprefused : 8;
			int64_t *nr = realloc(w->refused, nc * sizeof(*nr));
			if (!nr)
				return NULL;
			w->refused = nr;
			w->caprefused = nc;
		}
		w->refused[w->nrefused++] = sid;
		return NULL;
	}
	if (w->n == w->cap) {
		size_t nc = w->cap ? 2 * w->cap : 8;
		struct kw_sess **nv = realloc(w->v, nc * sizeof(*nv));
		if (!nv) {
			*err = -ENOMEM;
			return NULL;
		}
		w->v = nv;
		w->cap = nc;
	}
	struct kw_sess *k = calloc(1, sizeof(*k));
	if (!k) {
		*err = -ENOMEM;
		return NULL;
	}
	k->sid = sid;
	k->used = w->tick;
	k->used_s = now_s();
	k->tx = w->tx;
	/* at most the cap's ids: a longer (a collector with a higher cap wrote it) or damaged dictionary is
	 * not written on (a new chunk after its end could meet a stored one forever): whole keys */
	rc = store_keydict_load(s, sid, max, &k->d);
	if (rc == 1) {
		k->off = true;
		store_keydict_free(&k->d);
		rc = 0;
	}
	if (rc == 0)
		rc = rehash(k, k->d.n);
	if (rc < 0) {
		sess_free(k);
		*err = rc;
		return NULL;
	}
	k->committed = k->sp = k->d.n;
	w->v[w->n++] = k;
	w->st.loads++;
	if (!make_room(w, k, 0)) { /* more than its stored end said (written since): not kept */
		drop_at(w, w->n - 1);
		w->st.fallbacks++;
		return NULL;
	}
	return k;
}

/* The ids past n dropped (their chunk rolled back). */
static int truncate_to(struct kw_sess *k, uint32_t n)
{
	if (k->d.n <= n)
		return 0;
	k->d.n = n;
	return rehash(k, n);
}

static int put_chunk(struct store *s, int64_t sid, uint64_t seq, const struct kw_sess *k, uint32_t first)
{
	uint32_t n = k->d.n - first;
	uint8_t *raw = malloc((size_t)n * STORE_BLOCK_MAX_KEY_BYTES + 1), *z = NULL;
	if (!raw)
		return -ENOMEM;
	size_t len = 0, zlen = 0;
	for (uint32_t i = first; i < k->d.n; i++)
		len += store_block_put(raw + len, &k->d.keys[i]);
	int rc = store_block_pack(raw, len, &z, &zlen);
	struct db_stmt *st = rc == 0 ? store_stmt_batch(s, ins_chunk) : NULL;
	if (rc == 0 && !st)
		rc = -EIO;
	if (rc == 0) {
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, first);
		db_bind_u64(st, 3, seq);
		db_bind_i64(st, 4, n);
		db_bind_blob(st, 5, z ? z : raw, z ? zlen : len);
		rc = db_run(st);
	}
	free(z);
	free(raw);
	return rc;
}

/* encode_once: the chunk met another writer's ids at its first id (its dictionary dropped). Not an
 * errno: -EEXIST is PostgreSQL's duplicate record sent ahead (store_ahead.c), passed on as it is. */
#define COLLIDED 2

/* store_keyids_encode once, or COLLIDED. */
static int encode_once(struct store *s, int64_t sid, uint64_t seq, const struct store_block_key *keys, size_t n,
		       uint8_t *out, size_t *len)
{
	uint32_t max = store_keyids_session_max();
	*len = 0;
	if (!max || !n)
		return 0;
	int err;
	struct kw_sess *k = sess_of(s, sid, &err);
	if (!k)
		return err; /* 0: no room for its dictionary, whole keys */
	if (k->off)
		return 0;
	/* the new keys counted first: past the cap the record keeps the key format, nothing added */
	size_t fresh = 0, at;
	for (size_t i = 0; i < n; i++)
		fresh += find(k, &keys[i], &at) == UINT32_MAX;
	if (fresh > max || k->d.n > max - fresh)
		return 0;
	uint32_t first = k->d.n;
	if (fresh) {
		size_t need = 0;
		if (k->d.n + fresh > k->d.cap) {
			size_t nc = k->d.cap ? k->d.cap : 256;
			while (nc < k->d.n + fresh)
				nc *= 2;
			need += (nc - k->d.cap) * sizeof(*k->d.keys);
		}
		if (2 * (k->d.n + fresh) > k->scap)
			need += 3 * k->scap * sizeof(*k->slots); /* the new slots beside the old, then twice */
		if (!make_room(s->keyw, k, need)) {
			s->keyw->st.fallbacks++;
			return 0; /* no room for it: this record as whole keys */
		}
		if (k->d.n + fresh > k->d.cap) {
			size_t nc = k->d.cap ? k->d.cap : 256;
			while (nc < k->d.n + fresh)
				nc *= 2;
			struct store_block_key *nk = realloc(k->d.keys, nc * sizeof(*nk));
			if (!nk)
				return -ENOMEM;
			k->d.keys = nk;
			k->d.cap = nc;
		}
		if (2 * (k->d.n + fresh) > k->scap && rehash(k, k->d.n + fresh) < 0)
			return -ENOMEM;
	}
	int64_t prev = -1;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = find(k, &keys[i], &at);
		if (id == UINT32_MAX) {
			id = k->d.n++;
			k->d.keys[id] = keys[i];
			k->d.keys[id].count = 0;
			k->d.keys[id].inc = 0;
			k->slots[at] = id + 1;
		}
		o += store_idblock_put(out + o, id, &prev, keys[i].count);
	}
	int rc = k->d.n > first ? put_chunk(s, sid, seq, k, first) : 0;
	if (rc < 0) { /* another writer's ids there (SQLite says so here, PostgreSQL at the commit): reloaded
		       * at the session's next record */
		struct store_keyw *w = s->keyw;
		for (size_t i = 0; i < w->n; i++)
			if (w->v[i] == k) {
				drop_at(w, i);
				break;
			}
		/* a collision (#40 w46c): the store's ids for the session now reach past first. SQLite only:
		 * there the failed INSERT is undone alone and the transaction goes on; PostgreSQL's batched
		 * INSERT fails later, and its transaction is then aborted whole. A defence only: on SQLite two
		 * real writers cannot reach it (BEGIN IMMEDIATE holds the write lock for the transaction, and
		 * the stored-end check at its first record of the session reloads a stale dictionary; r10
		 * F5, w46e); only rows put in through this connection's own transaction do */
		int64_t end = 0;
		if (db_engine(s->db) == DB_SQLITE && stored_end(s, sid, &end) == 0 && end > (int64_t)first)
			return COLLIDED;
		return rc;
	}
	*len = o;
	return 1;
}

int store_keyids_encode(struct store *s, int64_t sid, uint64_t seq, const struct store_block_key *keys, size_t n,
			uint8_t *out, size_t *len)
{
	int rc = encode_once(s, sid, seq, keys, n, out, len);
	if (rc != COLLIDED)
		return rc;
	/* another writer stored ids of the session since this one loaded or checked its dictionary (one
	 * without the check or the PostgreSQL session lock: an older build): the dictionary reloaded from the
	 * store, the record's keys looked up there and its new ones given the next ids, once (#40 w46c; was
	 * -EIO, the whole batch retried) */
	s->keyw->st.collisions++;
	log_warn("session %lld: another writer stored sample key ids while record %llu was written: the session's"
		 " keys reloaded from the store and the record's new keys given the next ids",
		 (long long)sid, (unsigned long long)seq);
	rc = encode_once(s, sid, seq, keys, n, out, len);
	return rc == COLLIDED ? -EIO : rc;
}

void store_keyids_forget(struct store *s, int64_t sid)
{
	struct store_keyw *w = s->keyw;
	for (size_t i = 0; w && i < w->n; i++)
		if (w->v[i]->sid == sid) {
			drop_at(w, i);
			return;
		}
}

void store_keyids_tx_end(struct store *s, bool committed)
{
	struct store_keyw *w = s->keyw;
	if (w)
		w->tx++;
	for (size_t i = 0; w && i < w->n;) {
		struct kw_sess *k = w->v[i];
		if (committed) {
			k->committed = k->sp = k->d.n;
			i++;
		} else {
			/* every session reloaded from the store at its next record: one loaded in this
			 * transaction may hold its rolled back ids (rollbacks are rare) */
			drop_at(w, i);
		}
	}
}

void store_keyids_savepoint(struct store *s)
{
	struct store_keyw *w = s->keyw;
	for (size_t i = 0; w && i < w->n; i++)
		w->v[i]->sp = w->v[i]->d.n;
}

void store_keyids_to_savepoint(struct store *s)
{
	struct store_keyw *w = s->keyw;
	for (size_t i = 0; w && i < w->n;) {
		if (truncate_to(w->v[i], w->v[i]->sp) < 0)
			drop_at(w, i);
		else
			i++;
	}
}

void store_keyids_stats(const struct store *s, struct store_keyids_stats *st)
{
	*st = s->keyw ? s->keyw->st : (struct store_keyids_stats){0};
	st->bytes = s->keyw ? writer_bytes(s->keyw) : 0;
}

void store_keyids_free(struct store *s)
{
	struct store_keyw *w = s->keyw;
	if (!w)
		return;
	while (w->n)
		drop_at(w, w->n - 1);
	free(w->refused);
	free(w->v);
	free(w);
	s->keyw = NULL;
}
