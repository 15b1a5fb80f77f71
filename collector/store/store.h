/* The collector's store: sessions, the exactly-once record ledger, interned
 * events, counter samples and every other record kind (store_kinds.c), with
 * their queries. This header is the whole API of the core; the kinds' query
 * headers are store_opencl.h, store_calib.h, store_trace.h.
 *
 * Two back ends behind one database layer (db.h): SQLite (a path; WAL) and
 * PostgreSQL (a postgresql:// URI; several collectors may share the
 * database: the ledger's primary key (session, seq) keeps records exactly
 * once, a duplicate from another collector changes nothing).
 *
 * Writes join one batch transaction that the first write begins and
 * store_commit() ends, so a caller can group many records into one COMMIT.
 * On PostgreSQL the writes are pipelined: a record costs one round trip (the
 * ledger's answer), and a failed row may be reported by the next call.
 * Functions return 0 (or a documented positive value) or a negative errno;
 * database failures are logged with the engine's message and returned as
 * -EIO (-ENOSPC disk full, -EBUSY locked, -ECONNRESET connection lost). */
#ifndef COLLECTOR_STORE_H
#define COLLECTOR_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"

#define STORE_SCHEMA_VERSION 2
#define STORE_SCHEMA_VERSION_STR "2"

/* store_open() flags */
#define STORE_SYNC_FULL 0x1u /* PRAGMA synchronous=FULL (default NORMAL) */
#define STORE_READ_ONLY 0x2u /* query only; the file must exist and be a store */
#define STORE_INIT 0x4u	     /* an existing 0-byte file may become a new store (else -ENODATA) */
/* Check the store before anything touches it (db_check): a damaged one is refused
 * with -EUCLEAN and one line saying how to recover it (nothing is written into it). */
#define STORE_CHECK_QUICK 0x8u /* SQLite quick_check, stopped after STORE_CHECK_QUICK_MS */
#define STORE_CHECK_FULL 0x10u /* SQLite integrity_check, however long it takes */
#define STORE_CHECK_QUICK_MS 5000u
/* QUICK only when a writer that is gone left the store open (store_writers.h: a crash, kill -9,
 * power loss) or the store predates that ledger; else nothing beyond what SQLite reads at open
 * (the header, the schema). The read commands' default: no whole-store scan per command. */
#define STORE_CHECK_AUTO 0x20u
/* A second connection of a process that has the store open for writing already (the listening
 * collector's background downsampling): not entered in the writers ledger (store_writers.h), whose
 * row is the first connection's; no check. */
#define STORE_SECOND 0x40u

struct store;

/* Open (and create or check the schema of) the store at path (":memory:"
 * works for tests). On failure *out is NULL and the reason is logged with the
 * path and what to do. PostgreSQL: schema DDL (migrations, record-kind tables)
 * runs only when the schema is not current, so a role with SELECT/INSERT/UPDATE
 * (and sequence USAGE) can run a collector once the owner migrated the database
 * (`collector migrate`); STORE_SYNC_FULL sets synchronous_commit = on. */
int store_open(const char *path, unsigned flags, struct store **out);
/* The same with the PostgreSQL I/O timeout (db_pg_opts.timeout_ms; 0: default) and a
 * descriptor (> 0) whose readability ends the connection attempt (a stop request). */
int store_open_timeout(const char *path, unsigned flags, unsigned timeout_ms, int intr_fd, struct store **out);

/* ------------------------------------------------ outages (issue 31)
 * For the collector's loop: waits on a PostgreSQL server end when one of these
 * descriptors is readable (a stop request); errors are then logged at debug
 * level (the loop reports an outage once) and a lost connection is re-made only
 * by store_reconnect_poll(). No-ops on SQLite. */
void store_set_loop_mode(struct store *s, int intr_fd0, int intr_fd1);
bool store_needs_reconnect(const struct store *s);
/* 1 connected, 0 in progress, negative errno: this attempt failed (store_last_error). */
int store_reconnect_poll(struct store *s);
const char *store_last_error(const struct store *s);
/* PostgreSQL: the most rows of query results the store's connection has held at once (db.h
 * db_pg_rows_held_peak); 0 on SQLite. */
size_t store_rows_held_peak(const struct store *s);
/* PostgreSQL: statements the store's connection has sent to run since it opened (prepares and
 * syncs not counted; a multi-row INSERT of batched rows is one, db_batch); 0 on SQLite. */
uint64_t store_statements_sent(const struct store *s);
/* Sessions' key dictionaries read whole through this store (store_keydict_load): for tests. */
uint64_t store_keydict_loads(const struct store *s);
/* ... and extended by the ids stored since they were read (store_keydict_extend): for tests. */
uint64_t store_keydict_extends(const struct store *s);
/* PostgreSQL: blobs the store's connection read as hex text (db_pg_text_blobs); 0 on SQLite. */
uint64_t store_text_blobs(const struct store *s);
/* PostgreSQL: the most bytes of batched rows kept unsent at once (at most 1 MiB or one row); 0 on SQLite. */
size_t store_batch_bytes_peak(const struct store *s);
/* The path, or the URI without its password. */
const char *store_name(const struct store *s);
/* A store error (negative errno from a store call) in words that name the
 * database, not the agent's connection ("database connection lost", ...). */
const char *store_strerror(int err);
/* What an ack means with this store, one line for the log (reads the
 * PostgreSQL session's synchronous_commit). -EIO if PostgreSQL does not
 * commit synchronously although sync full was asked for. */
int store_durability(struct store *s, char *buf, size_t len);
/* Rolls back an uncommitted batch. NULL is fine. */
void store_close(struct store *s);

/* Copy what can still be read of the damaged SQLite store at from into a new
 * store at to (which must not exist): every table, row by row where pages are
 * unreadable (store_salvage.c). 0 with the counts, or -errno (logged). */
struct store_salvage_stats {
	uint64_t rows;	       /* rows copied */
	size_t tables;	       /* tables copied */
	size_t damaged_tables; /* of which some pages could not be read */
	/* #40 w46c (store_salvage_keys.c): key-id chunks past a session's first lost one, deleted; id blocks
	 * that referred to lost ids, cut to their other keys or deleted where none was left; the samples of
	 * the keys cut; #40 w46e (review r10 F1): id blocks whose own data did not read (a frame that did not
	 * decompress, a malformed varint, an id past the stored ones), deleted whole (their samples counted
	 * in id_samples_dropped too) */
	uint64_t key_chunks_dropped, id_blocks_cut, id_blocks_dropped, id_samples_dropped, id_blocks_damaged;
};
int store_salvage(const char *from, const char *to, struct store_salvage_stats *out);
/* --check MODE: "auto", "full", "quick" or "off" as STORE_CHECK_* flags (0 for off);
 * -EINVAL for anything else. */
int store_check_flags(const char *mode, unsigned *flags);
/* The store reported damage since it was opened (corrupt pages, I/O errors:
 * db_damaged): the caller must stop writing and acking; what is committed
 * stays as it is, recover it as store_open's refusal says. */
bool store_damaged(const struct store *s);

/* A read transaction around a query's many reads (db_read_begin): 1 if one began (end it with
 * store_read_end), 0 if none was needed, or -errno. SQLite: one lock and one state of the store for all
 * the reads; PostgreSQL: one REPEATABLE READ READ ONLY snapshot (#40 w46b: without it each statement saw
 * the commits before it, so a block committed after the session's key dictionary was read referred to
 * ids past it). Nested calls share the outermost one's transaction (one snapshot per request: a page of
 * several queries, a command); it ends at the outermost store_read_end. A write (store_begin) on the
 * handle ends it first. Writers are not blocked; hold it for one request, not across requests (a long
 * snapshot holds back PostgreSQL's vacuum). */
int store_read_begin(struct store *s);
void store_read_end(struct store *s, int began);
/* Whether the reads now see one state of the store (a read transaction of store_read_begin is open). */
bool store_read_snapshot(const struct store *s);
/* PostgreSQL, in a read transaction: prefer an index's order to a sort for the statements run until it is
 * called again with false (the blocks of a range); elsewhere nothing. */
void store_read_index_order(struct store *s, bool on);
/* After a failed read inside the read transaction (a session left out of a query): the transaction
 * ended and a new one begun (PostgreSQL: an error leaves the transaction unable to run anything). */
void store_read_renew(struct store *s);
/* For tests: fn(arg) called each time a session's key dictionary has been read (store_keydict_load),
 * before the blocks that refer to it; NULL: none. */
void store_set_keydict_hook(struct store *s, void (*fn)(void *arg), void *arg);

/* Begin a batch explicitly (writes do it implicitly). 0 if one is already open. */
int store_begin(struct store *s);
/* Commit the open batch; 0 and nothing done if none is open. On failure the
 * batch is rolled back. */
int store_commit(struct store *s);
/* Abandon the open batch (no-op if none). */
void store_rollback(struct store *s);
bool store_in_tx(const struct store *s);
/* Records stored (not duplicates) in the open batch. */
uint64_t store_tx_records(const struct store *s);

/* Find or create the session (hello->agent_id, hello->boot_id), bump its
 * connect count and remember peer. *max_seq = highest seq stored for the
 * session (0 if none). *created tells whether the session is new (may be NULL). */
int store_session_open(struct store *s, const Prof__Hello *hello, const char *peer, int64_t *session_id,
		       uint64_t *max_seq, bool *created);

/* Look the session (agent_id, boot_id) up without writing anything: 1 with its id and
 * highest stored seq, 0 if there is none yet, or a negative errno. */
int store_session_find(struct store *s, const char *agent_id, uint64_t boot_id, int64_t *session_id,
		       uint64_t *max_seq);

/* Store one validated record (counters, heartbeat) of a session.
 * Returns 1 if stored, 0 if (session, seq) was already stored (duplicate,
 * nothing changed), -ERANGE if the decoded timestamps overflow 2^63 ns,
 * -EINVAL for a body the store does not take (hello, ack, error), or another
 * negative errno. Heartbeats with seq 0 are not ledger records: they only
 * update last_seen/spool_dropped (returns 1). frame_bytes counts toward the
 * session's wire bytes. After an error other than -ERANGE/-EINVAL the batch
 * is incomplete: store_rollback() it (store_session_open likewise). */
int store_put_record(struct store *s, int64_t session_id, const Prof__Envelope *env, size_t frame_bytes);
/* The same for a record whose seq is above every seq the caller knows stored for the session
 * (#40): on PostgreSQL it is sent without waiting for the ledger (no round trip per record) and
 * 1 is returned; if the seq proves already stored (another collector stored it meanwhile), the
 * transaction's records sent ahead are rolled back to a savepoint and stored again one by one
 * by store_put_record, when the pipeline is next read (at the latest by store_commit): each is
 * stored once; the 1 returned for one of them then over-counts (see store_ahead_redos). SQLite:
 * store_put_record. */
int store_put_record_ahead(struct store *s, int64_t session_id, const Prof__Envelope *env,
			   size_t frame_bytes);
/* Transactions redone because a record sent ahead was a duplicate, and the duplicates found. */
void store_ahead_redos(const struct store *s, uint64_t *redos, uint64_t *dups);
/* The duplicates the redos found among session_id's records since they were last taken (its
 * connection's counts: 1 was returned for each); taken, 0 after. */
uint64_t store_ahead_take_dups(struct store *s, int64_t session_id);
/* Those of sessions nobody took (their connections gone) forgotten: the list stays small. */
void store_ahead_forget_dups(struct store *s);

/* ---------------------------------------------------------------- queries
 * Rows are passed to a callback; strings are valid during the call only and
 * never NULL (empty when unknown). A callback returning non-zero stops the
 * iteration and its value is returned. */

struct store_session_row {
	int64_t id;
	const char *agent_id;
	uint64_t boot_id;
	const char *board, *kernel_release, *hostname, *machine, *agent_version, *features, *target, *peer;
	uint32_t schema_version, clock_id;
	uint64_t base_ns, realtime_ns;
	int64_t first_seen, last_seen; /* unix seconds */
	uint64_t connects, records, wire_bytes, spool_dropped;
	uint64_t samples;   /* counter_samples + cpu_samples */
	uint64_t counter_samples; /* counter_samples rows */
	uint64_t cpu_samples;     /* CPU samples (agent record), the sum of the aggregated counts */
	uint64_t last_t_ns; /* largest sample time (ns after base_ns), 0 if no samples */
	bool counts_unreadable; /* the sample counts above could not be read (a damaged store, --check off) */
};
typedef int (*store_session_cb)(const struct store_session_row *row, void *arg);

struct store_cpu_row {
	uint32_t cpu;
	const char *model;
	uint32_t implementer, part;
	uint64_t max_freq_khz;
};
typedef int (*store_cpu_cb)(const struct store_cpu_row *row, void *arg);

struct store_gpu_row {
	uint32_t idx;
	const char *platform, *name, *vendor, *version, *driver;
	uint32_t compute_units, max_clock_mhz, type;
	uint64_t global_mem_bytes;
};
typedef int (*store_gpu_cb)(const struct store_gpu_row *row, void *arg);

struct store_event_summary {
	uint32_t event_id;
	bool declared;	  /* false: used without a declaration, name is "event#N" */
	const char *name; /* declared name or "event#N" */
	const char *unit;
	uint32_t type;
	uint64_t config;
	uint64_t samples;
	uint64_t total; /* sum of the values, saturating at UINT64_MAX */
	uint64_t first_t_ns, last_t_ns;
};
typedef int (*store_event_cb)(const struct store_event_summary *ev, void *arg);

struct store_sample_row {
	uint64_t seq;
	uint64_t t_ns; /* ns after base_ns */
	uint32_t event_id;
	const char *name; /* declared name or "event#N" */
	uint64_t value;
	uint32_t running_pct;
};
typedef int (*store_sample_cb)(const struct store_sample_row *row, void *arg);

/* All sessions, by id. */
int store_list_sessions(struct store *s, store_session_cb cb, void *arg);
/* One session; -ENOENT if there is none with that id. */
int store_get_session(struct store *s, int64_t session_id, store_session_cb cb, void *arg);
/* The session's count of ledger records (cheap: one row); -ENOENT if there is no such session. */
int store_session_records(struct store *s, int64_t session_id, uint64_t *records);
/* The same, and which agent run the session is (its boot id: random per agent process, so a session
 * id SQLite gave again after a prune is told apart from the deleted session's); boot_id may be NULL. */
int store_session_records_of(struct store *s, int64_t session_id, uint64_t *records, uint64_t *boot_id);
/* Whether the store has this table (a store written by an older collector, opened read-only, may lack a
 * newer record kind's tables). */
bool store_has_table(struct store *s, const char *table);
/* Whether the store's table has this column (sample_blocks.samples: not in an older collector's store). */
bool store_has_column(struct store *s, const char *table, const char *column);
/* The session's last_seen (unix s); -ENOENT if there is no such session. */
int store_session_last_seen(struct store *s, int64_t session_id, int64_t *last_seen);
int store_list_cpus(struct store *s, int64_t session_id, store_cpu_cb cb, void *arg);
int store_list_gpus(struct store *s, int64_t session_id, store_gpu_cb cb, void *arg);
/* Per-event totals of a session, by event id. */
int store_event_summaries(struct store *s, int64_t session_id, store_event_cb cb, void *arg);
/* Every counter row of a session, by time then event id. */
int store_list_samples(struct store *s, int64_t session_id, store_sample_cb cb, void *arg);

#endif
