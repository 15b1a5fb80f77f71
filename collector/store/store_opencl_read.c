/* Queries over the OpenCL tables (store_opencl.h): kernel declarations, and
 * commands from both stored forms: the blocks of cl_command_blocks
 * (store_cl_block.h, #41) and the row per command of cl_commands that
 * collectors before #41 wrote (a store may hold both: an older store that a
 * newer collector went on writing). */
#include "store_opencl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_cl_block.h"
#include "store_priv.h"

/* A store written by a collector without this kind, opened read-only, has no tables. */
static bool have_tables(struct store *s)
{
	return db_has_table(s->db, "cl_kernels");
}

int store_cl_kernels(struct store *s, int64_t sid, store_cl_kernel_cb cb, void *arg)
{
	if (!have_tables(s))
		return 0;
	bool models = db_has_table(s->db, "cl_kernel_models"); /* stores written before kernel models */
	struct db_stmt *st =
	    store_query(s, models ? "SELECT k.kernel_id, k.name, k.program_hash, k.build_options,"
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

/* The rows of a collector before #41 (cl_commands) with host_enqueue_ns in [t_from, t_to). */
static int rows_old(struct store *s, int64_t sid, uint64_t t_from, uint64_t t_to, struct store_cl_rows *v)
{
	struct db_stmt *st = store_query(
	    s, "SELECT seq, pid, cmd_id, queue_id, type, kernel_id, work_dim, gx, gy, gz, lx, ly, lz,"
	       " ox, oy, oz, queued_ns, submit_ns, start_ns, end_ns, host_enqueue_ns, host_complete_ns,"
	       " bytes, prev_in_queue, wait_ids, mem_read, mem_written, dropped_before,"
	       " forced_profiling, layer_event FROM cl_commands WHERE session_id = ?1");
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
		if (r.host_enqueue_ns < t_from || r.host_enqueue_ns >= t_to)
			continue;
		int e = store_cl_rows_add(v, &r);
		if (e < 0) {
			rc = e;
			break;
		}
	}
	free(lists);
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

/* The blocks of cl_command_blocks that overlap [t_from, t_to), by the (session, time) index. */
static int rows_blocks(struct store *s, int64_t sid, uint64_t t_from, uint64_t t_to, struct store_cl_rows *v)
{
	struct db_stmt *st = store_query(s, "SELECT seq, data FROM cl_command_blocks WHERE session_id = ?1"
					    " AND t_first <= ?3 AND t_last >= ?2 ORDER BY seq, part");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_u64(st, 2, t_from);
	db_bind_u64(st, 3, t_to > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX : t_to);
	int rc;
	while ((rc = db_step(st)) == 1) {
		size_t len;
		const uint8_t *p = db_col_blob(st, 1, &len);
		int e = store_cl_block_read(v, p ? p : (const uint8_t *)"", p ? len : 0, db_col_u64(st, 0),
					    t_from, t_to);
		if (e < 0) {
			rc = e;
			break;
		}
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

int store_cl_commands_range(struct store *s, int64_t sid, uint64_t t_from, uint64_t t_to,
			    store_cl_command_cb cb, void *arg)
{
	struct store_cl_rows v;
	memset(&v, 0, sizeof(v));
	int rc = 0;
	if (db_has_table(s->db, "cl_commands"))
		rc = rows_old(s, sid, t_from, t_to, &v);
	if (rc == 0 && db_has_table(s->db, "cl_command_blocks"))
		rc = rows_blocks(s, sid, t_from, t_to, &v);
	if (rc == 0)
		rc = store_cl_rows_each(&v, cb, arg);
	store_cl_rows_free(&v);
	return rc;
}

int store_cl_commands(struct store *s, int64_t sid, store_cl_command_cb cb, void *arg)
{
	return store_cl_commands_range(s, sid, 0, UINT64_MAX, cb, arg);
}
