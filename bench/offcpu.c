/* `collector report --offcpu` over a session of many task_times rows (#40 w47a), two collectors
 * side by side on one store, alternated A B A B.
 *
 *   offcpu STORE|pg NREC NTASKS REUSE RUNS COLLECTOR_A COLLECTOR_B
 *
 * fills a session of NREC Samples records, each with NTASKS TaskTime rows (processes of 4 threads,
 * pids from 10000), so NREC x NTASKS task_times rows; REUSE > 0: every REUSE-th process's pid is
 * declared again as incarnation 1 (another name) from the middle record on (pid reuse), 0: none.
 * STORE is a SQLite file (must not exist) or `pg`: a throwaway PostgreSQL server on 127.0.0.1
 * (tests/lib/pgserver.c). Then RUNS times each: `COLLECTOR report --store STORE --session ID
 * --offcpu --json` (output to /dev/null), printing each run's wall and CPU seconds (the child's user
 * + system) and the medians. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pgserver.h"
#include "sample_rec.h"
#include "store/store.h"

enum { THREADS = 4, PID0 = 10000 };

static int put(struct store *s, int64_t sid, uint64_t seq, uint64_t nrec, size_t ntasks, size_t reuse,
	       Prof__TaskTime *tt, Prof__TaskTime **ttp, Prof__TaskName *tn, Prof__TaskName **tnp,
	       char (*names)[16])
{
	int32_t pid[1] = {PID0}, tid[1] = {PID0};
	uint64_t ip[1] = {0x401000}, count[1] = {1};
	uint32_t stack[1] = {0};
	struct sample_rec_keys k = {1, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	uint64_t half = nrec / 2 + 1;
	size_t nn = 0;
	for (size_t i = 0; i < ntasks; i++) {
		size_t proc = i / THREADS;
		int32_t p = PID0 + (int32_t)(proc * THREADS), t = PID0 + (int32_t)i;
		bool later = reuse && proc % reuse == 0 && seq >= half;
		prof__task_time__init(&tt[i]);
		tt[i].pid = p;
		tt[i].tid = t;
		tt[i].on_cpu_ns = 1000 + (seq * 7 + i) % 5000;
		tt[i].off_cpu_ns = 50000 + (seq * 13 + i) % 90000;
		tt[i].switches = 1 + (seq + i) % 9;
		ttp[i] = &tt[i];
		if (seq == 1 || (later && seq == half)) { /* names: each process's at its first record */
			prof__task_name__init(&tn[nn]);
			tn[nn].pid = p;
			tn[nn].tid = t;
			snprintf(names[nn], 16, "%s%zu", later ? "again" : "proc", proc);
			tn[nn].comm = tn[nn].thread = names[nn];
			tn[nn].incarnation = later ? 1 : 0;
			tnp[nn] = &tn[nn];
			nn++;
		}
	}
	sm.n_task_times = ntasks;
	sm.task_times = ttp;
	sm.n_new_tasks = nn;
	sm.new_tasks = tnp;
	int rc = store_put_record(s, sid, &env, 100);
	return rc < 0 ? rc : 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One report: wall and CPU seconds of the child, or -1. */
static int run_report(const char *coll, const char *store, int64_t sid, double *wall, double *cpu)
{
	char sidbuf[32];
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	struct rusage before, after;
	getrusage(RUSAGE_CHILDREN, &before);
	double t0 = now_s();
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0)
			dup2(fd, 1);
		execl(coll, coll, "report", "--store", store, "--session", sidbuf, "--offcpu", "--json",
		      (char *)NULL);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return -1;
	*wall = now_s() - t0;
	getrusage(RUSAGE_CHILDREN, &after);
	*cpu = (double)(after.ru_utime.tv_sec - before.ru_utime.tv_sec + after.ru_stime.tv_sec -
			before.ru_stime.tv_sec) +
	       (double)(after.ru_utime.tv_usec - before.ru_utime.tv_usec + after.ru_stime.tv_usec -
			before.ru_stime.tv_usec) /
		   1e6;
	return 0;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 8) {
		fprintf(stderr, "usage: %s STORE|pg NREC NTASKS REUSE RUNS COLLECTOR_A COLLECTOR_B\n",
			argv[0]);
		return 2;
	}
	log_init("offcpu", LOG_LEVEL_ERROR);
	uint64_t nrec = strtoull(argv[2], NULL, 10);
	size_t ntasks = strtoull(argv[3], NULL, 10), reuse = strtoull(argv[4], NULL, 10);
	int runs = atoi(argv[5]);
	if (!nrec || !ntasks || ntasks > 100000 || runs < 1 || runs > 50) {
		fprintf(stderr, "NREC >= 1, 1 <= NTASKS <= 100000, 1 <= RUNS <= 50\n");
		return 2;
	}
	struct pgserver pg = {0};
	char uri[512], why[512];
	const char *store_path = argv[1];
	if (strcmp(argv[1], "pg") == 0) {
		if (pg_start(&pg, why, sizeof(why)) < 0 || pg_new_db(&pg, "offcpu", uri, sizeof(uri)) < 0) {
			fprintf(stderr, "PostgreSQL: %s\n", why);
			pg_stop(&pg);
			return 1;
		}
		store_path = uri;
	}
	Prof__TaskTime *tt = calloc(ntasks, sizeof(*tt));
	Prof__TaskTime **ttp = calloc(ntasks, sizeof(*ttp));
	Prof__TaskName *tn = calloc(ntasks, sizeof(*tn));
	Prof__TaskName **tnp = calloc(ntasks, sizeof(*tnp));
	char(*names)[16] = calloc(ntasks, 16);
	struct store *s = NULL;
	int64_t sid = 0;
	int rc = tt && ttp && tn && tnp && names ? store_open(store_path, 0, &s) : -ENOMEM;
	if (rc == 0)
		rc = sample_rec_session(s, "offcpu-bench", &sid);
	for (uint64_t seq = 1; rc == 0 && seq <= nrec; seq++) {
		rc = put(s, sid, seq, nrec, ntasks, reuse, tt, ttp, tn, tnp, names);
		if (rc == 0 && seq % 16 == 0)
			rc = store_commit(s);
	}
	if (rc == 0)
		rc = store_commit(s);
	if (s)
		store_close(s);
	free(tt);
	free(ttp);
	free(tn);
	free(tnp);
	free(names);
	if (rc < 0) {
		fprintf(stderr, "fill: %s\n", strerror(-rc));
		pg_stop(&pg);
		return 1;
	}
	/* OFFCPU_ANALYZE=1: the tables analyzed first, as autovacuum does within minutes (review r13 F1:
	 * the planner's choice for the reused pids changed with statistics) */
	const char *an = getenv("OFFCPU_ANALYZE");
	bool analyze = an && strcmp(an, "1") == 0 && store_path == uri;
	if (analyze && pg_exec(uri, "ANALYZE") < 0) {
		fprintf(stderr, "ANALYZE failed\n");
		pg_stop(&pg);
		return 1;
	}
	printf("store %s: session %lld, %llu records x %zu tasks = %llu task_times rows, reuse every %zu%s\n",
	       argv[1], (long long)sid, (unsigned long long)nrec, ntasks, (unsigned long long)(nrec * ntasks),
	       reuse, analyze ? ", analyzed" : "");
	double wall[2][50], cpu[2][50];
	for (int i = 0; i < runs && rc == 0; i++)
		for (int c = 0; c < 2 && rc == 0; c++) {
			rc = run_report(argv[6 + c], store_path, sid, &wall[c][i], &cpu[c][i]);
			if (rc == 0)
				printf("run %d %s: wall %.3f s cpu %.3f s\n", i + 1, c ? "B" : "A",
				       wall[c][i], cpu[c][i]);
			else
				fprintf(stderr, "%s report failed\n", argv[6 + c]);
		}
	for (int c = 0; c < 2 && rc == 0; c++) {
		qsort(wall[c], (size_t)runs, sizeof(double), dcmp);
		qsort(cpu[c], (size_t)runs, sizeof(double), dcmp);
		printf("%s (%s): median wall %.3f s [%.3f-%.3f], cpu %.3f s [%.3f-%.3f]\n", c ? "B" : "A",
		       argv[6 + c], wall[c][runs / 2], wall[c][0], wall[c][runs - 1], cpu[c][runs / 2],
		       cpu[c][0], cpu[c][runs - 1]);
	}
	pg_stop(&pg);
	return rc == 0 ? 0 : 1;
}
