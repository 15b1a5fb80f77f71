/* Store ingest benchmark (issue 40): what the collector spends per sample
 * from an agent's frames to a committed, fsynced store, without the network
 * or ack round trips (bench/ingest.c measures those). RECORDS Samples frames
 * of the synthetic board of bench/query.c (NCPU CPUs at 99 Hz, one record a
 * second, 20 processes x 200 functions with a skewed hit distribution, call
 * chains declared in the first record), encoded as the agent encodes them
 * (frame_encode of an Envelope), are fed through the collector's own ingest
 * path (ingest_frame: decode, validate, store_put_record) into a SQLite store
 * opened as `collector --listen` opens it (synchronous=FULL), committed every
 * 64 records as the server's ack window does. The clock covers decoding to
 * the last commit's fsync. Ceilings on the same frames, same settings:
 *   rows:   one SQLite row per key (session, seq, pid, tid, ip, kip, stack, count);
 *   blob:   one SQLite row per record holding its frame as a blob;
 *   memcpy: the frames copied into one buffer.
 * With SPOOL (an agent's spool session directory: hello.frame + seg-*.spl,
 * what `agent record` leaves when no collector acks it), the frames are a
 * real agent's instead, every record kind it sent, in order.
 * Usage: ingest_store DIR RECORDS [NCPU] [SPOOL]   (DIR: where the stores go; deleted after) */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ingest_frames.h"
#include "log.h"

#define PROCS 20u
#define FUNCS 200u

struct frames {
	uint8_t **buf;
	size_t *len;
	uint64_t *samples;
	size_t n;
	uint64_t total_samples, total_keys, bytes;
};


/* Frame 0: the Hello; frames 1..records: Samples. */
static void make_frames(struct frames *fr, size_t records, unsigned ncpu)
{
	fr->n = records + 1;
	fr->buf = calloc(fr->n, sizeof(*fr->buf));
	fr->len = calloc(fr->n, sizeof(*fr->len));
	fr->samples = calloc(fr->n, sizeof(*fr->samples));
	fr->buf[0] = bench_hello_frame(&fr->len[0]);
	unsigned nkeys = PROCS * FUNCS;
	uint64_t *hits = calloc(nkeys, sizeof(*hits)), *ip = calloc(nkeys, 8), *cnt = calloc(nkeys, 8);
	int32_t *pid = calloc(nkeys, 4), *tid = calloc(nkeys, 4);
	uint32_t *stk = calloc(nkeys, 4);
	Prof__Stack *st = calloc(nkeys, sizeof(*st));
	Prof__Stack **stp = calloc(nkeys, sizeof(*stp));
	uint64_t *chains = calloc((size_t)nkeys * 3, 8);
	Prof__Mapping mp[PROCS], *mpp[PROCS];
	Prof__TaskName tn[PROCS], *tnp[PROCS];
	char names[PROCS][16];
	for (unsigned p = 0; p < PROCS; p++) {
		prof__mapping__init(&mp[p]);
		mp[p].id = p + 1;
		mp[p].pid = 1000 + (int32_t)p;
		mp[p].start = 0x400000;
		mp[p].end = 0x500000;
		mp[p].path = "/usr/bin/app";
		mpp[p] = &mp[p];
		prof__task_name__init(&tn[p]);
		tn[p].pid = tn[p].tid = 1000 + (int32_t)p;
		snprintf(names[p], 16, "proc%u", p);
		tn[p].comm = tn[p].thread = names[p];
		tnp[p] = &tn[p];
	}
	for (unsigned k = 0; k < nkeys; k++) {
		prof__stack__init(&st[k]);
		st[k].id = k + 1;
		chains[k * 3] = 0x400010ull + (k % FUNCS) * 0x40ull;
		chains[k * 3 + 1] = 0x400020ull + ((k % FUNCS) * 7 + 1) % FUNCS * 0x40ull;
		chains[k * 3 + 2] = 0x400030ull;
		st[k].ips = &chains[k * 3];
		st[k].n_ips = 3;
		stp[k] = &st[k];
	}
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp = &ev;
	ev.id = 1;
	ev.name = "cpu-clock";
	uint64_t per = 99ull * ncpu;
	for (size_t r = 1; r <= records; r++) {
		memset(hits, 0, nkeys * sizeof(*hits));
		for (uint64_t i = 0; i < per; i++) {
			uint64_t x = bench_rand();
			unsigned k =
			    (x & 1) ? (unsigned)((x >> 1) % (nkeys / 16)) : (unsigned)((x >> 1) % nkeys);
			hits[k]++;
		}
		size_t n = 0;
		for (unsigned k = 0; k < nkeys; k++) {
			if (!hits[k])
				continue;
			pid[n] = tid[n] = 1000 + (int32_t)(k / FUNCS);
			ip[n] = chains[k * 3];
			stk[n] = k + 1;
			cnt[n] = hits[k];
			n++;
		}
		Prof__Samples sm = PROF__SAMPLES__INIT;
		sm.backend = 2;
		sm.t_ns = r * 1000000000ull;
		sm.interval_ns = 1000000000ull;
		sm.event_id = 1;
		sm.freq_hz = 99;
		if (r == 1) {
			sm.n_new_events = 1;
			sm.new_events = &evp;
			sm.n_new_mappings = PROCS;
			sm.new_mappings = mpp;
			sm.n_new_tasks = PROCS;
			sm.new_tasks = tnp;
		}
		/* the agent declares a call chain in the first record that uses it: here, by thirds */
		if (r <= 3) {
			sm.n_new_stacks = nkeys / 3 + (r == 3 ? nkeys % 3 : 0);
			sm.new_stacks = stp + (r - 1) * (nkeys / 3);
		}
		sm.n_pid = sm.n_tid = sm.n_ip = sm.n_stack_id = sm.n_count = n;
		sm.pid = pid;
		sm.tid = tid;
		sm.ip = ip;
		sm.stack_id = stk;
		sm.count = cnt;
		Prof__Envelope e = PROF__ENVELOPE__INIT;
		e.seq = r;
		e.body_case = PROF__ENVELOPE__BODY_SAMPLES;
		e.samples = &sm;
		fr->buf[r] = bench_encode(&e, &fr->len[r]);
		fr->samples[r] = per;
		fr->total_samples += per;
		fr->total_keys += n;
		fr->bytes += fr->len[r];
	}
	free(hits);
	free(ip);
	free(cnt);
	free(pid);
	free(tid);
	free(stk);
	free(st);
	free(stp);
	free(chains);
}

/* A file's bytes (malloc'd), NULL on error. */
static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = n > 0 ? malloc((size_t)n) : NULL;
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*len = b ? (size_t)n : 0;
	return b;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_frame(struct frames *fr, const uint8_t *f, size_t len)
{
	fr->buf = realloc(fr->buf, (fr->n + 1) * sizeof(*fr->buf));
	fr->len = realloc(fr->len, (fr->n + 1) * sizeof(*fr->len));
	fr->samples = realloc(fr->samples, (fr->n + 1) * sizeof(*fr->samples));
	fr->buf[fr->n] = malloc(len);
	memcpy(fr->buf[fr->n], f, len);
	fr->len[fr->n] = len;
	fr->samples[fr->n] = 0;
	fr->n++;
}

/* A real agent's frames: hello.frame, then every frame of seg-*.spl in name order. 0 or -1. */
static int load_spool(struct frames *fr, const char *dir)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/hello.frame", dir);
	size_t hl;
	uint8_t *h = slurp(path, &hl);
	if (!h) {
		fprintf(stderr, "%s: no hello.frame (not an agent spool session directory)\n", dir);
		return -1;
	}
	add_frame(fr, h, hl);
	free(h);
	DIR *d = opendir(dir);
	char *names[4096];
	size_t nn = 0;
	for (struct dirent *e; d && (e = readdir(d)) && nn < 4096;)
		if (strncmp(e->d_name, "seg-", 4) == 0)
			names[nn++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, nn, sizeof(*names), name_cmp);
	for (size_t i = 0; i < nn; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		size_t len, off = 0;
		uint8_t *b = slurp(path, &len);
		while (b && off < len) {
			uint32_t plen;
			int vl = frame_get_varint(b + off, len - off, &plen);
			if (vl <= 0 || off + (size_t)vl + plen > len)
				break;
			size_t flen = (size_t)vl + plen;
			Prof__Envelope *env = prof__envelope__unpack(NULL, plen, b + off + vl);
			uint64_t n = 0;
			if (env && env->body_case == PROF__ENVELOPE__BODY_SAMPLES) {
				for (size_t k = 0; k < env->samples->n_count; k++)
					n += env->samples->count[k];
				fr->total_keys += env->samples->n_count;
			}
			if (env)
				prof__envelope__free_unpacked(env, NULL);
			add_frame(fr, b + off, flen);
			fr->samples[fr->n - 1] = n;
			fr->total_samples += n;
			fr->bytes += flen;
			off += flen;
		}
		free(b);
		free(names[i]);
	}
	return fr->total_samples ? 0 : -1;
}


/* One table row; the store's bytes per sample (file + WAL after close) where there is a store. */
static void report(const char *what, const struct frames *fr, double wall, double cpu, const char *path)
{
	char size[32] = "-";
	if (path) {
		long total = 0;
		char wal[640];
		snprintf(wal, sizeof(wal), "%s-wal", path);
		const char *files[2] = {path, wal};
		for (int i = 0; i < 2; i++) {
			FILE *f = fopen(files[i], "rb");
			if (f) {
				fseek(f, 0, SEEK_END);
				total += ftell(f);
				fclose(f);
			}
		}
		snprintf(size, sizeof(size), "%.1f", (double)total / (double)fr->total_samples);
	}
	printf("| %s | %llu | %.3f | %.3f | %.2f M | %s |\n", what, (unsigned long long)fr->total_samples,
	       wall, cpu, (double)fr->total_samples / cpu / 1e6, size);
}

static int bench_collector(const struct frames *fr, const char *path)
{
	double wall, cpu;
	if (bench_ingest(fr->buf, fr->len, fr->n, path, &wall, &cpu) < 0)
		return -1;
	report("collector ingest (decode, validate, store, commit per 64)", fr, wall, cpu, path);
	return 0;
}

static int exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "%s: %s\n", sql, err);
		sqlite3_free(err);
		return -1;
	}
	return 0;
}

/* kind 0: a row per key; 1: a blob per record. */
static int bench_sqlite(const struct frames *fr, const char *path, int kind)
{
	unlink(path);
	sqlite3 *db;
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    exec_sql(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;") < 0 ||
	    exec_sql(
		db,
		kind == 0
		    ? "CREATE TABLE s (session INTEGER, seq INTEGER, pid INTEGER, tid INTEGER, ip INTEGER,"
		      " kip INTEGER, stack INTEGER, count INTEGER)"
		    : "CREATE TABLE r (session INTEGER, seq INTEGER, data BLOB, PRIMARY KEY(session, seq))") <
		0)
		return -1;
	sqlite3_stmt *st;
	sqlite3_prepare_v2(db,
			   kind == 0 ? "INSERT INTO s VALUES (1, ?1, ?2, ?3, ?4, ?5, ?6, ?7)"
				     : "INSERT INTO r VALUES (1, ?1, ?2)",
			   -1, &st, NULL);
	double t0 = bench_now_s(), c0 = bench_cpu_s();
	exec_sql(db, "BEGIN");
	for (size_t i = 1; i < fr->n; i++) {
		size_t plen;
		const uint8_t *p = bench_payload(fr->buf[i], fr->len[i], &plen);
		if (kind == 1) {
			sqlite3_bind_int64(st, 1, (int64_t)i);
			sqlite3_bind_blob(st, 2, p, (int)plen, SQLITE_STATIC);
			sqlite3_step(st);
			sqlite3_reset(st);
		} else {
			Prof__Envelope *e = prof__envelope__unpack(NULL, plen, p);
			const Prof__Samples *sm =
			    e && e->body_case == PROF__ENVELOPE__BODY_SAMPLES ? e->samples : NULL;
			for (size_t k = 0; sm && k < sm->n_count; k++) {
				sqlite3_bind_int64(st, 1, (int64_t)i);
				sqlite3_bind_int64(st, 2, sm->pid[k]);
				sqlite3_bind_int64(st, 3, sm->tid[k]);
				sqlite3_bind_int64(st, 4, (int64_t)sm->ip[k]);
				sqlite3_bind_int64(st, 5, sm->n_kip ? (int64_t)sm->kip[k] : 0);
				sqlite3_bind_int64(st, 6, sm->stack_id[k]);
				sqlite3_bind_int64(st, 7, (int64_t)sm->count[k]);
				sqlite3_step(st);
				sqlite3_reset(st);
			}
			prof__envelope__free_unpacked(e, NULL);
		}
		if (i % BENCH_WINDOW == 0) {
			exec_sql(db, "COMMIT");
			exec_sql(db, "BEGIN");
		}
	}
	exec_sql(db, "COMMIT");
	double wall = bench_now_s() - t0, cpu = bench_cpu_s() - c0;
	sqlite3_finalize(st);
	sqlite3_close(db);
	report(kind == 0 ? "SQLite, a row per key (decode + insert, commit per 64)"
			 : "SQLite, a blob per record (insert, commit per 64)",
	       fr, wall, cpu, path);
	return 0;
}

static void bench_memcpy(const struct frames *fr)
{
	uint8_t *dst = malloc(fr->bytes + fr->len[0]);
	double t0 = bench_now_s(), c0 = bench_cpu_s();
	size_t off = 0;
	for (size_t i = 0; i < fr->n; i++) {
		memcpy(dst + off, fr->buf[i], fr->len[i]);
		off += fr->len[i];
	}
	volatile uint8_t sink = dst[off / 2];
	(void)sink;
	double wall = bench_now_s() - t0, cpu = bench_cpu_s() - c0;
	if (cpu < 1e-6)
		cpu = 1e-6;
	report("memcpy of the frames", fr, wall, cpu, NULL);
	free(dst);
}

int main(int argc, char **argv)
{
	log_init("bench-ingest-store", LOG_LEVEL_WARN);
	if (argc < 3) {
		fprintf(stderr, "usage: %s DIR RECORDS [NCPU] [SPOOL]\n", argv[0]);
		return 2;
	}
	size_t records = strtoull(argv[2], NULL, 10);
	unsigned ncpu = argc > 3 ? (unsigned)atoi(argv[3]) : 4;
	if ((records == 0 && argc <= 4) || ncpu == 0)
		return 2;
	struct frames fr = {0};
	if (argc > 4) {
		if (load_spool(&fr, argv[4]) < 0) {
			fprintf(stderr, "%s: no Samples frames\n", argv[4]);
			return 1;
		}
	} else {
		make_frames(&fr, records, ncpu);
	}
	printf("%zu frames (%s), %llu samples in %llu keys, %llu bytes on the wire (%.2f bytes/sample)\n\n",
	       fr.n - 1, argc > 4 ? "a real agent's spool" : "Samples of the synthetic board",
	       (unsigned long long)fr.total_samples, (unsigned long long)fr.total_keys,
	       (unsigned long long)fr.bytes, (double)fr.bytes / (double)fr.total_samples);
	printf("| path | samples | wall s | CPU s | samples per CPU-second | store bytes/sample |\n"
	       "|---|---|---|---|---|---|\n");
	char p1[600], p2[600], p3[600];
	snprintf(p1, sizeof(p1), "%s/ingest-collector.db", argv[1]);
	snprintf(p2, sizeof(p2), "%s/ingest-rows.db", argv[1]);
	snprintf(p3, sizeof(p3), "%s/ingest-blob.db", argv[1]);
	int rc = bench_collector(&fr, p1);
	if (rc == 0)
		rc = bench_sqlite(&fr, p2, 0);
	if (rc == 0)
		rc = bench_sqlite(&fr, p3, 1);
	bench_memcpy(&fr);
	const char *paths[] = {p1, p2, p3};
	for (int i = 0; i < 3; i++) {
		char side[640];
		unlink(paths[i]);
		snprintf(side, sizeof(side), "%s-wal", paths[i]);
		unlink(side);
		snprintf(side, sizeof(side), "%s-shm", paths[i]);
		unlink(side);
	}
	for (size_t i = 0; i < fr.n; i++)
		free(fr.buf[i]);
	free(fr.buf);
	free(fr.len);
	free(fr.samples);
	return rc < 0 ? 1 : 0;
}
