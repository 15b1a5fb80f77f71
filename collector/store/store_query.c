/* Store: read-only queries for the CLI (sessions, dump). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store.h"
#include "store_priv.h"
#include "store_tally.h"
#include "validate.h"

#define SESSION_COLUMNS                                                                                      \
	"SELECT s.id, s.agent_id, s.boot_id, s.board, s.kernel_release, s.hostname, s.machine,"              \
	" s.agent_version, s.features, s.target, s.peer, s.schema_version, s.clock_id, s.base_ns,"           \
	" s.realtime_ns, s.first_seen, s.last_seen, s.connects, s.records, s.wire_bytes, s.spool_dropped"    \
	" FROM sessions s"

/* A session's sample counts, read apart from its row: in a damaged store read with --check off
 * the sessions are still listed when a page of the sample tables is unreadable. The CPU samples
 * are the sums stored with the records' blocks (#40); an older collector's rows (cpu_samples) are
 * counted for the records without a summed block, each row's count taken within the record limit
 * (VALIDATE_MAX_SAMPLE_COUNT): rows an older collector stored unchecked made SUM overflow, one
 * error per session per listing. */
#define COUNTERS_OF(sid)                                                                                     \
	"(SELECT COUNT(*) FROM counter_samples c WHERE c.session_id = " sid "),"                             \
	" (SELECT MAX(t_ns) FROM counter_samples c WHERE c.session_id = " sid "), "
#define BLOCKS_OF(sid) "(SELECT COALESCE(SUM(samples), 0) FROM sample_blocks b WHERE b.session_id = " sid ")"
#define ROWS_OF(sid, uncovered)                                                                              \
	"(SELECT COALESCE(SUM(CASE WHEN count < 0 OR count > 4294967295 THEN 4294967295 ELSE count END), "  \
	"0) FROM cpu_samples p WHERE p.session_id = " sid uncovered ")"
#define UNCOVERED                                                                                            \
	" AND NOT EXISTS (SELECT 1 FROM sample_blocks b WHERE b.session_id = p.session_id AND b.seq = p.seq" \
	" AND b.samples IS NOT NULL)"
/* Per store shape (cpu_counts()): blocks only, blocks and an older collector's rows, rows only
 * (an older store opened read-only), neither. */
#define CPU_OF_0(sid) BLOCKS_OF(sid)
#define CPU_OF_1(sid) BLOCKS_OF(sid) " + " ROWS_OF(sid, UNCOVERED)
#define CPU_OF_2(sid) ROWS_OF(sid, "")
#define CPU_OF_3(sid) "0"
static const char *const session_counts[4] = {
    "SELECT " COUNTERS_OF("?1") CPU_OF_0("?1"),
    "SELECT " COUNTERS_OF("?1") CPU_OF_1("?1"),
    "SELECT " COUNTERS_OF("?1") CPU_OF_2("?1"),
    "SELECT " COUNTERS_OF("?1") CPU_OF_3("?1"),
};
/* The list in one query: the rows and their counts (columns 21..23). */
#define SESSION_LIST_HEAD                                                                                    \
	"SELECT s.id, s.agent_id, s.boot_id, s.board, s.kernel_release, s.hostname, s.machine,"              \
	" s.agent_version, s.features, s.target, s.peer, s.schema_version, s.clock_id, s.base_ns,"           \
	" s.realtime_ns, s.first_seen, s.last_seen, s.connects, s.records, s.wire_bytes, s.spool_dropped, "
#define SESSION_LIST_TAIL " FROM sessions s ORDER BY s.id"
static const char *const session_list[4] = {
    SESSION_LIST_HEAD COUNTERS_OF("s.id") CPU_OF_0("s.id") SESSION_LIST_TAIL,
    SESSION_LIST_HEAD COUNTERS_OF("s.id") CPU_OF_1("s.id") SESSION_LIST_TAIL,
    SESSION_LIST_HEAD COUNTERS_OF("s.id") CPU_OF_2("s.id") SESSION_LIST_TAIL,
    SESSION_LIST_HEAD COUNTERS_OF("s.id") CPU_OF_3("s.id") SESSION_LIST_TAIL,
};

/* Which of the count queries fits the store's tables. */
static int cpu_counts(struct store *s)
{
	bool rows = store_has_table(s, "cpu_samples");
	if (store_has_table(s, "sample_blocks") && store_has_column(s, "sample_blocks", "samples"))
		return rows ? 1 : 0;
	return rows ? 2 : 3;
}

static uint64_t col_u64(struct db_stmt *st, int col)
{
	return db_col_u64(st, col);
}

static uint32_t col_u32(struct db_stmt *st, int col)
{
	return (uint32_t)db_col_i64(st, col);
}

/* The caller's callback and argument, as the row converters see them. */
struct row_ctx {
	union {
		store_session_cb session;
		store_cpu_cb cpu;
		store_gpu_cb gpu;
		store_sample_cb sample;
	} cb;
	void *arg;
	struct store *store; /* session rows: their counts are read from it (NULL: in columns 21..23) */
	int64_t *last_id;    /* session rows: the id of the last row handed on */
};

/* Step through st calling row(st, ctx) for each row; finalizes st. */
static int each_row(struct db_stmt *st, int (*row)(struct db_stmt *, const struct row_ctx *),
		    const struct row_ctx *ctx, int *nrows)
{
	int rc, ret = 0;
	while ((rc = db_step(st)) == 1) {
		if (nrows)
			(*nrows)++;
		ret = row(st, ctx);
		if (ret)
			break;
	}
	if (!ret && rc < 0)
		ret = rc;
	db_finalize(st);
	return ret;
}

static int session_row(struct db_stmt *st, const struct row_ctx *ctx)
{
	const struct row_ctx *c = ctx;
	struct store_session_row r = {
	    .id = db_col_i64(st, 0),
	    .agent_id = db_col_text(st, 1),
	    .boot_id = col_u64(st, 2),
	    .board = db_col_text(st, 3),
	    .kernel_release = db_col_text(st, 4),
	    .hostname = db_col_text(st, 5),
	    .machine = db_col_text(st, 6),
	    .agent_version = db_col_text(st, 7),
	    .features = db_col_text(st, 8),
	    .target = db_col_text(st, 9),
	    .peer = db_col_text(st, 10),
	    .schema_version = col_u32(st, 11),
	    .clock_id = col_u32(st, 12),
	    .base_ns = col_u64(st, 13),
	    .realtime_ns = col_u64(st, 14),
	    .first_seen = db_col_i64(st, 15),
	    .last_seen = db_col_i64(st, 16),
	    .connects = col_u64(st, 17),
	    .records = col_u64(st, 18),
	    .wire_bytes = col_u64(st, 19),
	    .spool_dropped = col_u64(st, 20),
	};
	if (c->last_id)
		*c->last_id = r.id;
	if (!c->store) { /* store_list_sessions' one query */
		r.counter_samples = col_u64(st, 21);
		r.last_t_ns = col_u64(st, 22);
		r.cpu_samples = col_u64(st, 23);
		r.samples = r.counter_samples + r.cpu_samples;
		return ctx->cb.session(&r, ctx->arg);
	}
	struct db_stmt *q = store_query(c->store, session_counts[cpu_counts(c->store)]);
	int rc = -EIO;
	if (q) {
		db_bind_i64(q, 1, r.id);
		rc = db_step(q);
		if (rc == 1) {
			r.counter_samples = col_u64(q, 0);
			r.last_t_ns = col_u64(q, 1);
			r.cpu_samples = col_u64(q, 2);
		}
		db_finalize(q);
	}
	r.counts_unreadable = rc != 1;
	r.samples = r.counter_samples + r.cpu_samples;
	return ctx->cb.session(&r, ctx->arg);
}

/* One query for the rows and their counts. When it fails (a page of the sample tables unreadable in a
 * damaged store read with --check off), the sessions after the last one handed on are listed row by
 * row, each one's counts read apart ('?' where unreadable). */
int store_list_sessions(struct store *s, store_session_cb cb, void *arg)
{
	int64_t last = 0;
	/* this handle's open counts first (before cpu_counts' reads, which would drain the pipeline
	 * and swallow a record sent ahead found a duplicate: the flush redoes it, #40 w40q) */
	int frc = store_tally_flush(s);
	if (frc < 0)
		return frc;
	int shape = cpu_counts(s);
	struct db_stmt *st = store_query(s, session_list[shape]);
	if (st) {
		const struct row_ctx one = {.cb.session = cb, .arg = arg, .last_id = &last};
		int rc, ret = 0;
		while ((rc = db_step(st)) == 1 && (ret = session_row(st, &one)) == 0)
			;
		db_finalize(st);
		if (ret || rc >= 0) /* the caller's answer, or every row */
			return ret;
	}
	st = store_query(s, SESSION_COLUMNS " WHERE s.id > ?1 ORDER BY s.id");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, last);
	return each_row(st, session_row, &(struct row_ctx){.cb.session = cb, .arg = arg, .store = s}, NULL);
}

int store_get_session(struct store *s, int64_t session_id, store_session_cb cb, void *arg)
{
	int frc = store_tally_flush(s);
	if (frc < 0)
		return frc;
	struct db_stmt *st = store_query(s, SESSION_COLUMNS " WHERE s.id = ?1");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	int n = 0;
	int rc = each_row(st, session_row, &(struct row_ctx){.cb.session = cb, .arg = arg, .store = s}, &n);
	return rc == 0 && n == 0 ? -ENOENT : rc;
}

int store_session_records_of(struct store *s, int64_t session_id, uint64_t *records, uint64_t *boot_id)
{
	int frc = store_tally_flush(s);
	if (frc < 0)
		return frc;
	struct db_stmt *st = store_query(s, "SELECT records, boot_id FROM sessions WHERE id = ?1");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	int rc = db_step(st);
	if (rc == 1) {
		*records = col_u64(st, 0);
		if (boot_id)
			*boot_id = col_u64(st, 1);
	}
	db_finalize(st);
	return rc == 1 ? 0 : rc == 0 ? -ENOENT : rc;
}

int store_session_records(struct store *s, int64_t session_id, uint64_t *records)
{
	return store_session_records_of(s, session_id, records, NULL);
}

bool store_has_table(struct store *s, const char *table)
{
	return db_has_table(s->db, table);
}

bool store_has_column(struct store *s, const char *table, const char *column)
{
	struct db_stmt *st = store_query(s, db_engine(s->db) == DB_PG
						? "SELECT 1 FROM information_schema.columns WHERE table_schema ="
						  " current_schema() AND table_name = ?1 AND column_name = ?2"
						: "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
	if (!st)
		return false;
	db_bind_text(st, 1, table);
	db_bind_text(st, 2, column);
	bool yes = db_step(st) == 1;
	db_finalize(st);
	return yes;
}

int store_session_last_seen(struct store *s, int64_t session_id, int64_t *last_seen)
{
	int frc = store_tally_flush(s);
	if (frc < 0)
		return frc;
	struct db_stmt *st = store_query(s, "SELECT COALESCE(last_seen, 0) FROM sessions WHERE id = ?1");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	int rc = db_step(st);
	if (rc == 1)
		*last_seen = db_col_i64(st, 0);
	db_finalize(st);
	return rc == 1 ? 0 : rc == 0 ? -ENOENT : rc;
}

static int cpu_row(struct db_stmt *st, const struct row_ctx *ctx)
{
	struct store_cpu_row r = {
	    .cpu = col_u32(st, 0),
	    .model = db_col_text(st, 1),
	    .implementer = col_u32(st, 2),
	    .part = col_u32(st, 3),
	    .max_freq_khz = col_u64(st, 4),
	};
	return ctx->cb.cpu(&r, ctx->arg);
}

int store_list_cpus(struct store *s, int64_t session_id, store_cpu_cb cb, void *arg)
{
	struct db_stmt *st;
	st = store_query(s, "SELECT cpu, model, implementer, part, max_freq_khz FROM cpus WHERE session_id = ?1"
			  " ORDER BY cpu");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	return each_row(st, cpu_row, &(struct row_ctx){.cb.cpu = cb, .arg = arg}, NULL);
}

static int gpu_row(struct db_stmt *st, const struct row_ctx *ctx)
{
	struct store_gpu_row r = {
	    .idx = col_u32(st, 0),
	    .platform = db_col_text(st, 1),
	    .name = db_col_text(st, 2),
	    .vendor = db_col_text(st, 3),
	    .version = db_col_text(st, 4),
	    .driver = db_col_text(st, 5),
	    .compute_units = col_u32(st, 6),
	    .global_mem_bytes = col_u64(st, 7),
	    .max_clock_mhz = col_u32(st, 8),
	    .type = col_u32(st, 9),
	};
	return ctx->cb.gpu(&r, ctx->arg);
}

int store_list_gpus(struct store *s, int64_t session_id, store_gpu_cb cb, void *arg)
{
	struct db_stmt *st;
	st = store_query(s, "SELECT idx, platform, name, vendor, version, driver, compute_units,"
	    " global_mem_bytes, max_clock_mhz, type FROM gpus WHERE session_id = ?1 ORDER BY idx");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	return each_row(st, gpu_row, &(struct row_ctx){.cb.gpu = cb, .arg = arg}, NULL);
}

/* Aggregation runs in C, not SQL: values are unsigned 64-bit (SQLite's SUM
 * would fail on int64 overflow). The index (session_id, event_id, t_ns)
 * delivers each event's rows together. */
struct summary_state {
	struct store_event_summary ev;
	bool open;
	char fallback[32];
	char name[VALIDATE_MAX_STRING + 1];
	char unit[VALIDATE_MAX_STRING + 1];
	store_event_cb cb;
	void *arg;
};

static int summary_emit(struct summary_state *ss)
{
	if (!ss->open)
		return 0;
	ss->open = false;
	if (!ss->ev.declared) {
		snprintf(ss->fallback, sizeof(ss->fallback), "event#%u", ss->ev.event_id);
		ss->ev.name = ss->fallback;
		ss->ev.unit = "";
	} else {
		ss->ev.name = ss->name;
		ss->ev.unit = ss->unit;
	}
	return ss->cb(&ss->ev, ss->arg);
}

static int summary_row(struct db_stmt *st, const struct row_ctx *ctx)
{
	struct summary_state *ss = ctx->arg;
	uint32_t id = col_u32(st, 0);
	uint64_t t = col_u64(st, 1), v = col_u64(st, 2);
	if (ss->open && ss->ev.event_id != id) {
		int rc = summary_emit(ss);
		if (rc)
			return rc;
	}
	if (!ss->open) {
		memset(&ss->ev, 0, sizeof(ss->ev));
		ss->open = true;
		ss->ev.event_id = id;
		ss->ev.first_t_ns = t;
		ss->ev.declared = !db_col_null(st, 3);
		snprintf(ss->name, sizeof(ss->name), "%s", db_col_text(st, 3));
		snprintf(ss->unit, sizeof(ss->unit), "%s", db_col_text(st, 4));
		ss->ev.type = col_u32(st, 5);
		ss->ev.config = col_u64(st, 6);
	}
	ss->ev.samples++;
	ss->ev.total = v > UINT64_MAX - ss->ev.total ? UINT64_MAX : ss->ev.total + v;
	if (t < ss->ev.first_t_ns)
		ss->ev.first_t_ns = t;
	if (t > ss->ev.last_t_ns)
		ss->ev.last_t_ns = t;
	return 0;
}

int store_event_summaries(struct store *s, int64_t session_id, store_event_cb cb, void *arg)
{
	struct db_stmt *st;
	st = store_query(s, "SELECT c.event_id, c.t_ns, c.value, e.name, e.unit, e.type, e.config"
			       " FROM counter_samples c LEFT JOIN events e"
			       " ON e.session_id = c.session_id AND e.event_id = c.event_id"
			       " WHERE c.session_id = ?1 ORDER BY c.event_id, c.t_ns");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	struct summary_state ss = {.cb = cb, .arg = arg};
	int rc = each_row(st, summary_row, &(struct row_ctx){.arg = &ss}, NULL);
	return rc ? rc : summary_emit(&ss);
}

static int sample_row(struct db_stmt *st, const struct row_ctx *ctx)
{
	char fallback[32];
	struct store_sample_row r = {
	    .seq = col_u64(st, 0),
	    .t_ns = col_u64(st, 1),
	    .event_id = col_u32(st, 2),
	    .value = col_u64(st, 4),
	    .running_pct = col_u32(st, 5),
	};
	if (db_col_null(st, 3)) {
		snprintf(fallback, sizeof(fallback), "event#%u", r.event_id);
		r.name = fallback;
	} else {
		r.name = db_col_text(st, 3);
	}
	return ctx->cb.sample(&r, ctx->arg);
}

int store_list_samples(struct store *s, int64_t session_id, store_sample_cb cb, void *arg)
{
	struct db_stmt *st;
	st = store_query(s, "SELECT c.seq, c.t_ns, c.event_id, e.name, c.value, c.running_pct"
			       " FROM counter_samples c LEFT JOIN events e"
			       " ON e.session_id = c.session_id AND e.event_id = c.event_id"
			       " WHERE c.session_id = ?1 ORDER BY c.t_ns, c.event_id, c.seq");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	return each_row(st, sample_row, &(struct row_ctx){.cb.sample = cb, .arg = arg}, NULL);
}
