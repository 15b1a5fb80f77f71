/* Records sent ahead on PostgreSQL (#40): store_put_record_ahead() writes a record
 * whose seq is above every seq its caller knows stored without waiting for the
 * ledger's verdict. Its `records` insert has no ON CONFLICT: a duplicate (another
 * collector stored the seq meanwhile) fails the transaction when the pipeline is
 * read (at the latest at commit), and the store then rolls back to the savepoint
 * sent before the first such record and redoes each of them on the exact path
 * (store_put_record: one round trip each), so every record is stored once. The
 * records since the savepoint are kept (packed) for that, at most
 * STORE_AHEAD_BYTES: past it they are settled (one round trip) and dropped. The savepoint
 * covers only records sent ahead: a statement that reads the pipeline without an error
 * (an exact record's row count, a session's lookup) settles them, and the next record sent
 * ahead opens a new savepoint after it; a write that does not read it (a heartbeat) settles
 * them first. So a rollback to the savepoint undoes only records kept for the redo and the
 * statement that found the duplicate (run again after the redo).
 * Internal to the store (store.c). */
#ifndef COLLECTOR_STORE_AHEAD_H
#define COLLECTOR_STORE_AHEAD_H

#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"

struct store;

#define STORE_AHEAD_BYTES (16u << 20)
/* Savepoints per transaction at most: each that writes takes a subtransaction id, and past 64 of
 * them in one transaction PostgreSQL's snapshots overflow to pg_subtrans (slower for every
 * reader); a transaction that has used these sends its further records exactly. */
#define STORE_AHEAD_SAVEPOINTS 32

/* Before a record is sent ahead: the savepoint, if none is open (pipelined). 1: no savepoint
 * left in this transaction (STORE_AHEAD_SAVEPOINTS): store the record exactly. */
int store_ahead_begin(struct store *s);
/* After its statements were sent: kept for a redo (packed), or settled past the bound. */
int store_ahead_keep(struct store *s, int64_t sid, const Prof__Envelope *env, size_t frame_bytes);
/* A duplicate was reported (-EEXIST): roll back to the savepoint and store the kept records
 * again one by one, exactly. 0 or a negative errno (the transaction must then be rolled back). */
int store_ahead_redo(struct store *s);
/* Wait for the records sent ahead (a duplicate among them is redone now); the next one sent
 * ahead opens a new savepoint. For a write that does not read the pipeline itself (a heartbeat):
 * a later rollback to the savepoint would undo it. */
int store_ahead_settle(struct store *s);
/* The transaction ended (commit, rollback): the kept records dropped. */
void store_ahead_clear(struct store *s);

#endif
