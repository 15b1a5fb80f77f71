/* Unit tests of collector/store/store_cl_block.c and store_opencl_read.c (#41):
 * OpenCL commands stored as a packed, compressed block per record read back
 * field by field; a store as collectors before #41 wrote it (a row per command
 * in cl_commands, built here with that collector's schema and INSERT), and one
 * that holds both forms, give the same report as the blocks; the (session,
 * time range) read; a damaged block is an error, not a crash; a record too
 * large for one block goes in parts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "log.h"
#include "report/report.h"
#include "store/store.h"
#include "store/store_opencl.h"
#include "testproc.h"
#include "validate.h"

#define NCMD 300
#define PER_BATCH 100

/* The commands of two processes: kernels of 1..3 dimensions with and without local sizes and
 * offsets, transfers with bytes, wait lists and buffers, out-of-order queue entries, flags. */
struct cmds {
	Prof__ClCommand c[NCMD], *p[NCMD];
	uint64_t g[NCMD][3], l[NCMD][3], o[NCMD][3], w[NCMD][2], rd[NCMD][2], wr[NCMD][1];
	Prof__ClKernelDesc k[2], *kp[2][1];
};

static void make_cmds(struct cmds *m)
{
	memset(m, 0, sizeof(*m));
	static const char *const names[2] = {"saxpy", "transpose"};
	for (int i = 0; i < 2; i++) {
		prof__cl_kernel_desc__init(&m->k[i]);
		m->k[i].id = (uint32_t)i + 1;
		m->k[i].name = (char *)names[i];
		m->k[i].program_hash = 0x1234 + (uint64_t)i;
		m->k[i].build_options = i ? "-DTILE=16" : "";
		m->kp[i][0] = &m->k[i];
	}
	uint64_t t = 1000000;
	for (int i = 0; i < NCMD; i++) {
		Prof__ClCommand *c = &m->c[i];
		prof__cl_command__init(c);
		m->p[i] = c;
		int proc = i % 2;
		uint64_t id = (uint64_t)i / 2 + 1;
		c->pid = proc ? 4242 : 77;
		c->id = id;
		c->queue_id = 1 + (i % 6 == 1);
		bool kernel = i % 3 != 2;
		if (kernel) {
			c->type = 0x11F0;
			c->kernel_id = 1 + (uint32_t)(i % 5 == 0);
			c->work_dim = 1 + (uint32_t)(i % 3);
			c->n_global_size = c->work_dim;
			c->global_size = m->g[i];
			for (uint32_t d = 0; d < c->work_dim; d++)
				m->g[i][d] = 1024u << (d + (i % 4));
			if (i % 4) {
				c->n_local_size = c->work_dim;
				c->local_size = m->l[i];
				for (uint32_t d = 0; d < c->work_dim; d++)
					m->l[i][d] = 16u << d;
			}
			if (i % 7 == 0) {
				c->n_global_offset = c->work_dim;
				c->global_offset = m->o[i];
				for (uint32_t d = 0; d < c->work_dim; d++)
					m->o[i][d] = 8 * (d + 1);
			}
		} else {
			c->type = i % 4 ? 0x11F3 : 0x11F4; /* read, write buffer */
			c->bytes = 4096u * (uint64_t)(1 + i % 9);
		}
		c->queued_ns = t + 7 * (uint64_t)i;
		c->submit_ns = c->queued_ns + 500 + (uint64_t)(i % 11);
		c->start_ns = c->submit_ns + 2000;
		c->end_ns = c->start_ns + 10000 + 37 * (uint64_t)(i % 13);
		c->host_enqueue_ns = c->queued_ns - 5000 + (uint64_t)i;
		c->host_complete_ns = c->end_ns + 900000;
		t += 20000;
		if (id > 2 && i % 5 == 1) {
			c->n_wait_ids = 2;
			c->wait_ids = m->w[i];
			m->w[i][0] = id - 1;
			m->w[i][1] = id - 2;
		}
		c->n_mem_read = (size_t)(i % 3);
		c->mem_read = m->rd[i];
		m->rd[i][0] = 3 + (uint64_t)(i % 4);
		m->rd[i][1] = 9;
		c->n_mem_written = 1;
		c->mem_written = m->wr[i];
		m->wr[i][0] = 20 + (uint64_t)proc;
		c->prev_in_queue = c->queue_id == 1 && id > 1 ? id - 1 : 0;
		c->dropped_before = (uint64_t)i / 50;
		c->forced_profiling = i % 2;
		c->layer_event = i % 3 == 0;
	}
	/* each kernel declared by the first command of each batch (as the agent does) that uses it */
	for (int b = 0; b < NCMD / PER_BATCH; b++) {
		bool done[2] = {false, false};
		for (int i = b * PER_BATCH; i < (b + 1) * PER_BATCH; i++) {
			uint32_t k = m->c[i].kernel_id;
			if (k && !done[k - 1]) {
				m->c[i].new_kernels = m->kp[k - 1];
				m->c[i].n_new_kernels = 1;
				done[k - 1] = true;
			}
		}
	}
}

static int64_t open_session(struct store *s, const char *agent)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = (char *)agent;
	h.boot_id = 9;
	int64_t sid;
	uint64_t max;
	assert_int_equal(store_session_open(s, &h, "peer", &sid, &max, NULL), 0);
	return sid;
}

/* Batches lo..hi-1 (of PER_BATCH commands each) as ClCommandBatch records, seq = batch + 1. */
static void put_batches(struct store *s, int64_t sid, struct cmds *m, int lo, int hi)
{
	for (int b = lo; b < hi; b++) {
		Prof__ClCommandBatch batch = PROF__CL_COMMAND_BATCH__INIT;
		batch.n_commands = PER_BATCH;
		batch.commands = m->p + b * PER_BATCH;
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		env.seq = (uint64_t)b + 1;
		env.body_case = PROF__ENVELOPE__BODY_CL_BATCH;
		env.cl_batch = &batch;
		char err[256];
		assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
		assert_int_equal(store_put_record(s, sid, &env, 1000), 1);
	}
	assert_int_equal(store_commit(s), 0);
}

/* ------------------------------------------------ the store of a collector before #41 */
/* cl_commands and its index as collector/store/store_opencl.c created them before #41 */
static const char old_schema[] =
    "CREATE TABLE IF NOT EXISTS cl_commands (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " pid INTEGER, cmd_id INTEGER NOT NULL, queue_id INTEGER, type INTEGER, kernel_id INTEGER,"
    " work_dim INTEGER, gx INTEGER, gy INTEGER, gz INTEGER, lx INTEGER, ly INTEGER, lz INTEGER,"
    " ox INTEGER, oy INTEGER, oz INTEGER, queued_ns INTEGER, submit_ns INTEGER, start_ns INTEGER,"
    " end_ns INTEGER, host_enqueue_ns INTEGER, host_complete_ns INTEGER, bytes INTEGER,"
    " prev_in_queue INTEGER, wait_ids BLOB, mem_read BLOB, mem_written BLOB, dropped_before INTEGER,"
    " forced_profiling INTEGER, layer_event INTEGER);"
    "CREATE INDEX IF NOT EXISTS cl_commands_session ON cl_commands(session_id, pid, cmd_id);";

/* its bind_u64s: a list as packed little-endian u64 */
static void bind_list(sqlite3_stmt *st, int i, const uint64_t *v, size_t n)
{
	uint8_t buf[64];
	size_t len = 0;
	for (size_t k = 0; k < n; k++)
		for (int b = 0; b < 8; b++)
			buf[len++] = (uint8_t)(v[k] >> (8 * b));
	sqlite3_bind_blob(st, i, buf, (int)len, SQLITE_TRANSIENT);
}

/* Commands lo..hi-1 as rows the way that collector's put_commands wrote them (and kernel
 * declarations into cl_kernels when kernels). */
static void put_old_rows(const char *path, int64_t sid, const struct cmds *m, int lo, int hi, bool kernels)
{
	sqlite3 *h;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, old_schema, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_stmt *st, *ks;
	assert_int_equal(
	    sqlite3_prepare_v2(
		h,
		"INSERT INTO cl_commands (session_id, seq, pid, cmd_id, queue_id, type, kernel_id,"
		" work_dim, gx, gy, gz, lx, ly, lz, ox, oy, oz, queued_ns, submit_ns, start_ns,"
		" end_ns, host_enqueue_ns, host_complete_ns, bytes, prev_in_queue, wait_ids,"
		" mem_read, mem_written, dropped_before, forced_profiling, layer_event) VALUES"
		" (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
		-1, &st, NULL),
	    SQLITE_OK);
	assert_int_equal(
	    sqlite3_prepare_v2(
		h,
		"INSERT INTO cl_kernels (session_id, kernel_id, name, program_hash, build_options)"
		" VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT DO NOTHING",
		-1, &ks, NULL),
	    SQLITE_OK);
	sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);
	for (int i = lo; i < hi; i++) {
		const Prof__ClCommand *c = &m->c[i];
		for (size_t k = 0; kernels && k < c->n_new_kernels; k++) {
			sqlite3_reset(ks);
			sqlite3_bind_int64(ks, 1, sid);
			sqlite3_bind_int64(ks, 2, c->new_kernels[k]->id);
			sqlite3_bind_text(ks, 3, c->new_kernels[k]->name, -1, SQLITE_STATIC);
			sqlite3_bind_int64(ks, 4, (int64_t)c->new_kernels[k]->program_hash);
			sqlite3_bind_text(ks, 5, c->new_kernels[k]->build_options, -1, SQLITE_STATIC);
			assert_int_equal(sqlite3_step(ks), SQLITE_DONE);
		}
		const int64_t v[] = {sid,	  i / PER_BATCH + 1, c->pid,	   (int64_t)c->id,
				     c->queue_id, c->type,	     c->kernel_id, c->work_dim};
		sqlite3_reset(st);
		for (int k = 0; k < 8; k++)
			sqlite3_bind_int64(st, k + 1, v[k]);
		for (int d = 0; d < 3; d++) {
			sqlite3_bind_int64(st, 9 + d,
					   d < (int)c->n_global_size ? (int64_t)c->global_size[d] : 0);
			sqlite3_bind_int64(st, 12 + d,
					   d < (int)c->n_local_size ? (int64_t)c->local_size[d] : 0);
			sqlite3_bind_int64(st, 15 + d,
					   d < (int)c->n_global_offset ? (int64_t)c->global_offset[d] : 0);
		}
		const uint64_t t[] = {c->queued_ns,	  c->submit_ns,	       c->start_ns, c->end_ns,
				      c->host_enqueue_ns, c->host_complete_ns, c->bytes,    c->prev_in_queue};
		for (int k = 0; k < 8; k++)
			sqlite3_bind_int64(st, 18 + k, (int64_t)t[k]);
		bind_list(st, 26, c->wait_ids, c->n_wait_ids);
		bind_list(st, 27, c->mem_read, c->n_mem_read);
		bind_list(st, 28, c->mem_written, c->n_mem_written);
		sqlite3_bind_int64(st, 29, (int64_t)c->dropped_before);
		sqlite3_bind_int64(st, 30, c->forced_profiling);
		sqlite3_bind_int64(st, 31, c->layer_event);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	}
	assert_int_equal(sqlite3_exec(h, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_finalize(st);
	sqlite3_finalize(ks);
	sqlite3_close(h);
}

/* ------------------------------------------------ reading back */
struct check {
	const struct cmds *m;
	int n;
};

static const Prof__ClCommand *find(const struct cmds *m, int32_t pid, uint64_t id, int *idx)
{
	for (int i = 0; i < NCMD; i++)
		if (m->c[i].pid == pid && m->c[i].id == id) {
			*idx = i;
			return &m->c[i];
		}
	fail_msg("command %d/%llu not put", pid, (unsigned long long)id);
	return NULL;
}

static uint64_t at(const uint64_t *v, size_t n, int d)
{
	return d < (int)n ? v[d] : 0;
}

/* Every field as it was put, in (pid, id) order. */
static int check_row(const struct store_cl_command_row *r, void *arg)
{
	struct check *k = arg;
	int i = -1;
	const Prof__ClCommand *c = find(k->m, r->pid, r->id, &i);
	assert_int_equal(r->seq, (uint64_t)(i / PER_BATCH + 1));
	assert_int_equal(r->queue_id, c->queue_id);
	assert_int_equal(r->type, c->type);
	assert_int_equal(r->kernel_id, c->kernel_id);
	assert_int_equal(r->work_dim, c->work_dim);
	for (int d = 0; d < 3; d++) {
		assert_int_equal(r->global_size[d], at(c->global_size, c->n_global_size, d));
		assert_int_equal(r->local_size[d], at(c->local_size, c->n_local_size, d));
		assert_int_equal(r->global_offset[d], at(c->global_offset, c->n_global_offset, d));
	}
	assert_int_equal(r->queued_ns, c->queued_ns);
	assert_int_equal(r->submit_ns, c->submit_ns);
	assert_int_equal(r->start_ns, c->start_ns);
	assert_int_equal(r->end_ns, c->end_ns);
	assert_int_equal(r->host_enqueue_ns, c->host_enqueue_ns);
	assert_int_equal(r->host_complete_ns, c->host_complete_ns);
	assert_int_equal(r->bytes, c->bytes);
	assert_int_equal(r->prev_in_queue, c->prev_in_queue);
	assert_int_equal(r->dropped_before, c->dropped_before);
	assert_int_equal(r->forced_profiling, c->forced_profiling);
	assert_int_equal(r->layer_event, c->layer_event);
	assert_int_equal(r->n_wait, c->n_wait_ids);
	assert_int_equal(r->n_read, c->n_mem_read);
	assert_int_equal(r->n_written, c->n_mem_written);
	for (size_t j = 0; j < r->n_wait; j++)
		assert_int_equal(r->wait_ids[j], c->wait_ids[j]);
	for (size_t j = 0; j < r->n_read; j++)
		assert_int_equal(r->mem_read[j], c->mem_read[j]);
	for (size_t j = 0; j < r->n_written; j++)
		assert_int_equal(r->mem_written[j], c->mem_written[j]);
	/* in (pid, id) order: pid 77's first */
	int want = r->pid == 77 ? 2 * (int)(r->id - 1) : 2 * (int)(r->id - 1) + 1;
	assert_int_equal(i, want);
	assert_int_equal(k->n, r->pid == 77 ? (int)r->id - 1 : NCMD / 2 + (int)r->id - 1);
	k->n++;
	return 0;
}

static char *report_text(struct store *s, int64_t sid, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	struct report_opts o = {.json = json, .limit = 50, .sort = REPORT_SORT_TOTAL};
	assert_int_equal(report_opencl(s, sid, &o, f), 0);
	fclose(f);
	return buf;
}

static int64_t sql_int(const char *path, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	int64_t v = -1;
	assert_int_equal(sqlite3_open(path, &h), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return v;
}

/* Blocks, rows of a collector before #41, and both in one session: the same commands, the same report. */
static void test_store_cl_blocks_old_rows_same_report(void **state)
{
	(void)state;
	static struct cmds m;
	make_cmds(&m);
	char dir[256], path[300];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "cl-blocks"), 0);
	snprintf(path, sizeof(path), "%s/store.db", dir);
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	int64_t blocks = open_session(s, "blocks"), old = open_session(s, "old"),
		both = open_session(s, "both");
	put_batches(s, blocks, &m, 0, NCMD / PER_BATCH);
	put_batches(s, both, &m, 0, 1); /* the first batch as blocks, the rest as rows */
	store_close(s);
	put_old_rows(path, old, &m, 0, NCMD, true);
	put_old_rows(path, both, &m, PER_BATCH, NCMD, false);
	/* one row per record, packed: 100 commands in far fewer bytes than their rows */
	char sql[200];
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM cl_command_blocks WHERE commands = 100"), 4);
	snprintf(sql, sizeof(sql), "SELECT SUM(LENGTH(data)) FROM cl_command_blocks WHERE session_id = %lld",
		 (long long)blocks);
	int64_t bytes = sql_int(path, sql);
	fprintf(stderr, "%d commands in %lld bytes of blocks\n", NCMD, (long long)bytes);
	assert_true(bytes > 0 && bytes < NCMD * 25);

	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	const int64_t sids[3] = {blocks, old, both};
	char *txt[3], *js[3];
	for (int i = 0; i < 3; i++) {
		struct check k = {.m = &m};
		assert_int_equal(store_cl_commands(s, sids[i], check_row, &k), 0);
		assert_int_equal(k.n, NCMD);
		txt[i] = report_text(s, sids[i], false);
		js[i] = report_text(s, sids[i], true);
	}
	assert_non_null(strstr(txt[0], "OpenCL: 300 commands"));
	assert_non_null(strstr(txt[0], "transpose"));
	for (int i = 1; i < 3; i++) {
		assert_string_equal(txt[i], txt[0]);
		assert_string_equal(js[i], js[0]);
	}
	for (int i = 0; i < 3; i++) {
		free(txt[i]);
		free(js[i]);
	}
	store_close(s);
	tp_rm_rf(dir);
}

/* A fresh store in a temporary directory (its path in path, its directory in dir) holding one
 * session named agent with batches 0..nbatches-1 of m; closed. Returns the session. */
static int64_t store_with_batches(const char *agent, struct cmds *m, int nbatches, char *dir, size_t dcap,
				  char *path, size_t pcap)
{
	char tag[64];
	snprintf(tag, sizeof(tag), "cl-%s", agent);
	assert_int_equal(tp_tmpdir(dir, dcap, tag), 0);
	snprintf(path, pcap, "%s/store.db", dir);
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	int64_t sid = open_session(s, agent);
	put_batches(s, sid, m, 0, nbatches);
	store_close(s);
	return sid;
}

struct range {
	uint64_t lo, hi;
	int n;
};

static int in_range(const struct store_cl_command_row *r, void *arg)
{
	struct range *g = arg;
	assert_true(r->host_enqueue_ns >= g->lo && r->host_enqueue_ns < g->hi);
	g->n++;
	return 0;
}

/* A time range reads the commands enqueued in it, from blocks and rows alike. */
static void test_store_cl_blocks_time_range(void **state)
{
	(void)state;
	static struct cmds m;
	make_cmds(&m);
	char dir[256], path[300];
	int64_t sid = store_with_batches("range", &m, 2, dir, sizeof(dir), path, sizeof(path));
	struct store *s;
	put_old_rows(path, sid, &m, 2 * PER_BATCH, NCMD, true);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	/* commands 150..249: half of block 2, half of the rows */
	struct range g = {.lo = m.c[150].host_enqueue_ns, .hi = m.c[250].host_enqueue_ns};
	assert_int_equal(store_cl_commands_range(s, sid, g.lo, g.hi, in_range, &g), 0);
	assert_int_equal(g.n, 100);
	g = (struct range){.lo = m.c[NCMD - 1].host_enqueue_ns + 1, .hi = UINT64_MAX};
	assert_int_equal(store_cl_commands_range(s, sid, g.lo, g.hi, in_range, &g), 0);
	assert_int_equal(g.n, 0);
	store_close(s);
	tp_rm_rf(dir);
}

static int count(const struct store_cl_command_row *r, void *arg)
{
	(void)r;
	(*(int *)arg)++;
	return 0;
}

/* A block whose bytes are not a block (a damaged store): an error, no command invented. */
static void test_store_cl_blocks_damaged_refused(void **state)
{
	(void)state;
	static struct cmds m;
	make_cmds(&m);
	char dir[256], path[300];
	int64_t sid = store_with_batches("damaged", &m, 1, dir, sizeof(dir), path, sizeof(path));
	struct store *s;
	/* a column cut short: a well-formed message whose ids outnumber its pids */
	assert_int_equal(sql_int(path, "UPDATE cl_command_blocks SET data = x'0a010212020304' RETURNING 1"),
			 1);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	int n = 0;
	assert_int_equal(store_cl_commands(s, sid, count, &n), -EBADMSG);
	assert_int_equal(n, 0);
	store_close(s);
	assert_int_equal(sql_int(path, "UPDATE cl_command_blocks SET data = x'28b52ffd00ffffff' RETURNING 1"),
			 1);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	assert_int_equal(store_cl_commands(s, sid, count, &n), -EBADMSG);
	assert_int_equal(n, 0);
	store_close(s);
	tp_rm_rf(dir);
}

struct big {
	int n;
	uint64_t last_id;
};

static int check_big(const struct store_cl_command_row *r, void *arg)
{
	struct big *b = arg;
	assert_int_equal(r->n_wait, 1024);
	assert_int_equal(r->n_read, 1024);
	assert_int_equal(r->n_written, 1024);
	assert_int_equal(r->wait_ids[0], 1);
	assert_int_equal(r->wait_ids[1023], 1024);
	assert_int_equal(r->mem_read[1023], 1024);
	assert_int_equal(r->mem_written[0], 1);
	assert_true(r->id > b->last_id);
	b->last_id = r->id;
	b->n++;
	return 0;
}

/* A record whose commands carry the most dependencies a command may (VALIDATE_CL_MAX_DEPS of each
 * kind) is stored in parts, each within what a block may decompress to (STORE_BLOCK_MAX_RAW), and
 * read back whole. */
static void test_store_cl_blocks_big_record_in_parts(void **state)
{
	(void)state;
	enum { N = 200, DEPS = 1024 };
	static uint64_t deps[DEPS];
	static Prof__ClCommand c[N], *cp[N];
	for (int i = 0; i < DEPS; i++)
		deps[i] = (uint64_t)i + 1;
	for (int i = 0; i < N; i++) {
		prof__cl_command__init(&c[i]);
		cp[i] = &c[i];
		c[i].id = DEPS + 1 + (uint64_t)i;
		c[i].pid = 5;
		c[i].queue_id = 1;
		c[i].type = 0x11F3;
		c[i].n_wait_ids = c[i].n_mem_read = c[i].n_mem_written = DEPS;
		c[i].wait_ids = c[i].mem_read = c[i].mem_written = deps;
	}
	Prof__ClCommandBatch batch = PROF__CL_COMMAND_BATCH__INIT;
	batch.n_commands = N;
	batch.commands = cp;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_CL_BATCH;
	env.cl_batch = &batch;
	char err[256];
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
	char dir[256], path[300];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "cl-big"), 0);
	snprintf(path, sizeof(path), "%s/store.db", dir);
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	int64_t sid = open_session(s, "big");
	assert_int_equal(store_put_record(s, sid, &env, 1000), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(sql_int(path, "SELECT COUNT(*) FROM cl_command_blocks WHERE seq = 1"), 2);
	assert_int_equal(sql_int(path, "SELECT SUM(commands) FROM cl_command_blocks"), N);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct big b = {0};
	assert_int_equal(store_cl_commands(s, sid, check_big, &b), 0);
	assert_int_equal(b.n, N);
	store_close(s);
	tp_rm_rf(dir);
}

int main(void)
{
	log_init("test", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_cl_blocks_old_rows_same_report),
	    cmocka_unit_test(test_store_cl_blocks_time_range),
	    cmocka_unit_test(test_store_cl_blocks_damaged_refused),
	    cmocka_unit_test(test_store_cl_blocks_big_record_in_parts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
