/* Record kinds ClCommand and ClCommandBatch: kernel declarations into
 * cl_kernels, one row per command into cl_commands (dependency lists as
 * packed little-endian u64 blobs; the commands of a batch share its seq,
 * and go in through multi-row INSERTs), and the queries over them. */
#include "store_opencl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_kinds.h"
#include "store_rows.h"
#include "store_priv.h"

static const char cl_schema[] =
	"CREATE TABLE IF NOT EXISTS cl_kernels (session_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL,"
	" name TEXT NOT NULL, program_hash INTEGER, build_options TEXT,"
	" PRIMARY KEY(session_id, kernel_id)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS cl_commands (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" pid INTEGER, cmd_id INTEGER NOT NULL, queue_id INTEGER, type INTEGER, kernel_id INTEGER,"
	" work_dim INTEGER, gx INTEGER, gy INTEGER, gz INTEGER, lx INTEGER, ly INTEGER, lz INTEGER,"
	" ox INTEGER, oy INTEGER, oz INTEGER, queued_ns INTEGER, submit_ns INTEGER, start_ns INTEGER,"
	" end_ns INTEGER, host_enqueue_ns INTEGER, host_complete_ns INTEGER, bytes INTEGER,"
	" prev_in_queue INTEGER, wait_ids BLOB, mem_read BLOB, mem_written BLOB, dropped_before INTEGER,"
	" forced_profiling INTEGER, layer_event INTEGER);"
	"CREATE INDEX IF NOT EXISTS cl_commands_session ON cl_commands(session_id, pid, cmd_id);"
	"CREATE TABLE IF NOT EXISTS cl_kernel_models (session_id INTEGER NOT NULL, kernel_id INTEGER NOT NULL,"
	" ops REAL, bytes REAL, PRIMARY KEY(session_id, kernel_id)) WITHOUT ROWID;";

static const char model_insert[] =
	"INSERT INTO cl_kernel_models (session_id, kernel_id, ops, bytes) VALUES (?1, ?2, ?3, ?4)"
	" ON CONFLICT (session_id, kernel_id) DO UPDATE SET ops = excluded.ops, bytes = excluded.bytes";

static const char kernel_insert[] =
	"INSERT INTO cl_kernels (session_id, kernel_id, name, program_hash, build_options)"
	" VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (session_id, kernel_id) DO UPDATE SET name = excluded.name,"
	" program_hash = excluded.program_hash, build_options = excluded.build_options";

static const char command_rows[] =
	"INSERT INTO cl_commands (session_id, seq, pid, cmd_id, queue_id, type, kernel_id, work_dim,"
	" gx, gy, gz, lx, ly, lz, ox, oy, oz, queued_ns, submit_ns, start_ns, end_ns, host_enqueue_ns,"
	" host_complete_ns, bytes, prev_in_queue, wait_ids, mem_read, mem_written, dropped_before,"
	" forced_profiling, layer_event) VALUES ";

static void bind_u64s(struct db_stmt *st, int i, const uint64_t *v, size_t n)
{
	uint8_t buf[8 * 1024];
	size_t len = 0;
	for (size_t k = 0; k < n && len + 8 <= sizeof(buf); k++)
		for (int b = 0; b < 8; b++)
			buf[len++] = (uint8_t)(v[k] >> (8 * b));
	db_bind_blob(st, i, buf, len);
}

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

#define COMMAND_COLS 31

/* The command's row at parameters base+1 .. base+COMMAND_COLS. */
static void bind_command(struct db_stmt *st, int base, int64_t sid, uint64_t seq, const Prof__ClCommand *c)
{
	db_bind_i64(st, base + 1, sid);
	db_bind_u64(st, base + 2, seq);
	db_bind_i64(st, base + 3, c->pid);
	db_bind_u64(st, base + 4, c->id);
	db_bind_i64(st, base + 5, c->queue_id);
	db_bind_i64(st, base + 6, c->type);
	db_bind_i64(st, base + 7, c->kernel_id);
	db_bind_i64(st, base + 8, c->work_dim);
	for (int d = 0; d < 3; d++) {
		db_bind_u64(st, base + 9 + d, d < (int)c->n_global_size ? c->global_size[d] : 0);
		db_bind_u64(st, base + 12 + d, d < (int)c->n_local_size ? c->local_size[d] : 0);
		db_bind_u64(st, base + 15 + d, d < (int)c->n_global_offset ? c->global_offset[d] : 0);
	}
	db_bind_u64(st, base + 18, c->queued_ns);
	db_bind_u64(st, base + 19, c->submit_ns);
	db_bind_u64(st, base + 20, c->start_ns);
	db_bind_u64(st, base + 21, c->end_ns);
	db_bind_u64(st, base + 22, c->host_enqueue_ns);
	db_bind_u64(st, base + 23, c->host_complete_ns);
	db_bind_u64(st, base + 24, c->bytes);
	db_bind_u64(st, base + 25, c->prev_in_queue);
	bind_u64s(st, base + 26, c->wait_ids, c->n_wait_ids);
	bind_u64s(st, base + 27, c->mem_read, c->n_mem_read);
	bind_u64s(st, base + 28, c->mem_written, c->n_mem_written);
	db_bind_u64(st, base + 29, c->dropped_before);
	db_bind_i64(st, base + 30, c->forced_profiling);
	db_bind_i64(st, base + 31, c->layer_event);
}

struct command_rows {
	int64_t sid;
	uint64_t seq;
	Prof__ClCommand *const *c;
};

static void bind_row(struct db_stmt *st, int base, size_t row, void *arg)
{
	const struct command_rows *r = arg;
	bind_command(st, base, r->sid, r->seq, r->c[row]);
}

/* The commands' declarations, then their rows through multi-row INSERTs. */
static int put_commands(struct store *s, int64_t sid, uint64_t seq, Prof__ClCommand *const *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = put_kernels(s, sid, c[i]);
		if (rc < 0)
			return rc;
	}
	struct command_rows r = {.sid = sid, .seq = seq, .c = c};
	return store_insert_rows(s, command_rows, COMMAND_COLS, n, bind_row, &r);
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

/* ---------------------------------------------------------------- queries */
/* A store written by a collector without this kind, opened read-only, has no tables. */
static bool have_tables(struct store *s)
{
	return db_has_table(s->db, "cl_commands");
}

int store_cl_kernels(struct store *s, int64_t sid, store_cl_kernel_cb cb, void *arg)
{
	if (!have_tables(s))
		return 0;
	bool models = db_has_table(s->db, "cl_kernel_models"); /* stores written before kernel models */
	struct db_stmt *st = store_query(s, models ? "SELECT k.kernel_id, k.name, k.program_hash, k.build_options,"
						     " m.ops, m.bytes FROM cl_kernels k LEFT JOIN cl_kernel_models m"
						     " ON m.session_id = k.session_id AND m.kernel_id = k.kernel_id"
						     " WHERE k.session_id = ?1 ORDER BY k.kernel_id"
						   : "SELECT kernel_id, name, program_hash, build_options FROM cl_kernels"
						     " WHERE session_id = ?1 ORDER BY kernel_id");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc;
	while ((rc = db_step(st)) == 1) {
		struct store_cl_kernel_row r = {
			.id = (uint32_t)db_col_i64(st, 0),
			.name = db_col_text(st, 1),
			.program_hash = db_col_u64(st, 2),
			.build_options = db_col_text(st, 3),
			.model_ops = models ? db_col_double(st, 4) : 0,
			.model_bytes = models ? db_col_double(st, 5) : 0,
		};
		int stop = cb(&r, arg);
		if (stop) {
			db_finalize(st);
			return stop;
		}
	}
	db_finalize(st);
	return rc;
}

struct u64s {
	uint64_t v[1024];
	size_t n;
};

static void col_u64s(struct db_stmt *st, int col, struct u64s *out)
{
	size_t len;
	const uint8_t *b = db_col_blob(st, col, &len);
	out->n = 0;
	for (size_t off = 0; b && off + 8 <= len && out->n < 1024; off += 8) {
		uint64_t v = 0;
		for (int k = 0; k < 8; k++)
			v |= (uint64_t)b[off + k] << (8 * k);
		out->v[out->n++] = v;
	}
}

int store_cl_commands(struct store *s, int64_t sid, store_cl_command_cb cb, void *arg)
{
	if (!have_tables(s))
		return 0;
	struct db_stmt *st = store_query(s,
			       "SELECT seq, pid, cmd_id, queue_id, type, kernel_id, work_dim, gx, gy, gz, lx, ly, lz,"
			       " ox, oy, oz, queued_ns, submit_ns, start_ns, end_ns, host_enqueue_ns, host_complete_ns,"
			       " bytes, prev_in_queue, wait_ids, mem_read, mem_written, dropped_before,"
			       " forced_profiling, layer_event FROM cl_commands WHERE session_id = ?1"
			       " ORDER BY pid, cmd_id");
	if (!st)
		return -EIO;
	struct u64s *lists = malloc(3 * sizeof(*lists));
	if (!lists) {
		db_finalize(st);
		return -ENOMEM;
	}
	db_bind_i64(st, 1, sid);
	int rc;
	while ((rc = db_step(st)) == 1) {
		struct store_cl_command_row r;
		memset(&r, 0, sizeof(r));
#define U64(i) db_col_u64(st, (i))
		r.seq = U64(0);
		r.pid = (int32_t)db_col_i64(st, 1);
		r.id = U64(2);
		r.queue_id = (uint32_t)U64(3);
		r.type = (uint32_t)U64(4);
		r.kernel_id = (uint32_t)U64(5);
		r.work_dim = (uint32_t)U64(6);
		for (int d = 0; d < 3; d++) {
			r.global_size[d] = U64(7 + d);
			r.local_size[d] = U64(10 + d);
			r.global_offset[d] = U64(13 + d);
		}
		r.queued_ns = U64(16);
		r.submit_ns = U64(17);
		r.start_ns = U64(18);
		r.end_ns = U64(19);
		r.host_enqueue_ns = U64(20);
		r.host_complete_ns = U64(21);
		r.bytes = U64(22);
		r.prev_in_queue = U64(23);
		col_u64s(st, 24, &lists[0]);
		col_u64s(st, 25, &lists[1]);
		col_u64s(st, 26, &lists[2]);
		r.dropped_before = U64(27);
		r.forced_profiling = U64(28) != 0;
		r.layer_event = U64(29) != 0;
#undef U64
		r.wait_ids = lists[0].v;
		r.n_wait = lists[0].n;
		r.mem_read = lists[1].v;
		r.n_read = lists[1].n;
		r.mem_written = lists[2].v;
		r.n_written = lists[2].n;
		int stop = cb(&r, arg);
		if (stop) {
			free(lists);
			db_finalize(st);
			return stop;
		}
	}
	free(lists);
	db_finalize(st);
	return rc;
}
