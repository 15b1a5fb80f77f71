/* The sessions' per-record counters (sessions.records, wire_bytes, last_seen) summed in the
 * collector while a transaction is open and written once per session at its commit (#40, w40m):
 * one UPDATE per session a transaction, where it was one per record (on PostgreSQL each made a new
 * version of the session's row, its Hello blob with it, a HOT chain walked by the next). Same
 * transaction, so the counters commit with the records or not at all. Internal to the store. */
#ifndef COLLECTOR_STORE_TALLY_H
#define COLLECTOR_STORE_TALLY_H

#include <stddef.h>
#include <stdint.h>

struct store;

/* A record of frame_bytes stored for session sid at time now (s). 0 or -ENOMEM. */
int store_tally_add(struct store *s, int64_t sid, uint64_t frame_bytes, int64_t now);
/* A record counted by store_tally_add was rolled back (a redo of the records sent ahead). */
void store_tally_sub(struct store *s, int64_t sid, uint64_t frame_bytes);
/* The counters' UPDATEs sent (pipelined on PostgreSQL), kept until store_tally_clear: a commit
 * that fails on a record sent ahead rolls them back with it, and the redo writes them again. */
int store_tally_write(struct store *s);
/* Written now for a reader on this handle in the open transaction: the records sent ahead settled
 * first (a later rollback to their savepoint would undo the UPDATEs), then written and cleared. */
int store_tally_flush(struct store *s);
/* The transaction ended: nothing pending (the sessions' row locks too). */
void store_tally_clear(struct store *s);
/* PostgreSQL (#40 w45h): session sid's row locked (FOR NO KEY UPDATE, what its counters' UPDATE
 * takes at the commit) before the transaction writes any of the session's rows, once a transaction:
 * every lock of a session's rows, its records ledger's and its key dictionary's, is then taken under
 * that one, in one order for every writer. Sent pipelined (no round trip). 0 or a negative errno;
 * SQLite (one writer at a time): nothing. */
int store_tally_lock(struct store *s, int64_t sid);
/* A rollback to a savepoint released the locks taken after it: taken again at the next record. */
void store_tally_unlocked(struct store *s);

#endif
