/* Record kind "samples": CPU samples aggregated per interval (both back ends
 * of agent record), the mappings and call chains they reference, and the
 * per-task on/off-CPU times. Tables:
 *   sample_map_blocks(session_id, seq, n, data)  -- a record's mappings packed (store_map_blocks.h, #40 w40h)
 *   sample_mappings(session_id, map_id, pid, start, "end", pgoff, path, build_id)  -- older stores', and
 *     a record's too many for one block
 *   sample_stacks(session_id, stack_id, ips)  -- ips: packed little-endian uint64, innermost first
 *   sample_kernel_stacks(session_id, stack_id, ips)  -- the chain's kernel frames, where recorded
 *   task_times(session_id, seq, t_ns, pid, tid, on_cpu_ns, off_cpu_ns, switches)
 *   sample_intervals(session_id, seq, t_ns, interval_ns, backend, event_id, freq_hz, period, lost)
 *   sample_tasks(session_id, pid, tid, comm, thread)  -- process and thread names, interned per task
 *   sample_task_incs(session_id, pid, tid, incarnation, seq, first_map_id, comm, thread)  -- the names of
 *     a pid's later processes in the session (TaskName.incarnation > 0, pid reuse, w44a): each from
 *     the first record (seq) that declared it; an older store has none (every name is incarnation 0)
 *   sample_blocks(session_id, seq, t_ns, keys, data, samples, pid_min, pid_max, pid_bits, fmt)  -- the
 *     record's keys packed, zstd (store_blocks.h), and the sum of their counts; fmt 1: the keys as ids
 *     of the session's dictionary sample_key_ids (store_keyids.h, #40 w45a), NULL/0 whole keys: the only store of the
 *     samples (#40; one row per record, not per key). pid_min/pid_max/pid_bits: the range of its keys'
 *     pids and a bit per pid mod 64 (STORE_BLOCK_PID_BIT), indexed with the time so a --pid query
 *     passes over blocks without that pid unread; NULL in an older collector's blocks (read always). Stores of an older collector also hold cpu_samples(session_id, seq, t_ns,
 *     backend, event_id, pid, tid, ip, kip, stack_id, count), one row per key, read where a record has
 *     no block; it is no longer created or written, and their blocks' samples column is NULL.
 * t_ns is absolute (ns after Hello.base_ns): Samples.t_ns is not delta-encoded. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "store_blocks.h"
#include "store_keyids.h"
#include "store_kinds.h"
#include "store_map_blocks.h"
#include "validate_samples.h"

static const char samples_schema[] =
	/* the (session, pid) index of older stores' cpu_samples: no query used it */
	"DROP INDEX IF EXISTS cpu_samples_session;"
	"CREATE TABLE IF NOT EXISTS sample_blocks (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" t_ns INTEGER NOT NULL, keys INTEGER, data BLOB, samples INTEGER, pid_min INTEGER, pid_max INTEGER,"
	" pid_bits INTEGER, fmt INTEGER, PRIMARY KEY(session_id, seq));"
	/* each session's keys once, the id blocks' dictionary (store_keyids.h, #40 w45a) */
	"CREATE TABLE IF NOT EXISTS sample_key_ids (session_id INTEGER NOT NULL, first_id INTEGER NOT NULL,"
	" seq INTEGER, n INTEGER, data BLOB, PRIMARY KEY(session_id, first_id));"
	/* the time and the pids of each block in the index (an older store's columns are added before
	 * this runs, store_schema.c): a --pid filter is checked there, the block's row not read */
	"CREATE INDEX IF NOT EXISTS sample_blocks_keys ON sample_blocks(session_id, t_ns, pid_min, pid_max,"
	" pid_bits);"
	"DROP INDEX IF EXISTS sample_blocks_time;"
	"CREATE TABLE IF NOT EXISTS sample_tasks (session_id INTEGER NOT NULL, pid INTEGER NOT NULL,"
	" tid INTEGER NOT NULL, comm TEXT, thread TEXT, PRIMARY KEY(session_id, pid, tid));"
	"CREATE TABLE IF NOT EXISTS sample_task_incs (session_id INTEGER NOT NULL, pid INTEGER NOT NULL,"
	" tid INTEGER NOT NULL, incarnation INTEGER NOT NULL, seq INTEGER NOT NULL, first_map_id INTEGER,"
	" comm TEXT, thread TEXT, PRIMARY KEY(session_id, pid, tid, incarnation));"
	"CREATE TABLE IF NOT EXISTS sample_mappings (session_id INTEGER NOT NULL, map_id INTEGER NOT NULL,"
	" pid INTEGER, start INTEGER, \"end\" INTEGER, pgoff INTEGER, path TEXT, build_id BLOB,"
	" PRIMARY KEY(session_id, map_id));"
	"CREATE TABLE IF NOT EXISTS sample_map_blocks (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" n INTEGER, data BLOB, PRIMARY KEY(session_id, seq));"
	"CREATE TABLE IF NOT EXISTS sample_stacks (session_id INTEGER NOT NULL, stack_id INTEGER NOT NULL,"
	" ips BLOB, PRIMARY KEY(session_id, stack_id));"
	"CREATE TABLE IF NOT EXISTS sample_kernel_stacks (session_id INTEGER NOT NULL, stack_id INTEGER NOT NULL,"
	" ips BLOB, PRIMARY KEY(session_id, stack_id));"
	"CREATE TABLE IF NOT EXISTS task_times (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" t_ns INTEGER, pid INTEGER, tid INTEGER, on_cpu_ns INTEGER, off_cpu_ns INTEGER, switches INTEGER);"
	"CREATE INDEX IF NOT EXISTS task_times_time ON task_times(session_id, t_ns);"
	"CREATE TABLE IF NOT EXISTS sample_intervals (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" t_ns INTEGER, interval_ns INTEGER, backend INTEGER, event_id INTEGER, freq_hz INTEGER,"
	" period INTEGER, lost INTEGER, keys INTEGER, PRIMARY KEY(session_id, seq));";

static const char ins_mapping[] = "INSERT INTO sample_mappings (session_id, map_id, pid, start, \"end\", pgoff,"
				  " path, build_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING";
static const char ins_stack[] = "INSERT INTO sample_stacks (session_id, stack_id, ips) VALUES (?1, ?2, ?3)"
				" ON CONFLICT DO NOTHING";
static const char ins_kstack[] = "INSERT INTO sample_kernel_stacks (session_id, stack_id, ips) VALUES (?1, ?2, ?3)"
				 " ON CONFLICT DO NOTHING";
static const char ins_task[] = "INSERT INTO task_times (session_id, seq, t_ns, pid, tid, on_cpu_ns, off_cpu_ns,"
			       " switches) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
static const char ins_interval[] = "INSERT INTO sample_intervals (session_id, seq, t_ns, interval_ns, backend,"
				   " event_id, freq_hz, period, lost, keys) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
				   " ON CONFLICT DO NOTHING";
/* a record sent ahead (store_put_ahead): no row of its (session, seq) can be there but where the ledger
 * lacks one it should have; such a row fails the record, redone exactly with the statements above */
static const char ins_interval_ahead[] = "INSERT INTO sample_intervals (session_id, seq, t_ns, interval_ns, backend,"
					 " event_id, freq_hz, period, lost, keys) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8,"
					 " ?9, ?10)";
static const char ins_block_ahead[] = "INSERT INTO sample_blocks (session_id, seq, t_ns, keys, data, samples,"
				      " pid_min, pid_max, pid_bits, fmt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";
static const char ins_task_name[] = "INSERT INTO sample_tasks (session_id, pid, tid, comm, thread)"
				    " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (session_id, pid, tid)"
				    " DO UPDATE SET comm = excluded.comm, thread = excluded.thread";
/* A later process of the pid: its first declaration's seq kept (a spool's redeclaration comes later),
 * its names the latest (a rename, an exec). */
static const char ins_task_inc[] =
    "INSERT INTO sample_task_incs (session_id, pid, tid, incarnation, seq, first_map_id, comm, thread)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (session_id, pid, tid, incarnation)"
    " DO UPDATE SET comm = excluded.comm, thread = excluded.thread,"
    " seq = CASE WHEN excluded.seq < sample_task_incs.seq THEN excluded.seq ELSE sample_task_incs.seq END";
static const char ins_block[] = "INSERT INTO sample_blocks (session_id, seq, t_ns, keys, data, samples, pid_min,"
				" pid_max, pid_bits, fmt) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
				" ON CONFLICT DO NOTHING";

/* The record's keys as one packed row, zstd-compressed where that is smaller (store_blocks.h): as
 * (key id, count) pairs of the session's dictionary (store_keyids.h, fmt 1) where the writer keeps
 * one, else the whole keys (fmt 0). */
static int put_block(struct store *s, int64_t sid, uint64_t seq, const Prof__Samples *sm)
{
	size_t n = sm->n_count, len = 0;
	uint64_t total = 0; /* each count within the record limit, as the readers take it */
	int32_t pmin = INT32_MAX, pmax = INT32_MIN;
	uint64_t pbits = 0;
	uint8_t *buf = malloc(n * STORE_BLOCK_MAX_KEY_BYTES + 1);
	struct store_block_key *keys = malloc(n * sizeof(*keys) + 1);
	if (!buf || !keys) {
		free(buf);
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct store_block_key k = {.pid = sm->pid[i], .tid = sm->tid[i], .ip = sm->ip[i],
					    .kip = sm->n_kip ? sm->kip[i] : 0, .stack_id = sm->stack_id[i],
					    .count = sm->count[i]};
		keys[i] = k;
		pmin = k.pid < pmin ? k.pid : pmin;
		pmax = k.pid > pmax ? k.pid : pmax;
		pbits |= STORE_BLOCK_PID_BIT(k.pid);
		total += k.count > VALIDATE_MAX_SAMPLE_COUNT ? VALIDATE_MAX_SAMPLE_COUNT : k.count;
	}
	int fmt = store_keyids_encode(s, sid, seq, keys, n, buf, &len);
	for (size_t i = 0; fmt == 0 && i < n; i++)
		len += store_block_put(buf + len, &keys[i]);
	free(keys);
	uint8_t *z = NULL;
	size_t zlen;
	int rc = fmt < 0 ? fmt : store_block_pack(buf, len, &z, &zlen);
	struct db_stmt *st = rc == 0 ? store_stmt_batch(s, store_put_ahead(s) ? ins_block_ahead : ins_block) : NULL;
	if (st) {
		db_bind_i64(st, 1, sid);
		db_bind_u64(st, 2, seq);
		db_bind_u64(st, 3, sm->t_ns);
		db_bind_i64(st, 4, (int64_t)n);
		db_bind_blob(st, 5, z ? z : buf, z ? zlen : len);
		db_bind_u64(st, 6, total);
		db_bind_i64(st, 7, pmin);
		db_bind_i64(st, 8, pmax);
		db_bind_i64(st, 9, (int64_t)pbits);
		db_bind_i64(st, 10, fmt);
		rc = db_run(st);
	} else if (rc == 0) {
		rc = -EIO;
	}
	free(z);
	free(buf);
	return rc;
}

static int check_samples(const Prof__Envelope *env)
{
	return env->samples->t_ns > (uint64_t)INT64_MAX ? -ERANGE : 0;
}

/* The record's mappings as one packed block (store_map_blocks.h); as rows where too many for one. */
static int put_mappings(struct store *s, int64_t sid, uint64_t seq, const Prof__Samples *sm)
{
	if (!sm->n_new_mappings)
		return 0;
	int rc = store_map_block_put(s, sid, seq, sm);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	for (size_t i = 0; rc == 0 && i < sm->n_new_mappings; i++) {
		const Prof__Mapping *m = sm->new_mappings[i];
		struct db_stmt *st = store_stmt(s, ins_mapping);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, m->id);
		db_bind_i64(st, 3, m->pid);
		db_bind_u64(st, 4, m->start);
		db_bind_u64(st, 5, m->end);
		db_bind_u64(st, 6, m->pgoff);
		db_bind_text(st, 7, m->path);
		db_bind_blob(st, 8, m->build_id.data, m->build_id.len);
		rc = db_run(st);
	}
	return rc;
}

/* One chain as packed little-endian uint64 into the table of sql. */
static int put_chain(struct store *s, const char *sql, int64_t sid, uint32_t id, const uint64_t *ips, size_t n)
{
	uint8_t *blob = malloc(n * 8 + 1);
	if (!blob)
		return -ENOMEM;
	for (size_t j = 0; j < n; j++)
		for (int b = 0; b < 8; b++)
			blob[j * 8 + b] = (uint8_t)(ips[j] >> (8 * b));
	struct db_stmt *st = store_stmt(s, sql);
	int rc = -EIO;
	if (st) {
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, id);
		db_bind_blob(st, 3, blob, n * 8);
		rc = db_run(st);
	}
	free(blob);
	return rc;
}

static int put_stacks(struct store *s, int64_t sid, const Prof__Samples *sm)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sm->n_new_stacks; i++) {
		const Prof__Stack *k = sm->new_stacks[i];
		rc = put_chain(s, ins_stack, sid, k->id, k->ips, k->n_ips);
		if (rc == 0 && k->n_kernel_ips)
			rc = put_chain(s, ins_kstack, sid, k->id, k->kernel_ips, k->n_kernel_ips);
	}
	return rc;
}

/* Names of the tasks (latest wins: a task that exec'd is declared again with its new name); a pid's
 * later process (incarnation > 0) in sample_task_incs, from the record that declared it. */
static int put_task_names(struct store *s, int64_t sid, uint64_t seq, const Prof__Samples *sm)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sm->n_new_tasks; i++) {
		const Prof__TaskName *t = sm->new_tasks[i];
		bool inc = t->incarnation > 0;
		struct db_stmt *st = store_stmt(s, inc ? ins_task_inc : ins_task_name);
		if (!st)
			return -EIO;
		int a = 1;
		db_bind_i64(st, a++, sid);
		db_bind_i64(st, a++, t->pid);
		db_bind_i64(st, a++, t->tid);
		if (inc) {
			db_bind_i64(st, a++, t->incarnation);
			db_bind_i64(st, a++, (int64_t)seq);
			db_bind_i64(st, a++, t->first_map_id);
		}
		db_bind_text(st, a++, t->comm);
		db_bind_text(st, a, t->thread);
		rc = db_run(st);
	}
	return rc;
}

static int put_samples(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__Samples *sm = env->samples;
	int rc = store_put_event_descs(s, sid, sm->new_events, sm->n_new_events);
	if (rc == 0)
		rc = put_mappings(s, sid, env->seq, sm);
	if (rc == 0)
		rc = put_stacks(s, sid, sm);
	if (rc == 0)
		rc = put_task_names(s, sid, env->seq, sm);
	if (rc < 0)
		return rc;
	struct db_stmt *st = store_stmt_batch(s, store_put_ahead(s) ? ins_interval_ahead : ins_interval);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_u64(st, 2, env->seq);
	db_bind_u64(st, 3, sm->t_ns);
	db_bind_u64(st, 4, sm->interval_ns);
	db_bind_i64(st, 5, sm->backend);
	db_bind_i64(st, 6, sm->event_id);
	db_bind_u64(st, 7, sm->freq_hz);
	db_bind_u64(st, 8, sm->period);
	db_bind_u64(st, 9, sm->lost);
	db_bind_i64(st, 10, (int64_t)sm->n_count);
	rc = db_run(st);
	if (rc == 0 && sm->n_count)
		rc = put_block(s, sid, env->seq, sm);
	for (size_t i = 0; rc == 0 && i < sm->n_task_times; i++) {
		const Prof__TaskTime *t = sm->task_times[i];
		st = store_stmt(s, ins_task);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_u64(st, 2, env->seq);
		db_bind_u64(st, 3, sm->t_ns);
		db_bind_i64(st, 4, t->pid);
		db_bind_i64(st, 5, t->tid);
		db_bind_u64(st, 6, t->on_cpu_ns);
		db_bind_u64(st, 7, t->off_cpu_ns);
		db_bind_u64(st, 8, t->switches);
		rc = db_run(st);
	}
	return rc;
}

const struct store_kind store_kind_samples = {
	.body_case = PROF__ENVELOPE__BODY_SAMPLES,
	.name = "samples",
	.schema_sql = samples_schema,
	.check = check_samples,
	.put = put_samples,
};
