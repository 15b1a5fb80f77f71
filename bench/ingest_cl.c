/* OpenCL command ingest benchmark (#41): what the collector spends, in CPU and
 * in store bytes, per OpenCL command, from an agent's frames to a committed,
 * fsynced store, without the network (bench-opencl-run.sh measures the whole
 * run). COMMANDS commands shaped as `cl_matmul 16 N` sends them (one 16x16
 * NDRange of one kernel after another on an in-order queue, no event of the
 * app's, buffers A and B read and C written; device and host times a few µs
 * apart with jitter), in ClCommandBatch records of 256 as the agent batches
 * them (agent/cl_receiver.c BATCH_MAX), encoded as the agent encodes them
 * (frame_encode), fed through the collector's own ingest path (ingest_frame:
 * decode, validate, store_put_record) into a SQLite store opened as
 * `collector --listen` opens it (synchronous=FULL), committed every 64
 * records as the server's ack window does. The clock covers decoding to the
 * last commit's fsync, best of REPS runs. Store bytes: the pages of the
 * OpenCL command tables and their indexes (SQLite's dbstat: cl_command_blocks
 * since #41, cl_commands before), and the whole file with its WAL.
 * The same source builds against a tree before #41 (the row per command): run
 * both binaries for the before/after (scripts/bench-ingest-cl.sh).
 * Usage: ingest_cl DIR COMMANDS [REPS]   (DIR: where the store goes; deleted after) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "ingest_frames.h"
#include "log.h"

#define BATCH 256u

struct frames {
	uint8_t **buf;
	size_t *len;
	size_t n;
	uint64_t commands, bytes;
};

static uint64_t jitter(uint64_t max)
{
	return bench_rand() % max;
}

/* Frame 0: the Hello; then the commands in batches. */
static void make_frames(struct frames *fr, size_t ncmd)
{
	size_t nrec = (ncmd + BATCH - 1) / BATCH;
	fr->n = nrec + 1;
	fr->buf = calloc(fr->n, sizeof(*fr->buf));
	fr->len = calloc(fr->n, sizeof(*fr->len));
	fr->buf[0] = bench_hello_frame(&fr->len[0]);
	fr->bytes = 0;
	static Prof__ClCommand c[BATCH];
	static Prof__ClCommand *cp[BATCH];
	static uint64_t g[2] = {16, 16}, rd[2] = {1, 2}, wr[1] = {3};
	Prof__ClKernelDesc k = PROF__CL_KERNEL_DESC__INIT, *kp[1] = {&k};
	k.id = 1;
	k.name = "matmul";
	k.program_hash = 0x8f3a2c19d0e4b7a1ull;
	uint64_t id = 0, dev = 5000000000ull, host = 200000000ull;
	for (size_t r = 0; r < nrec; r++) {
		size_t n = ncmd - r * BATCH < BATCH ? ncmd - r * BATCH : BATCH;
		for (size_t i = 0; i < n; i++) {
			Prof__ClCommand *x = &c[i];
			prof__cl_command__init(x);
			cp[i] = x;
			x->id = ++id;
			x->pid = 31337;
			x->queue_id = 1;
			x->type = 0x11F0;
			x->kernel_id = 1;
			x->work_dim = 2;
			x->n_global_size = 2;
			x->global_size = g;
			host += 3000 + jitter(2000); /* an enqueue every few µs */
			dev = (dev > host + 4800000000ull ? dev : host + 4800000000ull) + jitter(500);
			x->host_enqueue_ns = host;
			x->queued_ns = dev;
			x->submit_ns = dev + 800 + jitter(400);
			x->start_ns = x->submit_ns + 1500 + jitter(1000);
			x->end_ns = x->start_ns + 4000 + jitter(1500);
			dev = x->end_ns;
			x->host_complete_ns =
			    host + 1000000 + jitter(4000000); /* seen by the reaper within ms */
			x->prev_in_queue = id - 1;
			x->n_mem_read = 2;
			x->mem_read = rd;
			x->n_mem_written = 1;
			x->mem_written = wr;
			x->layer_event = 1;
		}
		c[0].n_new_kernels = r == 0;
		c[0].new_kernels = kp;
		Prof__ClCommandBatch b = PROF__CL_COMMAND_BATCH__INIT;
		b.n_commands = n;
		b.commands = cp;
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		env.seq = r + 1;
		env.body_case = PROF__ENVELOPE__BODY_CL_BATCH;
		env.cl_batch = &b;
		fr->buf[r + 1] = bench_encode(&env, &fr->len[r + 1]);
		fr->bytes += fr->len[r + 1];
		fr->commands += n;
	}
}


static long file_bytes(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n = 0;
	if (f) {
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		fclose(f);
	}
	return n;
}

/* Pages of the OpenCL command tables and their indexes (dbstat). */
static long cl_pages_bytes(const char *path)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long v = -1;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db,
			       "SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'cl_command%'"
			       " OR name LIKE 'sqlite_autoindex_cl_command%'",
			       -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = (long)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

int main(int argc, char **argv)
{
	log_init("bench-ingest-cl", LOG_LEVEL_WARN);
	if (argc < 3) {
		fprintf(stderr, "usage: %s DIR COMMANDS [REPS]\n", argv[0]);
		return 2;
	}
	size_t ncmd = strtoull(argv[2], NULL, 10);
	int reps = argc > 3 ? atoi(argv[3]) : 3;
	if (ncmd == 0 || reps < 1)
		return 2;
	struct frames fr = {0};
	make_frames(&fr, ncmd);
	char path[600], side[700];
	snprintf(path, sizeof(path), "%s/ingest-cl.db", argv[1]);
	double best = 0;
	for (int r = 0; r < reps; r++) {
		double wall, cpu;
		if (bench_ingest(fr.buf, fr.len, fr.n, path, &wall, &cpu) < 0)
			return 1;
		if (r == 0 || cpu < best)
			best = cpu;
	}
	snprintf(side, sizeof(side), "%s-wal", path);
	long pages = cl_pages_bytes(path), file = file_bytes(path) + file_bytes(side);
	printf("| %llu commands in %zu records (%.1f wire bytes/command) | %.3f | %.2f | %.1f | %.1f |\n",
	       (unsigned long long)fr.commands, fr.n - 1, (double)fr.bytes / (double)fr.commands, best,
	       best / (double)fr.commands * 1e6, (double)pages / (double)fr.commands,
	       (double)file / (double)fr.commands);
	unlink(path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	for (size_t i = 0; i < fr.n; i++)
		free(fr.buf[i]);
	free(fr.buf);
	free(fr.len);
	return 0;
}
