/* Records sent ahead on PostgreSQL (store_ahead.h, #40): the savepoint, the kept
 * records and the redo. */
#include "store_ahead.h"

#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "store.h"
#include "store_keyids.h"
#include "store_priv.h"
#include "store_tally.h"

struct store_ahead_rec {
	int64_t sid;
	size_t frame_bytes, len;
	uint8_t *buf; /* the envelope, packed */
};

struct store_ahead_dups {
	int64_t sid;
	uint64_t dups;
};

static const char savepoint[] = "SAVEPOINT prof_ahead";

int store_ahead_begin(struct store *s)
{
	/* The pipeline was read without an error since the last record sent ahead: those records are
	 * stored, and statements sent since (an exact record's rows, a session's) must not be rolled
	 * back with a later duplicate: a new savepoint here, the kept records dropped. */
	if (s->ahead_sp && db_pg_syncs(s->db) != s->ahead_mark)
		store_ahead_clear(s);
	if (s->ahead_sp)
		return 0;
	if (s->ahead_sps >= STORE_AHEAD_SAVEPOINTS)
		return 1;
	int rc = db_send(s->db, savepoint, "savepoint before records sent ahead");
	if (rc < 0)
		return rc;
	s->ahead_sp = true;
	s->ahead_sps++;
	store_keyids_savepoint(s); /* the ids added after it go with a rollback to it */
	s->ahead_base = s->tx_records;
	s->ahead_mark = db_pg_syncs(s->db);
	return 0;
}

static void free_recs(struct store_ahead_rec *recs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(recs[i].buf);
	free(recs);
}

void store_ahead_clear(struct store *s)
{
	free_recs(s->ahead, s->nahead);
	s->ahead = NULL;
	s->nahead = s->aheadcap = s->ahead_bytes = 0;
	s->ahead_sp = false;
}

int store_ahead_settle(struct store *s)
{
	int rc = db_sync(s->db);
	if (rc == -EEXIST)
		return store_ahead_redo(s);
	if (rc == 0)
		store_ahead_clear(s);
	return rc;
}

int store_ahead_keep(struct store *s, int64_t sid, const Prof__Envelope *env, size_t frame_bytes)
{
	if (s->nahead == s->aheadcap) {
		size_t nc = s->aheadcap ? s->aheadcap * 2 : 64;
		struct store_ahead_rec *n = realloc(s->ahead, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->ahead = n;
		s->aheadcap = nc;
	}
	size_t len = prof__envelope__get_packed_size(env);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	prof__envelope__pack(env, buf);
	s->ahead[s->nahead++] =
	    (struct store_ahead_rec){.sid = sid, .frame_bytes = frame_bytes, .len = len, .buf = buf};
	s->ahead_bytes += len;
	s->ahead_mark = db_pg_syncs(s->db);
	/* past the bound: settled now, this record with them (redone with them if one was a duplicate) */
	return s->ahead_bytes > STORE_AHEAD_BYTES ? store_ahead_settle(s) : 0;
}

/* One more redone duplicate of session sid for its connection's counts; without memory for
 * it, only the store's total (store_ahead_redos) has it. */
static void add_dup(struct store *s, int64_t sid)
{
	for (size_t i = 0; i < s->nredo_dups; i++)
		if (s->redo_dups[i].sid == sid) {
			s->redo_dups[i].dups++;
			return;
		}
	if (s->nredo_dups == s->capredo_dups) {
		size_t nc = s->capredo_dups ? s->capredo_dups * 2 : 8;
		struct store_ahead_dups *n = realloc(s->redo_dups, nc * sizeof(*n));
		if (!n)
			return;
		s->redo_dups = n;
		s->capredo_dups = nc;
	}
	s->redo_dups[s->nredo_dups++] = (struct store_ahead_dups){sid, 1};
}

uint64_t store_ahead_take_dups(struct store *s, int64_t sid)
{
	for (size_t i = 0; i < s->nredo_dups; i++)
		if (s->redo_dups[i].sid == sid) {
			uint64_t d = s->redo_dups[i].dups;
			s->redo_dups[i] = s->redo_dups[--s->nredo_dups];
			return d;
		}
	return 0;
}

void store_ahead_forget_dups(struct store *s)
{
	free(s->redo_dups);
	s->redo_dups = NULL;
	s->nredo_dups = s->capredo_dups = 0;
}

int store_ahead_redo(struct store *s)
{
	struct store_ahead_rec *recs = s->ahead; /* taken: the redo stores them exactly */
	size_t n = s->nahead;
	s->ahead = NULL;
	s->nahead = 0;
	store_ahead_clear(s);
	int rc = db_exec(s->db, "ROLLBACK TO SAVEPOINT prof_ahead", "roll back the records sent ahead");
	if (rc == 0) {
		s->tx_records = s->ahead_base;
		store_keyids_to_savepoint(s);
		store_tally_unlocked(s); /* those taken after it released: taken again by the redo */
	}
	for (size_t i = 0; rc == 0 && i < n; i++) /* their counts too: the redo adds those it stores */
		store_tally_sub(s, recs[i].sid, recs[i].frame_bytes);
	size_t stored = 0, dups = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		Prof__Envelope *env = prof__envelope__unpack(NULL, recs[i].len, recs[i].buf);
		if (!env) {
			rc = -ENOMEM;
			break;
		}
		int prc = store_put_record(s, recs[i].sid, env, recs[i].frame_bytes);
		prof__envelope__free_unpacked(env, NULL);
		if (prc < 0)
			rc = prc;
		stored += prc == 1;
		dups += prc == 0;
		if (prc == 0)
			add_dup(s, recs[i].sid);
	}
	free_recs(recs, n);
	s->ahead_redos++;
	s->ahead_redo_dups += dups;
	if (rc == 0 && dups == 0) /* not a ledger duplicate: a stray interval or block row (#40 w40q) */
		log_warn("store %s: a record sent ahead met an interval or sample block of its (session, seq)"
			 " stored without its ledger row (a damaged or salvaged store): the %zu records sent"
			 " ahead redone one by one, all %zu stored, each such row already there kept (that"
			 " record's own interval or samples not stored)",
			 db_name(s->db), n, stored);
	else if (rc == 0)
		log_info("store %s: a record sent ahead was already stored (by another collector): the %zu "
			 "records sent ahead redone one by one, %zu stored, %zu duplicates",
			 db_name(s->db), n, stored, dups);
	return rc;
}

void store_ahead_redos(const struct store *s, uint64_t *redos, uint64_t *dups)
{
	*redos = s->ahead_redos;
	*dups = s->ahead_redo_dups;
}
