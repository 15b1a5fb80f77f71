/* Downsampling for long retention (query.h: query_downsample, #40): the
 * sample blocks of records that ended before a cutoff, merged per window of
 * each session's time into one block whose keys are summed with the same set
 * the queries sum them in (query_keys.c). The merged block keeps the window's
 * first seq and takes its last record's time, so a time range that holds that
 * time counts the whole window; totals, per-key sums and the session counts
 * stay as they were. The window's sample_intervals rows (one per record: lost,
 * interval, back end) become one too, of the same seq and time: intervals and
 * lost summed (left as they are where the rows differ in back end or event,
 * or a sum would pass one record's limit). A window is split where its
 * records' frequency or period changes (an agent upgraded within one boot),
 * so no merged block mixes periods. A
 * session with an older collector's cpu_samples rows is left as it is (those
 * rows are read for records without a block). Each window is its own
 * transaction (its blocks read in it): a collector writing the store
 * meanwhile only waits. query_downsample_some bounds a pass to a number of
 * windows (the listening collector's background passes, --downsample-after).
 * Where a pid was used again in the session (sample_task_incs, w44a), a window
 * is not merged across a record where a later process of a pid begins: the
 * merged block's seq says whose keys they are (query_incs.c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "query_priv.h"
#include "store/store_keyids.h"
#include "sat.h"
#include "validate_samples.h"

static const char q_sess[] = "SELECT id, realtime_ns FROM sessions ORDER BY id";
static const char q_rows[] = "SELECT COUNT(*) FROM cpu_samples WHERE session_id = ?1";
/* each block with its record's rate (sample_intervals: frequency, period; NULL without a row) */
#define Q_LIST_FROM                                                                                                 \
	" FROM sample_blocks b LEFT JOIN sample_intervals i ON i.session_id = b.session_id AND i.seq = b.seq"       \
	" WHERE b.session_id = ?1 AND b.t_ns < ?2 ORDER BY b.t_ns, b.seq"
static const char q_list[] = "SELECT b.seq, b.t_ns, b.keys, i.freq_hz, i.period, 0" Q_LIST_FROM;
/* fmt: whole keys or ids of the session's dictionary (store_keyids.h, #40 w45a) */
static const char q_list_fmt[] = "SELECT b.seq, b.t_ns, b.keys, i.freq_hz, i.period, b.fmt" Q_LIST_FROM;
static const char q_data[] = "SELECT data FROM sample_blocks WHERE session_id = ?1 AND seq = ?2";
static const char q_upd[] =
    "UPDATE sample_blocks SET t_ns = ?3, keys = ?4, data = ?5, samples = ?6, pid_min = ?7,"
    " pid_max = ?8, pid_bits = ?9 WHERE session_id = ?1 AND seq = ?2";
static const char q_upd_fmt[] =
    "UPDATE sample_blocks SET t_ns = ?3, keys = ?4, data = ?5, samples = ?6, pid_min = ?7,"
    " pid_max = ?8, pid_bits = ?9, fmt = ?10 WHERE session_id = ?1 AND seq = ?2";
static const char q_del[] = "DELETE FROM sample_blocks WHERE session_id = ?1 AND seq = ?2";
static const char q_iv[] = "SELECT t_ns, interval_ns, lost, backend, event_id, freq_hz, period FROM sample_intervals"
			   " WHERE session_id = ?1 AND seq = ?2";
static const char q_iv_upd[] = "UPDATE sample_intervals SET t_ns = ?3, interval_ns = ?4, lost = ?5, keys = ?6"
			       " WHERE session_id = ?1 AND seq = ?2";
static const char q_iv_del[] = "DELETE FROM sample_intervals WHERE session_id = ?1 AND seq = ?2";
static const char q_inc_seqs[] = "SELECT DISTINCT seq FROM sample_task_incs WHERE session_id = ?1 ORDER BY seq";

struct blk {
	int64_t seq, t_ns;
	int64_t keys;		 /* the block's keys (sample_blocks.keys) */
	int64_t freq_hz, period; /* its record's (INT64_MIN: no interval row) */
	int fmt;		 /* STORE_BLOCK_FMT_* */
};

/* A session's dictionary and, for windows of id blocks, the counts summed per id in the order met. */
struct ids {
	bool have;		/* the store has key ids (table and column) */
	struct store_keydict kd;
	uint64_t *cnt;		/* per id */
	uint32_t *order;	/* the ids met, in order */
	size_t n;
};

/* A block's keys as a merge counts them: a value the row cannot vouch for (NULL, out of range) as the
 * most a block holds, so that block is merged with no other. */
static int64_t keys_of(int64_t keys)
{
	return keys > 0 && keys <= (int64_t)VALIDATE_MAX_SAMPLE_KEYS ? keys
								     : (int64_t)VALIDATE_MAX_SAMPLE_KEYS;
}

/* The keys of block seq summed into ks (ids: per id into ids, the window all of id blocks): 0, -EBADMSG
 * (damaged: the window is left as it is) or -errno. */
static int add_block(struct store *s, int64_t sid, const struct blk *bk, struct kset *ks, struct ids *ids,
		     bool by_id)
{
	int64_t seq = bk->seq;
	struct db_stmt *st = store_stmt(s, q_data);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, seq);
	int rc = db_step(st);
	if (rc != 1) {
		db_reset(st);
		return rc < 0 ? rc : -ENOENT;
	}
	size_t zlen, len, off = 0;
	const uint8_t *z = db_col_blob(st, 0, &zlen);
	uint8_t *owned;
	const uint8_t *p = z ? store_block_unpack(z, zlen, &len, &owned) : NULL;
	rc = z && !p ? -ENOMEM : 0;
	int64_t prev = -1;
	while (rc == 0 && p && off < len && by_id) {
		uint32_t id;
		uint64_t cnt;
		size_t used = store_idblock_get(p + off, len - off, ids->kd.n, &prev, &id, &cnt);
		if (!used) {
			rc = -EBADMSG;
			break;
		}
		off += used;
		if (!ids->cnt[id]) { /* met: 1 + its sum (a key of count 0 is kept too) */
			ids->order[ids->n++] = id;
			ids->cnt[id] = 1;
		}
		sat_inc_u64(&ids->cnt[id], cnt > VALIDATE_MAX_SAMPLE_COUNT ? VALIDATE_MAX_SAMPLE_COUNT : cnt);
	}
	while (rc == 0 && p && off < len) {
		struct store_block_key k;
		size_t used = store_block_next(p + off, len - off, bk->fmt, &ids->kd, &prev, &k);
		if (!used) {
			rc = -EBADMSG;
			break;
		}
		off += used;
		if (k.count > VALIDATE_MAX_SAMPLE_COUNT)
			k.count = VALIDATE_MAX_SAMPLE_COUNT;
		rc = qm_kset_add(ks, &k, ks->n);
	}
	if (z)
		free(owned);
	db_reset(st);
	return rc;
}

/* The summed keys as the block of the window's first seq, at its last time; the others deleted. By id
 * (the window all of id blocks): ids' counts in the order met, an id block; else ks's keys. */
static int write_window(struct store *s, int64_t sid, const struct blk *b, size_t n, const struct kset *ks,
			struct ids *ids, bool by_id)
{
	size_t nk = by_id ? ids->n : ks->n;
	uint8_t *raw = malloc(nk * STORE_BLOCK_MAX_KEY_BYTES + 1), *z = NULL;
	if (!raw)
		return -ENOMEM;
	size_t len = 0, zlen = 0;
	uint64_t total = 0, bits = 0;
	int32_t pmin = INT32_MAX, pmax = INT32_MIN;
	int64_t prev = -1;
	for (size_t i = 0; i < nk; i++) {
		const struct store_block_key *k = by_id ? &ids->kd.keys[ids->order[i]] : &ks->rows[i];
		uint64_t count = k->count;
		if (by_id) {
			count = ids->cnt[ids->order[i]] - 1;
			len += store_idblock_put(raw + len, ids->order[i], &prev, count);
		} else {
			len += store_block_put(raw + len, k);
		}
		sat_inc_u64(&total, count);
		pmin = k->pid < pmin ? k->pid : pmin;
		pmax = k->pid > pmax ? k->pid : pmax;
		bits |= STORE_BLOCK_PID_BIT(k->pid);
	}
	int rc = store_block_pack_level(raw, len, STORE_BLOCK_COMPACT_LEVEL, &z, &zlen);
	struct db_stmt *st = rc == 0 ? store_stmt(s, ids->have ? q_upd_fmt : q_upd) : NULL;
	if (rc == 0 && !st)
		rc = -EIO;
	if (rc == 0) {
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, b[0].seq);
		db_bind_i64(st, 3, b[n - 1].t_ns);
		db_bind_i64(st, 4, (int64_t)nk);
		db_bind_blob(st, 5, z ? z : raw, z ? zlen : len);
		db_bind_u64(st, 6, total);
		db_bind_i64(st, 7, pmin);
		db_bind_i64(st, 8, pmax);
		db_bind_i64(st, 9, (int64_t)bits);
		if (ids->have)
			db_bind_i64(st, 10, by_id ? STORE_BLOCK_FMT_IDS : STORE_BLOCK_FMT_KEYS);
		rc = db_run(st);
	}
	for (size_t i = 1; rc >= 0 && i < n; i++) {
		st = store_stmt(s, q_del);
		if (!st) {
			rc = -EIO;
			break;
		}
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, b[i].seq);
		rc = db_run(st);
	}
	free(z);
	free(raw);
	return rc < 0 ? rc : 0;
}

/* The window's interval rows (its blocks' seqs) as one of the first seq, at the latest time, of the summed
 * intervals and lost and the merged block's keys. Rows that differ in back end, event, frequency or
 * period, a missing row, or a sum over one record's limit (VALIDATE_MAX_INTERVAL_NS,
 * VALIDATE_MAX_SAMPLE_LOST: the readers clamp each row to them) leave the rows as they are: 0 either way. */
static int merge_intervals(struct store *s, int64_t sid, const struct blk *b, size_t n, size_t keys)
{
	struct db_stmt *st = store_stmt(s, q_iv);
	if (!st)
		return -EIO;
	int64_t t = 0, same[4] = {0};
	uint64_t iv = 0, lost = 0;
	bool ok = true;
	for (size_t i = 0; ok && i < n; i++) {
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, b[i].seq);
		int rc = db_step(st);
		ok = rc == 1;
		if (ok) {
			uint64_t v = db_col_u64(st, 1), l = db_col_u64(st, 2);
			ok = v <= VALIDATE_MAX_INTERVAL_NS - iv && l <= VALIDATE_MAX_SAMPLE_LOST - lost;
			iv += v;
			lost += l;
			int64_t ti = db_col_i64(st, 0);
			t = i == 0 || ti > t ? ti : t;
			for (int c = 0; c < 4; c++) {
				int64_t x = db_col_null(st, 3 + c) ? INT64_MIN : db_col_i64(st, 3 + c);
				if (i == 0)
					same[c] = x;
				else if (x != same[c])
					ok = false;
			}
		}
		db_reset(st);
		if (rc < 0)
			return rc;
	}
	if (!ok)
		return 0;
	if (!(st = store_stmt(s, q_iv_upd)))
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, b[0].seq);
	db_bind_i64(st, 3, t);
	db_bind_u64(st, 4, iv);
	db_bind_u64(st, 5, lost);
	db_bind_i64(st, 6, (int64_t)keys);
	int rc = db_run(st);
	for (size_t i = 1; rc >= 0 && i < n; i++) {
		if (!(st = store_stmt(s, q_iv_del)))
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, b[i].seq);
		rc = db_run(st);
	}
	return rc < 0 ? rc : 0;
}

/* One window of blocks b[0..n) merged in its own transaction. */
static int merge_window(struct store *s, int64_t sid, const struct blk *b, size_t n, struct ids *ids,
			struct query_downsample_stats *out)
{
	struct kset ks = {0};
	/* a window of id blocks alone is merged per id into an id block; one mixing formats is merged
	 * per key and written as whole keys */
	bool by_id = ids->cnt != NULL;
	for (size_t i = 0; by_id && i < n; i++)
		by_id = b[i].fmt == STORE_BLOCK_FMT_IDS;
	/* read in the writing transaction: a prune on another connection (the listening collector's
	 * --retain beside its background downsampling) deletes a block before or after, never between */
	int rc = store_begin(s);
	for (size_t i = 0; rc >= 0 && i < n; i++)
		rc = add_block(s, sid, &b[i], &ks, ids, by_id);

	if (rc == -EBADMSG || rc == -ENOENT) {
		store_rollback(s);
		if (rc == -EBADMSG)
			log_warn(
			    "downsample: session %lld: a damaged sample block in the window from seq %lld: "
			    "left as it is (collector check --store ... looks at the store)",
			    (long long)sid, (long long)b[0].seq);
		qm_kset_free(&ks);
		return 0; /* ENOENT: pruned since it was listed */
	}
	size_t nk = by_id ? ids->n : ks.n;
	if (rc >= 0)
		rc = write_window(s, sid, b, n, &ks, ids, by_id);
	if (rc >= 0)
		rc = merge_intervals(s, sid, b, n, nk);
	for (size_t i = 0; by_id && i < ids->n; i++) /* the counts cleared for the next window */
		ids->cnt[ids->order[i]] = 0;
	ids->n = 0;
	if (rc >= 0)
		rc = store_commit(s);
	else
		store_rollback(s);
	if (rc >= 0) {
		out->windows++;
		out->blocks_in += n;
		out->blocks_out++;
	}
	qm_kset_free(&ks);
	return rc < 0 ? rc : 0;
}

static int64_t window_of(int64_t t, int64_t w)
{
	return t >= 0 ? t / w : -((-t + w - 1) / w);
}

/* The seqs where a later process of a pid begins in session sid (sorted; none in an older store). */
static int inc_seqs(struct store *s, int64_t sid, int64_t **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!store_has_table(s, "sample_task_incs"))
		return 0;
	struct db_stmt *st = store_stmt(s, q_inc_seqs);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	size_t cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (qm_grow((void **)out, &cap, *n + 1, sizeof(**out)) < 0) {
			rc = -ENOMEM;
			break;
		}
		(*out)[(*n)++] = db_col_i64(st, 0);
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}

/* How many of the seqs b[0..n) are at or below seq: blocks with the same count hold the same processes. */
static size_t epoch_of(const int64_t *b, size_t n, int64_t seq)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b[mid] <= seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int session_down(struct store *s, int64_t sid, int64_t realtime_ns, int64_t cutoff_ns,
			int64_t window_ns, bool have_rows, size_t max_windows, struct ids *ids,
			struct query_downsample_stats *out)
{
	struct db_stmt *st;
	if (have_rows) {
		if (!(st = store_stmt(s, q_rows)))
			return -EIO;
		db_bind_i64(st, 1, sid);
		int rc = db_step(st);
		int64_t rows = rc == 1 ? db_col_i64(st, 0) : 0;
		db_reset(st);
		if (rc < 0)
			return rc;
		if (rows > 0) {
			out->sessions_left++;
			return 0;
		}
	}
	if (!(st = store_stmt(s, ids->have ? q_list_fmt : q_list)))
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, sat_sub_i64(cutoff_ns, realtime_ns));
	struct blk *b = NULL;
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (qm_grow((void **)&b, &cap, n + 1, sizeof(*b)) < 0) {
			rc = -ENOMEM;
			break;
		}
		b[n++] = (struct blk){db_col_i64(st, 0), db_col_i64(st, 1), keys_of(db_col_i64(st, 2)),
				      db_col_null(st, 3) ? INT64_MIN : db_col_i64(st, 3),
				      db_col_null(st, 4) ? INT64_MIN : db_col_i64(st, 4),
				      db_col_null(st, 5) ? STORE_BLOCK_FMT_KEYS : (int)db_col_i64(st, 5)};
	}
	db_reset(st);
	/* the dictionary after the blocks: every listed block's ids were committed before it */
	bool any_ids = false;
	for (size_t i = 0; i < n && !any_ids; i++)
		any_ids = b[i].fmt == STORE_BLOCK_FMT_IDS;
	if (rc >= 0 && any_ids && (rc = store_keydict_load(s, sid, STORE_KEYIDS_READ_MAX, &ids->kd)) >= 0) {
		ids->cnt = calloc(ids->kd.n + 1, sizeof(*ids->cnt));
		ids->order = malloc((ids->kd.n + 1) * sizeof(*ids->order));
		rc = ids->cnt && ids->order ? 0 : -ENOMEM;
	}
	int64_t *incs = NULL;
	size_t nincs = 0;
	if (rc >= 0)
		rc = inc_seqs(s, sid, &incs, &nincs);
	for (size_t i = 0, j; rc >= 0 && i < n; i = j) {
		int64_t w = window_of(b[i].t_ns, window_ns), keys = b[i].keys;
		size_t ep = epoch_of(incs, nincs, b[i].seq);
		/* a window's blocks of more keys in all than one record's block may hold
		 * (VALIDATE_MAX_SAMPLE_KEYS) are merged in runs under it: the readers' bounds assume it
		 * (STORE_BLOCK_MAX_RAW, what store_block_unpack decompresses; the first-met order of
		 * query_blocks.c), so a summed block over it could be one no reader decodes; and split
		 * where the records' frequency or period changes (an agent upgraded within one boot: 1/F,
		 * then 1/F + 1/128 of it): a merged block's samples are counted at its first seq's
		 * interval's period, so no merged block mixes periods */
		for (j = i + 1; j < n && window_of(b[j].t_ns, window_ns) == w &&
				keys + b[j].keys <= (int64_t)VALIDATE_MAX_SAMPLE_KEYS &&
				epoch_of(incs, nincs, b[j].seq) == ep &&
				b[j].freq_hz == b[i].freq_hz && b[j].period == b[i].period;
		     j++)
			keys += b[j].keys;
		if (j - i < 2)
			continue;
		if (max_windows && out->windows >= max_windows) {
			out->more = true; /* the pass's work is done: the rest in the next */
			break;
		}
		rc = merge_window(s, sid, b + i, j - i, ids, out);
	}
	free(incs);
	free(b);
	store_keydict_free(&ids->kd);
	free(ids->cnt);
	free(ids->order);
	ids->cnt = NULL;
	ids->order = NULL;
	ids->n = 0;
	return rc < 0 ? rc : 0;
}

int query_downsample(struct store *s, int64_t cutoff_ns, int64_t window_ns,
		     struct query_downsample_stats *out)
{
	return query_downsample_some(s, cutoff_ns, window_ns, 0, out);
}

int query_downsample_some(struct store *s, int64_t cutoff_ns, int64_t window_ns, size_t max_windows,
			  struct query_downsample_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (window_ns <= 0)
		return -EINVAL;
	if (!store_has_table(s, "sample_blocks"))
		return 0;
	bool have_rows = store_has_table(s, "cpu_samples");
	struct ids ids = {.have = store_has_key_ids(s)};
	struct db_stmt *st = store_stmt(s, q_sess);
	if (!st)
		return -EIO;
	struct blk *ss = NULL; /* (id, realtime_ns) */
	size_t n = 0, cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (qm_grow((void **)&ss, &cap, n + 1, sizeof(*ss)) < 0) {
			rc = -ENOMEM;
			break;
		}
		ss[n++] = (struct blk){db_col_i64(st, 0), db_col_i64(st, 1), 0, 0, 0, 0};
	}
	db_reset(st);
	for (size_t i = 0; rc >= 0 && !out->more && i < n; i++) {
		rc =
		    session_down(s, ss[i].seq, ss[i].t_ns, cutoff_ns, window_ns, have_rows, max_windows, &ids, out);
		out->sessions++;
	}
	free(ss);
	return rc < 0 ? rc : 0;
}
