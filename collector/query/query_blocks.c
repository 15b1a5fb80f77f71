/* The packed sample_blocks of a session's time range, decoded and summed per
 * key (query_priv.h). The store is read on the calling thread (its connection
 * is not shared); the blocks' bytes are copied in batches to up to
 * qm_decode_threads() threads that decompress, decode and sum them into a set
 * of their own, merged at the end and put back in the order the keys were
 * first met, so the result does not depend on which thread read what. A range
 * of few blocks is read on the calling thread alone (no thread is started).
 * Memory: at most QB_BATCHES batches in flight, each QB_BATCH_BLOCKS blocks
 * or QB_BATCH_BYTES bytes (one block may be larger: it is copied whole). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "query_priv.h"
#include "sat.h"
#include "store/store_keyids.h"
#include "validate_samples.h"

#define QB_MAX_THREADS 8
#define QB_DEFAULT_THREADS 2 /* the target host: 2 cores (bench/RESULTS.md, #40) */
/* Blocks read on the calling thread before any thread starts: at most QB_SEQUENTIAL blocks and
 * QB_SEQUENTIAL_BYTES of them (256 of a 1 s record's ~1.6 KB; ~40 compacted 16 s blocks of ~12 KB, which
 * the calling thread alone took a sixth of the report's range to decode, #40 w40h). */
#define QB_SEQUENTIAL 256
#define QB_SEQUENTIAL_BYTES (512u * 1024)
#define QB_BATCH_BLOCKS 64
#define QB_BATCH_BYTES (256u * 1024)
/* Batches in flight: two per thread and one being filled. The calling thread, reading the store, is
 * the slower side (bench/RESULTS.md, w40h): more only touched fresh memory (page faults). */
#define QB_BATCHES(nthreads) (2 * (nthreads) + 1)

/* seq: which of a reused pid's processes the block's keys are (query_incs.c); fmt: whole keys or ids
 * (store_keyids.h; an older store opened read-only has no such column, nor id blocks) */
#define Q_RANGE " FROM sample_blocks WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3"
/* t_ns: where a slice may end (qm_keys_from_blocks' stop_keys). In (t_ns, seq) order on every back end
 * (review r6 of w45d: without ORDER BY, PostgreSQL may read a whole range in heap order and a slice
 * of it by the index, so the first-met order, ties in top and what goes to "[other]" differed);
 * SQLite still searches the (session_id, t_ns) index, sorting only blocks of one t_ns by seq. */
#define Q_ORDER " ORDER BY t_ns, seq"
static const char q_blocks[] = "SELECT data, seq, 0, t_ns" Q_RANGE Q_ORDER;
static const char q_blocks_fmt[] = "SELECT data, seq, fmt, t_ns" Q_RANGE Q_ORDER;
/* With a --pid filter: only blocks whose pid range holds one of the pids and whose pid bits have one of
 * theirs (an older collector's blocks, without them, always), checked in the index sample_blocks_keys
 * before the row is read; the others counted. */
#define PID_TERM " AND (pid_bits IS NULL OR (pid_max >= ?4 AND pid_min <= ?5 AND (pid_bits & ?6) != 0))"
static const char q_blocks_pids[] = "SELECT data, seq, 0, t_ns" Q_RANGE PID_TERM Q_ORDER;
static const char q_blocks_pids_fmt[] = "SELECT data, seq, fmt, t_ns" Q_RANGE PID_TERM Q_ORDER;
static const char q_nblocks_range[] =
    "SELECT COUNT(*) FROM sample_blocks WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3";

unsigned qm_decode_threads(void)
{
	const char *e = getenv("PROF_QUERY_THREADS"); /* 1: no thread (tests, benchmarks) */
	if (e && *e) {
		long n = strtol(e, NULL, 10);
		return n < 1 ? 1 : n > QB_MAX_THREADS ? QB_MAX_THREADS : (unsigned)n;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	return cpus < 2 ? 1 : cpus < QB_DEFAULT_THREADS ? (unsigned)cpus : QB_DEFAULT_THREADS;
}

/* What decodes blocks into one set: the calling thread's or a worker's. */
struct decoder {
	struct kset ks;
	struct qm_kcache kc; /* its keys' bytes -> their rows in ks (query_kcache.c) */
	bool cached;	     /* PROF_QUERY_KEY_CACHE=0: every key decoded (tests, benchmarks) */
	uint8_t *buf;	     /* decompressed block, kept across blocks */
	size_t cap;
	struct store_block_key *keys; /* its keys, kept across blocks */
	size_t capkeys;
	const struct query_filter *f;
	const struct sess *se; /* its later processes of a pid (pid reuse), read only */
	const struct store_keydict *kd; /* the session's keys by id (id blocks), read only */
	uint32_t *idrow;		/* per id: 0 not met yet, its row in ks + 1, or QB_SKIP (filtered) */
	uint64_t *idcnt;		/* per id: its counts summed since met (added to its row at the end) */
	struct {
		int32_t pid;
		uint32_t inc;
		int64_t seq; /* -1: empty */
	} ic[64];	      /* the incarnations met last, by pid mod 64: a block's keys share its seq */
	int64_t sid;
	bool warned;
};

static bool key_cache_on(void)
{
	const char *e = getenv("PROF_QUERY_KEY_CACHE");
	return !(e && strcmp(e, "0") == 0);
}

static void damaged_block(struct decoder *d)
{
	if (!d->warned)
		log_warn("session %lld: a damaged sample block (ignored from there)", (long long)d->sid);
	d->warned = true;
}

#define QB_SKIP UINT32_MAX

/* An id block's keys summed per id (#40 w45a): a key met before in the session costs its two
 * varints and an add; the first time an id is met its key is filtered and added to the set at
 * first + its place among the block's kept keys, as the key format's plain path does. */
static int sum_ids(struct decoder *d, const uint8_t *p, size_t len, uint64_t first)
{
	const struct store_keydict *kd = d->kd;
	if (!d->idrow) {
		d->idrow = calloc(kd->n + 1, sizeof(*d->idrow));
		d->idcnt = calloc(kd->n + 1, sizeof(*d->idcnt));
		if (!d->idrow || !d->idcnt)
			return -ENOMEM;
	}
	const struct query_filter *f = d->f;
	int64_t prev = -1;
	uint64_t n = 0;
	for (size_t off = 0; off < len;) {
		uint32_t id;
		uint64_t cnt;
		size_t used = store_idblock_get(p + off, len - off, kd->n, &prev, &id, &cnt);
		if (!used) {
			damaged_block(d);
			return 0;
		}
		off += used;
		if (cnt > VALIDATE_MAX_SAMPLE_COUNT) /* as the readers take it */
			cnt = VALIDATE_MAX_SAMPLE_COUNT;
		uint32_t r = d->idrow[id];
		if (r == QB_SKIP)
			continue;
		if (r) {
			sat_inc_u64(&d->idcnt[id], cnt);
			n++;
			continue;
		}
		struct store_block_key k = kd->keys[id];
		if (f->npids && !qm_in_pid_list(f->pids, f->npids, k.pid)) {
			d->idrow[id] = QB_SKIP;
			continue;
		}
		k.count = cnt;
		size_t row;
		if (qm_kset_add_at(&d->ks, &k, first + n, &row) < 0)
			return -ENOMEM;
		d->idrow[id] = (uint32_t)row + 1;
		n++;
	}
	return 0;
}

/* The counts sum_ids kept per id added to their rows. */
static void flush_ids(struct decoder *d)
{
	for (uint32_t i = 0; d->idrow && i < d->kd->n; i++)
		if (d->idrow[i] && d->idrow[i] != QB_SKIP && d->idcnt[i]) {
			sat_inc_u64(&d->ks.rows[d->idrow[i] - 1].count, d->idcnt[i]);
			d->idcnt[i] = 0;
		}
}

/* Block number no of record seq (its keys first met at no << 24 | key) into d's set. */
static int decode_block(struct decoder *d, const uint8_t *z, size_t zlen, uint64_t no, int64_t seq, int fmt)
{
	size_t len, off = 0;
	const uint8_t *p = store_block_unpack_to(z, zlen, &len, &d->buf, &d->cap);
	if (!p)
		return -ENOMEM;
	const struct query_filter *f = d->f;
	if (fmt == STORE_BLOCK_FMT_IDS && !d->se->nstarts) /* a reused pid's keys: the plain path below */
		return sum_ids(d, p, len, no << 24);
	if (d->cached && fmt != STORE_BLOCK_FMT_IDS) {
		bool damaged;
		int rc = qm_kcache_sum_block(&d->kc, &d->ks, p, len, f, no << 24, &damaged);
		if (damaged)
			damaged_block(d);
		return rc;
	}
	size_t n = 0;
	int64_t prev = -1;
	for (uint64_t i = 0; off < len; i++) {
		if (n == d->capkeys && qm_grow((void **)&d->keys, &d->capkeys, n + 1, sizeof(*d->keys)) < 0)
			return -ENOMEM;
		struct store_block_key *kp = &d->keys[n];
		size_t used = store_block_next(p + off, len - off, fmt, d->kd, &prev, kp);
		if (!used) {
			damaged_block(d);
			break;
		}
		off += used;
		if (f->npids && !qm_in_pid_list(f->pids, f->npids, kp->pid))
			continue;
		if (kp->count > VALIDATE_MAX_SAMPLE_COUNT) /* stored unchecked by an older collector */
			kp->count = VALIDATE_MAX_SAMPLE_COUNT;
		if (d->se->nstarts) { /* a pid used again in the session: which process this record's is */
			size_t h = (uint32_t)kp->pid & 63;
			if (d->ic[h].seq != seq || d->ic[h].pid != kp->pid) {
				d->ic[h].pid = kp->pid;
				d->ic[h].seq = seq;
				d->ic[h].inc = qm_inc_of(d->se, kp->pid, seq);
			}
			kp->inc = d->ic[h].inc;
		}
		n++;
	}
	/* keys met in order: block << 24 | its n-th kept key (a block has at most 65536) */
	return qm_kset_add_many(&d->ks, d->keys, n, no << 24);
}

static void decoder_free(struct decoder *d)
{
	free(d->idrow);
	free(d->idcnt);
	qm_kcache_free(&d->kc);
	free(d->buf);
	free(d->keys);
}

struct batch {
	uint64_t first; /* number of its first block */
	size_t n, used, cap;
	size_t off[QB_BATCH_BLOCKS + 1];
	int64_t seq[QB_BATCH_BLOCKS];
	int8_t fmt[QB_BATCH_BLOCKS];
	uint8_t *data;
	struct batch *next;
};

struct pool {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct batch *head, *tail, *free;
	size_t nbatches, maxbatches; /* made; at most */
	bool closing;
	int err;
	struct worker {
		struct pool *p;
		pthread_t th;
		bool started;
		struct decoder d;
		size_t nkeys; /* d.ks.n after its last batch (under mu) */
	} w[QB_MAX_THREADS];
	size_t nw;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->head && !p->closing)
			pthread_cond_wait(&p->work, &p->mu);
		struct batch *b = p->head;
		if (!b)
			break;
		p->head = b->next;
		if (!p->head)
			p->tail = NULL;
		int err = p->err;
		pthread_mutex_unlock(&p->mu);
		for (size_t i = 0; !err && i < b->n; i++)
			err = decode_block(&w->d, b->data + b->off[i], b->off[i + 1] - b->off[i], b->first + i, b->seq[i],
					   b->fmt[i]);
		pthread_mutex_lock(&p->mu);
		w->nkeys = w->d.ks.n;
		if (err && !p->err)
			p->err = err;
		b->next = p->free;
		p->free = b;
		pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	store_block_thread_end();
	return NULL;
}

/* A free batch (made while fewer than QB_BATCHES exist, else waited for); NULL: -ENOMEM. */
static struct batch *take_batch(struct pool *p)
{
	pthread_mutex_lock(&p->mu);
	while (!p->free && p->nbatches >= p->maxbatches)
		pthread_cond_wait(&p->done, &p->mu);
	struct batch *b = p->free;
	if (b)
		p->free = b->next;
	else if ((b = calloc(1, sizeof(*b))))
		p->nbatches++;
	pthread_mutex_unlock(&p->mu);
	if (b)
		b->n = b->used = b->off[0] = 0;
	return b;
}

static void give_batch(struct pool *p, struct batch *b)
{
	pthread_mutex_lock(&p->mu);
	b->next = NULL;
	if (p->tail)
		p->tail->next = b;
	else
		p->head = b;
	p->tail = b;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
}

static int batch_put(struct batch *b, const uint8_t *z, size_t zlen, int64_t seq, int fmt)
{
	if (b->used + zlen > b->cap) {
		size_t nc = b->cap ? b->cap : QB_BATCH_BYTES;
		while (nc < b->used + zlen)
			nc *= 2;
		uint8_t *n = realloc(b->data, nc);
		if (!n)
			return -ENOMEM;
		b->data = n;
		b->cap = nc;
	}
	memcpy(b->data + b->used, z, zlen);
	b->seq[b->n] = seq;
	b->fmt[b->n] = (int8_t)fmt;
	b->used += zlen;
	b->off[++b->n] = b->used;
	return 0;
}

static int pool_start(struct pool *p, unsigned n, const struct decoder *proto)
{
	/* static initialisers: nothing to fail (pool_finish destroys them) */
	p->mu = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
	p->work = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	p->done = (pthread_cond_t)PTHREAD_COND_INITIALIZER;
	p->maxbatches = QB_BATCHES(n);
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &p->w[i];
		w->p = p;
		w->d = (struct decoder){
		    .f = proto->f, .se = proto->se, .kd = proto->kd, .sid = proto->sid, .cached = proto->cached,
		    .warned = proto->warned};
		for (size_t j = 0; j < 64; j++)
			w->d.ic[j].seq = -1;
		if (pthread_create(&w->th, NULL, worker_main, w) != 0)
			break;
		w->started = true;
		p->nw++;
	}
	return p->nw ? 0 : -EAGAIN;
}

/* Waits for the workers, merges their sets into ks and frees the pool. */
static int pool_finish(struct pool *p, struct kset *ks, bool *warned)
{
	pthread_mutex_lock(&p->mu);
	p->closing = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->mu);
	int rc = 0;
	for (size_t i = 0; i < p->nw; i++) {
		struct worker *w = &p->w[i];
		pthread_join(w->th, NULL);
		qm_kcache_flush(&w->d.kc, &w->d.ks);
		flush_ids(&w->d);
		if (rc == 0)
			rc = qm_kset_merge(ks, &w->d.ks);
		*warned = *warned || w->d.warned;
		qm_kset_free(&w->d.ks);
		decoder_free(&w->d);
	}
	if (rc == 0)
		rc = p->err;
	for (struct batch *b = p->free, *n; b; b = n) {
		n = b->next;
		free(b->data);
		free(b);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	return rc;
}

int qm_count_passed(struct store *s, struct build *b, int64_t sid, int64_t lo, int64_t hi, uint64_t read)
{
	struct db_stmt *st = store_stmt(s, q_nblocks_range);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	int rc = db_step(st);
	if (rc == 1 && (uint64_t)db_col_i64(st, 0) > read)
		b->r->blocks_passed += (uint64_t)db_col_i64(st, 0) - read;
	db_reset(st);
	return rc < 0 ? rc : 0;
}

/* The keys summed so far: the calling thread's and the workers' as of their last batch (a key met by
 * several counted once each: at least the distinct keys, up to the batches in flight). */
static size_t keys_held(const struct decoder *d, struct pool *p, bool pooled)
{
	size_t n = d->ks.n;
	if (!pooled)
		return n;
	pthread_mutex_lock(&p->mu);
	for (size_t i = 0; i < p->nw; i++)
		n += p->w[i].nkeys;
	pthread_mutex_unlock(&p->mu);
	return n;
}

int qm_keydict_load(struct store *s, struct build *bu, int64_t sid, struct store_keydict *kd)
{
	/* one statement at a time: no block row held meanwhile */
	return bu->have_key_ids ? store_keydict_load(s, sid, STORE_KEYIDS_READ_MAX, kd) : 0;
}

int qm_keydict_extend(struct store *s, struct build *bu, int64_t sid, struct store_keydict *kd)
{
	/* between two slices: no block row held. In the query's read snapshot (store_read_begin, both
	 * engines) nothing can be new: only reads without one (a writer's open transaction) extend */
	return bu->have_key_ids && !store_read_snapshot(s) ? store_keydict_extend(s, sid, STORE_KEYIDS_READ_MAX, kd)
							    : 0;
}

int qm_keys_from_blocks(struct store *s, struct build *bu, const struct sess *se, const struct query_filter *f,
			const struct store_keydict *kd, int64_t lo, int64_t hi, size_t stop_keys, int64_t *stop_t,
			struct kset *ks)
{
	*stop_t = hi;
	int64_t sid = se->id;
	bool by_pid = f->npids && bu->have_pid_cols;
	struct db_stmt *st = store_stmt(s, by_pid ? (bu->have_key_ids ? q_blocks_pids_fmt : q_blocks_pids)
					      : (bu->have_key_ids ? q_blocks_fmt : q_blocks));
	if (!st)
		return -EIO;
	store_read_index_order(s, true); /* PostgreSQL: the (session_id, t_ns) index's order, no sort */
	db_bind_i64(st, 1, sid);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	if (by_pid) {
		int32_t pmin = f->pids[0], pmax = f->pids[0];
		uint64_t bits = 0;
		for (size_t i = 0; i < f->npids; i++) {
			pmin = f->pids[i] < pmin ? f->pids[i] : pmin;
			pmax = f->pids[i] > pmax ? f->pids[i] : pmax;
			bits |= STORE_BLOCK_PID_BIT(f->pids[i]);
		}
		db_bind_i64(st, 4, pmin);
		db_bind_i64(st, 5, pmax);
		db_bind_i64(st, 6, (int64_t)bits);
	}
	struct decoder d = {.ks = *ks, .f = f, .se = se, .kd = kd, .sid = sid, .warned = bu->damaged_sid == sid,
			     /* the cache keys a key by its bytes alone: not where a pid's keys differ by record (reuse) */
			     .cached = key_cache_on() && !se->nstarts};
	for (size_t j = 0; j < 64; j++)
		d.ic[j].seq = -1;
	unsigned nthreads = qm_decode_threads();
	struct pool p = {0};
	bool pooled = false;
	struct batch *b = NULL;
	int rc = 0, err = 0;
	uint64_t no = 0;
	size_t seq_bytes = 0; /* read on the calling thread before the pool */
	int64_t last_t = lo;
	while (!err && (rc = db_step(st)) == 1) {
		int64_t t = db_col_i64(st, 3);
		/* stop_keys held: the slice ends where t_ns changes (the next one starts there), whatever the
		 * blocks' key counts said (keys of long-lived processes, then a burst of short ones) */
		if (stop_keys && no && t != last_t && keys_held(&d, &p, pooled) >= stop_keys) {
			*stop_t = t;
			break;
		}
		last_t = t;
		size_t zlen;
		const uint8_t *z = db_col_blob(st, 0, &zlen);
		int64_t seq = db_col_i64(st, 1);
		int fmt = db_col_null(st, 2) ? STORE_BLOCK_FMT_KEYS : (int)db_col_i64(st, 2);
		if (!pooled && (nthreads < 2 || (no < QB_SEQUENTIAL && seq_bytes < QB_SEQUENTIAL_BYTES))) {
			seq_bytes += zlen;
			err = decode_block(&d, z, zlen, no++, seq, fmt);
			continue;
		}
		if (!pooled) {
			pooled = true;
			if (pool_start(&p, nthreads, &d) < 0) { /* no thread: the calling one reads on */
				pool_finish(&p, &d.ks, &d.warned);
				pooled = false;
				nthreads = 1;
				err = decode_block(&d, z, zlen, no++, seq, fmt);
				continue;
			}
		}
		/* full: handed on, not grown (a grown batch was a fresh mapping, its pages faulted in) */
		if (b && b->n && b->used + zlen > QB_BATCH_BYTES) {
			give_batch(&p, b);
			b = NULL;
		}
		if (!b && !(b = take_batch(&p))) {
			err = -ENOMEM;
			break;
		}
		if (b->n == 0)
			b->first = no;
		err = batch_put(b, z, zlen, seq, fmt);
		no++;
		if (!err && (b->n == QB_BATCH_BLOCKS || b->used >= QB_BATCH_BYTES)) {
			give_batch(&p, b);
			b = NULL;
			pthread_mutex_lock(&p.mu);
			err = p.err;
			pthread_mutex_unlock(&p.mu);
		}
	}
	db_reset(st);
	if (rc >= 0) /* a failed statement failed the transaction: the mend or its end sees to it (r12 F1) */
		store_read_index_order(s, false);
	if (pooled) {
		if (b && b->n)
			give_batch(&p, b);
		else if (b) {
			free(b->data);
			free(b);
		}
		int prc = pool_finish(&p, &d.ks, &d.warned);
		if (!err)
			err = prc;
	}
	qm_kcache_flush(&d.kc, &d.ks);
	flush_ids(&d);
	decoder_free(&d);
	if (d.warned)
		bu->damaged_sid = sid; /* warned once per session's range, not per slice */
	*ks = d.ks;
	if (!err && rc < 0)
		err = rc;
	if (pooled)
		ks->unordered = true; /* merged: qm_kset_order puts the rows back in order */
	bu->r->blocks_read += no;
	return err;
}
