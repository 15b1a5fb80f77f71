/* Record kinds ClCommand and ClCommandBatch: kernel declarations into
 * cl_kernels, the commands of a record as one packed, compressed block into
 * cl_command_blocks (store_cl_block.h; split in parts only past
 * STORE_BLOCK_MAX_RAW raw bytes), indexed by (session, host time range).
 * Collectors before #41 stored a row per command in cl_commands (dependency
 * lists as packed little-endian u64 blobs): no longer written, still read
 * (store_opencl_read.c). */
#include "store_opencl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_blocks.h"
#include "store_cl_block.h"
#include "store_kinds.h"
#include "store_priv.h"

static const char cl_schema[] =
	"CREATE TABLE IF NOT EXISTS cl_kernels (session_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL,"
	" name TEXT NOT NULL, program_hash INTEGER, build_options TEXT,"
	" PRIMARY KEY(session_id, kernel_id)) WITHOUT ROWID;"
	/* t_first, t_last: the commands' first host_enqueue_ns and last host_complete_ns (ns after
	 * Hello.base_ns; not named t_ns: retention keeps a session's commands whole, as it did the rows) */
	"CREATE TABLE IF NOT EXISTS cl_command_blocks (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" part INTEGER NOT NULL, t_first INTEGER NOT NULL, t_last INTEGER NOT NULL, commands INTEGER NOT NULL,"
	" data BLOB, PRIMARY KEY(session_id, seq, part));"
	"CREATE INDEX IF NOT EXISTS cl_command_blocks_time ON cl_command_blocks(session_id, t_first, t_last);"
	"CREATE TABLE IF NOT EXISTS cl_kernel_models (session_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL,"
	" ops REAL, bytes REAL, PRIMARY KEY(session_id, kernel_id)) WITHOUT ROWID;";

static const char model_insert[] =
	"INSERT INTO cl_kernel_models (session_id, kernel_id, ops, bytes) VALUES (?1, ?2, ?3, ?4)"
	" ON CONFLICT (session_id, kernel_id) DO UPDATE SET ops = excluded.ops, bytes = excluded.bytes";

static const char kernel_insert[] =
	"INSERT INTO cl_kernels (session_id, kernel_id, name, program_hash, build_options)"
	" VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (session_id, kernel_id) DO UPDATE SET name = excluded.name,"
	" program_hash = excluded.program_hash, build_options = excluded.build_options";

static const char block_insert[] =
	"INSERT INTO cl_command_blocks (session_id, seq, part, t_first, t_last, commands, data)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT DO NOTHING";

static int check_command(const Prof__ClCommand *c)
{
	const uint64_t t[] = {c->queued_ns, c->submit_ns, c->start_ns, c->end_ns, c->host_enqueue_ns,
			      c->host_complete_ns, c->bytes, c->id, c->prev_in_queue, c->dropped_before};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i] > (uint64_t)INT64_MAX)
			return -ERANGE;
	return 0;
}

static int check_cl(const Prof__Envelope *env)
{
	return check_command(env->cl_command);
}

static int check_batch(const Prof__Envelope *env)
{
	for (size_t i = 0; i < env->cl_batch->n_commands; i++)
		if (check_command(env->cl_batch->commands[i]) < 0)
			return -ERANGE;
	return 0;
}

/* The kernel declarations a command carries. */
static int put_kernels(struct store *s, int64_t sid, const Prof__ClCommand *c)
{
	struct db_stmt *st = store_stmt(s, kernel_insert);
	if (!st)
		return -EIO;
	for (size_t i = 0; i < c->n_new_kernels; i++) {
		const Prof__ClKernelDesc *k = c->new_kernels[i];
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, k->id);
		db_bind_text(st, 3, k->name);
		db_bind_u64(st, 4, k->program_hash);
		db_bind_text(st, 5, k->build_options);
		int rc = db_run(st);
		if (rc < 0)
			return rc;
		if (k->model_ops > 0 || k->model_bytes > 0) {
			struct db_stmt *ms = store_stmt(s, model_insert);
			if (!ms)
				return -EIO;
			db_bind_i64(ms, 1, sid);
			db_bind_i64(ms, 2, k->id);
			db_bind_double(ms, 3, k->model_ops);
			db_bind_double(ms, 4, k->model_bytes);
			if ((rc = db_run(ms)) < 0)
				return rc;
		}
	}
	return 0;
}

/* c[0..n) as block `part` of record seq. */
static int put_block(struct store *s, int64_t sid, uint64_t seq, int part, Prof__ClCommand *const *c,
		     size_t n)
{
	uint8_t *data;
	size_t len;
	uint64_t t_first, t_last;
	int rc = store_cl_block_pack(c, n, &data, &len, &t_first, &t_last);
	if (rc < 0)
		return rc;
	struct db_stmt *st = store_stmt(s, block_insert);
	if (st) {
		db_bind_i64(st, 1, sid);
		db_bind_u64(st, 2, seq);
		db_bind_i64(st, 3, part);
		db_bind_u64(st, 4, t_first);
		db_bind_u64(st, 5, t_last);
		db_bind_i64(st, 6, (int64_t)n);
		db_bind_blob(st, 7, data, len);
		rc = db_run(st);
	} else {
		rc = -EIO;
	}
	free(data);
	return rc;
}

/* Raw bytes of a block's commands at most: the columns' tags and lengths (25 x 6) fit in the rest. */
#define BLOCK_RAW_MAX (STORE_BLOCK_MAX_RAW - 256)

/* The commands' declarations, then the commands as blocks of at most STORE_BLOCK_MAX_RAW raw
 * bytes (one block for any record the agent sends: a frame is far smaller). */
static int put_commands(struct store *s, int64_t sid, uint64_t seq, Prof__ClCommand *const *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = put_kernels(s, sid, c[i]);
		if (rc < 0)
			return rc;
	}
	int part = 0;
	for (size_t i = 0; i < n;) {
		size_t k = 0, raw = 0;
		while (i + k < n && (k == 0 || raw + store_cl_block_cmd_max(c[i + k]) <= BLOCK_RAW_MAX))
			raw += store_cl_block_cmd_max(c[i + k++]);
		int rc = put_block(s, sid, seq, part++, c + i, k);
		if (rc < 0)
			return rc;
		i += k;
	}
	return 0;
}

static int put_cl(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	return put_commands(s, sid, env->seq, &env->cl_command, 1);
}

static int put_batch(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	return put_commands(s, sid, env->seq, env->cl_batch->commands, env->cl_batch->n_commands);
}

const struct store_kind store_kind_cl_command = {
	.body_case = PROF__ENVELOPE__BODY_CL_COMMAND,
	.name = "cl_command",
	.schema_sql = cl_schema,
	.check = check_cl,
	.put = put_cl,
};

/* Its tables are the ClCommand kind's (created by it: the kinds' schemas all run at open). */
const struct store_kind store_kind_cl_batch = {
	.body_case = PROF__ENVELOPE__BODY_CL_BATCH,
	.name = "cl_batch",
	.schema_sql = NULL,
	.check = check_batch,
	.put = put_batch,
};
