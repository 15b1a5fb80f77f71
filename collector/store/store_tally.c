/* The sessions' counters summed per transaction (store_tally.h, #40 w40m). */
#include "store_tally.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"
#include "store_ahead.h"
#include "store_priv.h"

struct store_tally {
	int64_t sid, last_seen;
	uint64_t records, bytes;
};

/* last_seen never goes back (#40 w40q): a heartbeat of the same transaction, or another
 * collector, may have written a later time */
static const char session_records_pg[] =
    "UPDATE sessions SET records = records + ?1, wire_bytes = wire_bytes + ?2,"
    " last_seen = GREATEST(COALESCE(last_seen, ?3), ?3) WHERE id = ?4";
static const char session_records_sqlite[] =
    "UPDATE sessions SET records = records + ?1, wire_bytes = wire_bytes + ?2,"
    " last_seen = MAX(COALESCE(last_seen, ?3), ?3) WHERE id = ?4";

static struct store_tally *find(struct store *s, int64_t sid)
{
	for (size_t i = 0; i < s->ntally; i++)
		if (s->tally[i].sid == sid)
			return &s->tally[i];
	return NULL;
}

int store_tally_add(struct store *s, int64_t sid, uint64_t frame_bytes, int64_t now)
{
	struct store_tally *t = find(s, sid);
	if (!t) {
		if (s->ntally == s->tallycap) {
			size_t nc = s->tallycap ? s->tallycap * 2 : 8;
			struct store_tally *n = realloc(s->tally, nc * sizeof(*n));
			if (!n)
				return -ENOMEM;
			s->tally = n;
			s->tallycap = nc;
		}
		t = &s->tally[s->ntally++];
		*t = (struct store_tally){.sid = sid};
	}
	t->records++;
	t->bytes += frame_bytes;
	t->last_seen = now > t->last_seen ? now : t->last_seen;
	return 0;
}

void store_tally_sub(struct store *s, int64_t sid, uint64_t frame_bytes)
{
	struct store_tally *t = find(s, sid);
	if (t && t->records) {
		t->records--;
		t->bytes -= frame_bytes < t->bytes ? frame_bytes : t->bytes;
	}
}

static int by_sid(const void *a, const void *b)
{
	int64_t x = ((const struct store_tally *)a)->sid, y = ((const struct store_tally *)b)->sid;
	return (x > y) - (x < y);
}

int store_tally_write(struct store *s)
{
	/* in session order: two collectors committing the same sessions take their rows' locks in one
	 * order (no deadlock between them) */
	if (!s->ntally)
		return 0;
	qsort(s->tally, s->ntally, sizeof(*s->tally), by_sid);
	for (size_t i = 0; i < s->ntally; i++) {
		const struct store_tally *t = &s->tally[i];
		if (!t->records)
			continue;
		struct db_stmt *st =
		    store_stmt(s, db_engine(s->db) == DB_PG ? session_records_pg : session_records_sqlite);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, (int64_t)t->records);
		db_bind_i64(st, 2, (int64_t)t->bytes);
		db_bind_i64(st, 3, t->last_seen);
		db_bind_i64(st, 4, t->sid);
		int rc = db_run(st);
		int64_t n = rc < 0 ? rc : db_changes(s->db);
		if (n < 0)
			return (int)n;
		if (n == 0) { /* the session pruned under this transaction: its records not kept (#40 w40q) */
			log_error("store %s: session %lld is gone (pruned): its %llu records of this transaction"
				  " are not stored",
				  db_name(s->db), (long long)t->sid, (unsigned long long)t->records);
			return -ENOENT;
		}
	}
	return 0;
}

int store_tally_flush(struct store *s)
{
	if (!s->in_tx || !s->ntally)
		return 0;
	int rc = s->ahead_sp ? store_ahead_settle(s) : 0;
	if (rc == 0)
		rc = store_tally_write(s);
	if (rc == 0)
		s->ntally = 0; /* the sessions' row locks still held */
	return rc;
}

void store_tally_clear(struct store *s)
{
	s->ntally = 0;
	s->nlocked = 0;
}

/* Why two collectors writing one session cannot deadlock on its rows (#40 w45h, review r7 #5): the
 * records ledger's rows are flushed first (w40q), so on the ledger alone they meet in seq order; but
 * a record that introduces keys also inserts the session's dictionary chunk, keyed (session, the
 * committed ids' end), the same key for any two writers whatever their seqs: A holding chunk X and
 * waiting for B's ledger seq k while B holds seq k and waits for chunk X. Taking the session's row
 * lock first, before any of its ledger rows or chunks in the transaction, makes the second writer
 * wait there holding nothing of that session; once the first commits, the second's dictionary check
 * (its first record of the session in the transaction, a read after the lock) sees the committed ids
 * and continues them, so its chunk meets no other's. The lock is the one the commit's counters
 * UPDATE (store_tally_write) takes anyway and prune's FOR UPDATE waits for: no new kind of lock. A
 * transaction writing two sessions another writes in the opposite order can still deadlock (as on
 * the ledger's rows before): PostgreSQL detects it (40P01, -EBUSY) and the batch is retried. */
int store_tally_lock(struct store *s, int64_t sid)
{
	if (db_engine(s->db) != DB_PG)
		return 0;
	for (size_t i = 0; i < s->nlocked; i++)
		if (s->locked[i] == sid)
			return 0;
	if (s->nlocked == s->lockedcap) {
		size_t nc = s->lockedcap ? s->lockedcap * 2 : 8;
		int64_t *n = realloc(s->locked, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->locked = n;
		s->lockedcap = nc;
	}
	char sql[96];
	snprintf(sql, sizeof(sql), "SELECT 1 FROM sessions WHERE id = %lld FOR NO KEY UPDATE", (long long)sid);
	int rc = db_send(s->db, sql, "lock the session's row");
	if (rc == 0)
		s->locked[s->nlocked++] = sid;
	return rc;
}

void store_tally_unlocked(struct store *s)
{
	s->nlocked = 0;
}
