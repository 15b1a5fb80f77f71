/* Query benchmark (issue 27): a store filled with SAMPLES CPU samples of one
 * board through the store's own write path (store_put_record of Samples
 * records, as the collector writes them), then query_run() over all of them
 * (--since covering the whole range) grouped by function and by process, and
 * over the last tenth. Also prints the store's size per board-day.
 * Issue 40: each timed query opens the store as `collector report` does
 * (read-only, --check auto) inside its clock, and the real `collector report`
 * (the binary in this one's parent directory) is timed too, fork to exit. The
 * samples point at a program compiled here with FUNCS functions (cc -no-pie),
 * so rows are per-function names, as a user's profile is, not "[app]".
 *
 * The board: NCPU CPUs sampled at 99 Hz, one record per second (the agent's
 * default interval), PROCS processes x FUNCS functions each (distinct keys
 * pid, tid, ip; one call chain per function), hit with a skewed distribution
 * (a few hot functions, a long tail) as a profile is.
 * With CHURN > 0 the processes are restarted every CHURN intervals under new pids (a
 * board's processes come and go): a --pid query then reads only the blocks of that
 * pid's CHURN seconds, the others are passed over by their pid ranges (timed too).
 * With CHURN > 0 and QUERY_REUSE=1 in the environment, each generation's processes get the same pids
 * again (pid reuse, w44a: TaskName.incarnation = the generation, its mappings from their new ids), so
 * every pid has one process per generation and the query tells them apart per block.
 * Usage: query STORE SAMPLES [NCPU] [PROCS] [FUNCS] [CHURN]   (SAMPLES 0: query an existing STORE only)
 *   STORE: a new SQLite path, "pg" for a throwaway PostgreSQL server (the fill's server CPU counted too),
 *   or a PostgreSQL URI (an empty database; with SAMPLES 0, a store to query). On PostgreSQL the store is
 *   then compacted (collector downsample --per 16s) and reported on again, before the server goes. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "pgserver.h"
#include "query/query.h"
#include "store/store.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* xorshift64 */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct fill {
	unsigned ncpu, procs, funcs, churn;
	bool reuse; /* QUERY_REUSE=1: every generation on the same pids */
	uint64_t samples;
	uint64_t records, rows;
	char app[PATH_MAX];  /* the program the samples are in */
	uint64_t *func_addr; /* its functions' addresses (no-pie: mapped at 0x400000, pgoff 0) */
};

/* A program with funcs functions of >= 64 bytes each, compiled with cc next to the store; their
 * addresses from nm. 0 or -1 (said why). */
static int make_app(struct fill *f, const char *store_path)
{
	char src[PATH_MAX + 8], cmd[3 * PATH_MAX];
	snprintf(f->app, sizeof(f->app), "%s.app", store_path);
	snprintf(src, sizeof(src), "%s.c", f->app);
	FILE *o = fopen(src, "w");
	if (!o)
		return -1;
	for (unsigned i = 0; i < f->funcs; i++)
		fprintf(o,
			"__attribute__((noinline, aligned(64))) int bench_fn_%u(volatile int *p)"
			" { for (int i = 0; i < %u; i++) *p += i * %u; return *p; }\n",
			i, 3 + i % 5, i + 1);
	fprintf(o, "int main(void) { volatile int v = 0; int s = 0;\n");
	for (unsigned i = 0; i < f->funcs; i++)
		fprintf(o, "s += bench_fn_%u(&v);\n", i);
	fprintf(o, "return s == 42; }\n");
	fclose(o);
	snprintf(cmd, sizeof(cmd), "cc -O1 -g0 -no-pie -o %s %s", f->app, src);
	if (system(cmd) != 0) {
		fprintf(stderr, "cannot compile the synthetic program (%s)\n", cmd);
		return -1;
	}
	f->func_addr = calloc(f->funcs, sizeof(*f->func_addr));
	snprintf(cmd, sizeof(cmd), "nm %s", f->app);
	FILE *p = f->func_addr ? popen(cmd, "r") : NULL;
	char line[256];
	unsigned found = 0;
	while (p && fgets(line, sizeof(line), p)) {
		unsigned long long a;
		char t;
		unsigned i;
		if (sscanf(line, "%llx %c bench_fn_%u", &a, &t, &i) == 3 && i < f->funcs &&
		    !f->func_addr[i]) {
			f->func_addr[i] = a;
			found++;
		}
	}
	if (p)
		pclose(p);
	if (found != f->funcs) {
		fprintf(stderr, "nm %s: %u of %u functions\n", f->app, found, f->funcs);
		return -1;
	}
	return 0;
}

/* An address inside function fn (past its first instruction). */
static uint64_t fn_ip(const struct fill *f, unsigned fn, unsigned off)
{
	return f->func_addr[fn] + off;
}

/* Key index k = proc * funcs + func, skewed: ~half the samples on 1/16 of the keys. */
static unsigned pick_key(const struct fill *f)
{
	unsigned n = f->procs * f->funcs;
	uint64_t r = next_rand();
	if (r & 1)
		return (unsigned)((r >> 1) % (n / 16 ? n / 16 : 1));
	return (unsigned)((r >> 1) % n);
}

static int put_interval(struct store *s, int64_t sid, const struct fill *f, uint64_t seq, uint64_t per_interval,
			uint64_t *rows_out)
{
	unsigned nkeys = f->procs * f->funcs;
	uint64_t *hits = calloc(nkeys, sizeof(*hits));
	int32_t *pid = malloc(nkeys * sizeof(*pid)), *tid = malloc(nkeys * sizeof(*tid));
	uint64_t *ip = malloc(nkeys * sizeof(*ip)), *cnt = malloc(nkeys * sizeof(*cnt));
	uint32_t *stk = malloc(nkeys * sizeof(*stk));
	Prof__Mapping *mp = calloc(f->procs, sizeof(*mp));
	Prof__Mapping **mpp = calloc(f->procs, sizeof(*mpp));
	Prof__Stack *st = calloc(nkeys, sizeof(*st));
	Prof__Stack **stp = calloc(nkeys, sizeof(*stp));
	Prof__TaskName *tn = calloc(f->procs, sizeof(*tn));
	Prof__TaskName **tnp = calloc(f->procs, sizeof(*tnp));
	uint64_t *chains = calloc((size_t)nkeys * 3, sizeof(*chains));
	char (*names)[16] = calloc(f->procs, 16);
	int rc = -ENOMEM;
	if (!hits || !pid || !tid || !ip || !cnt || !stk || !mp || !mpp || !st || !stp || !tn || !tnp || !chains ||
	    !names)
		goto out;
	for (uint64_t i = 0; i < per_interval; i++)
		hits[pick_key(f)]++;
	unsigned gen = f->churn ? (unsigned)((seq - 1) / f->churn) : 0; /* the processes' generation */
	int32_t pid0 = 1000 + (int32_t)((f->reuse ? 0 : gen) * f->procs);
	size_t n = 0;
	for (unsigned k = 0; k < nkeys; k++) {
		if (!hits[k])
			continue;
		unsigned p = k / f->funcs, fn = k % f->funcs;
		pid[n] = pid0 + (int32_t)p;
		tid[n] = pid0 + (int32_t)p;
		ip[n] = fn_ip(f, fn, 0x10);
		stk[n] = k + 1;
		cnt[n] = hits[k];
		n++;
	}
	Prof__Samples sm = PROF__SAMPLES__INIT;
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp = &ev;
	size_t nm = 0, ns = 0, nt = 0;
	if (seq == 1 || (f->churn && (seq - 1) % f->churn == 0)) { /* a generation's processes */
		for (unsigned p = 0; p < f->procs; p++) {
			prof__mapping__init(&mp[nm]);
			mp[nm].id = gen * f->procs + p + 1;
			mp[nm].pid = pid0 + (int32_t)p;
			mp[nm].start = 0x400000;
			mp[nm].end = f->func_addr[f->funcs - 1] + 0x1000;
			mp[nm].path = (char *)f->app;
			mpp[nm] = &mp[nm];
			nm++;
			prof__task_name__init(&tn[nt]);
			tn[nt].pid = tn[nt].tid = pid0 + (int32_t)p;
			snprintf(names[p], 16, "proc%u", p);
			tn[nt].comm = tn[nt].thread = names[p];
			if (f->reuse && gen) { /* the pid's gen-th process */
				tn[nt].incarnation = gen;
				tn[nt].first_map_id = mp[nm - 1].id;
			}
			tnp[nt] = &tn[nt];
			nt++;
		}
	}
	if (seq == 1) { /* declarations: once per session */
		ev.id = 1;
		ev.name = "cpu-clock";
		sm.n_new_events = 1;
		sm.new_events = &evp;
		for (unsigned k = 0; k < nkeys; k++) {
			unsigned fn = k % f->funcs;
			prof__stack__init(&st[ns]);
			st[ns].id = k + 1;
			chains[k * 3] = fn_ip(f, fn, 0x10);
			chains[k * 3 + 1] = fn_ip(f, (fn * 7 + 1) % f->funcs, 0x20);
			chains[k * 3 + 2] = fn_ip(f, 0, 0x30);
			st[ns].ips = &chains[k * 3];
			st[ns].n_ips = 3;
			stp[ns] = &st[ns];
			ns++;
		}
	}
	sm.backend = 2;
	sm.t_ns = seq * 1000000000ull;
	sm.interval_ns = 1000000000ull;
	sm.event_id = 1;
	sm.freq_hz = 99;
	sm.n_new_mappings = nm;
	sm.new_mappings = mpp;
	sm.n_new_stacks = ns;
	sm.new_stacks = stp;
	sm.n_new_tasks = nt;
	sm.new_tasks = tnp;
	sm.n_pid = sm.n_tid = sm.n_ip = sm.n_stack_id = sm.n_count = n;
	sm.pid = pid;
	sm.tid = tid;
	sm.ip = ip;
	sm.stack_id = stk;
	sm.count = cnt;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_SAMPLES;
	env.samples = &sm;
	/* BENCH_QUERY_EXACT=1: every record on the exact path (before #40's records sent ahead) */
	static int exact = -1;
	if (exact < 0)
		exact = getenv("BENCH_QUERY_EXACT") && atoi(getenv("BENCH_QUERY_EXACT")) == 1;
	rc = exact ? store_put_record(s, sid, &env, 100 + n * 12)
		   : store_put_record_ahead(s, sid, &env, 100 + n * 12);
	*rows_out = n;
out:
	free(hits);
	free(pid);
	free(tid);
	free(ip);
	free(cnt);
	free(stk);
	free(mp);
	free(mpp);
	free(st);
	free(stp);
	free(tn);
	free(tnp);
	free(chains);
	free(names);
	return rc < 0 ? rc : 0;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* One query as `collector report` runs it: open (read-only, --check auto), query, top rows, close,
 * all inside the clock. */
static int timed_query(const char *path, const char *what, int64_t since, int32_t pid, enum query_group by,
		       double *secs)
{
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.f.since_ns = since;
	if (pid) {
		qo.f.pids[0] = pid;
		qo.f.npids = 1;
	}
	double t0 = now_s(), c0 = cpu_s();
	struct store *s;
	int rc = store_open(path, STORE_READ_ONLY | STORE_CHECK_AUTO, &s);
	if (rc < 0)
		return rc;
	double t_open = now_s() - t0;
	struct query_result *r;
	rc = query_run(s, &qo, &r);
	if (rc < 0) {
		store_close(s);
		return rc;
	}
	struct query_top top;
	rc = query_top(r, by, &top);
	store_close(s);
	*secs = now_s() - t0;
	double cpu = cpu_s() - c0;
	if (rc == 0) {
		printf(
		    "query %s --by %s: %llu samples, %zu stacks, %zu rows, first '%s' self %llu: %.3f s wall "
		    "(open %.3f s), %.3f s CPU; %llu blocks read, %llu passed over\n",
		    what, query_group_name(by), (unsigned long long)r->total, r->nstacks, top.nrows,
		    top.nrows ? top.rows[0].name : "",
		    top.nrows ? (unsigned long long)top.rows[0].self : 0ull, *secs, t_open, cpu,
		    (unsigned long long)r->blocks_read, (unsigned long long)r->blocks_passed);
		query_top_free(&top);
	}
	query_result_free(r);
	return rc;
}

static double pg_server_cpu(const char *dir);
static const char *server_dir; /* the throwaway PostgreSQL server's: its CPU told beside the report's */

/* `collector report --store PATH --since SINCE [--pid ONLY | --comm COMM]` as a user runs it: fork to exit,
 * output discarded. */
static int timed_report(const char *self, const char *path, int64_t since_ns, int32_t only, const char *comm)
{
	char coll[PATH_MAX + 16], dir[PATH_MAX], since[32], pids[16];
	snprintf(pids, sizeof(pids), "%d", only);
	snprintf(dir, sizeof(dir), "%s", self);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = 0;
	snprintf(coll, sizeof(coll), "%s/../collector", dir);
	if (access(coll, X_OK) != 0) {
		printf("collector report: not timed (no %s)\n", coll);
		return 0;
	}
	snprintf(since, sizeof(since), "%.3f", (double)since_ns / 1e9);
	fflush(stdout); /* the child must not write this process's buffered lines again */
	double t0 = now_s(), srv0 = server_dir ? pg_server_cpu(server_dir) : -1;
	pid_t pid = fork();
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		if (only)
			execl(coll, coll, "report", "--store", path, "--since", since, "--pid", pids,
			      (char *)NULL);
		else if (comm)
			execl(coll, coll, "report", "--store", path, "--since", since, "--comm", comm,
			      (char *)NULL);
		else
			execl(coll, coll, "report", "--store", path, "--since", since, (char *)NULL);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "collector report failed\n");
		return -1;
	}
	double wall = now_s() - t0;
	const char *opt = only ? " --pid " : comm ? " --comm " : "", *val = only ? pids : comm ? comm : "";
	printf("collector report --since (all)%s%s: %.3f s wall including open, %.3f s CPU, %ld MiB peak RSS", opt,
	       val, wall,
	       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		   ru.ru_stime.tv_usec / 1e6,
	       ru.ru_maxrss / 1024);
	double srv = srv0 >= 0 ? pg_server_cpu(server_dir) - srv0 : -1; /* its backend, reaped at its exit */
	if (srv >= 0)
		printf(", %.3f s PostgreSQL server CPU", srv);
	printf("\n");
	return 0;
}

/* The CPU (user+sys, s) of a PostgreSQL server's processes so far: the postmaster's own and its reaped
 * backends' (cutime+cstime), and its live children's (checkpointer, WAL writer, the backends still
 * connected). dir: pgserver's dir; -1 where /proc cannot tell. */
static double pg_server_cpu(const char *dir)
{
	char path[PATH_MAX], line[1024];
	snprintf(path, sizeof(path), "%s/data/postmaster.pid", dir);
	FILE *fp = fopen(path, "r");
	long pm = fp && fgets(line, sizeof(line), fp) ? atol(line) : 0;
	if (fp)
		fclose(fp);
	if (pm <= 0)
		return -1;
	double hz = (double)sysconf(_SC_CLK_TCK), total = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		long pid = atol(e->d_name);
		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fp = fopen(path, "r");
		size_t n = fp ? fread(line, 1, sizeof(line) - 1, fp) : 0;
		if (fp)
			fclose(fp);
		line[n] = 0;
		char *rp = strrchr(line, ')'); /* past the command name */
		long ppid;
		unsigned long long ut, st, cut, cst;
		if (!rp || sscanf(rp + 2, "%*c %ld %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu", &ppid, &ut,
				  &st, &cut, &cst) != 5)
			continue;
		if (pid == pm)
			total += (double)(ut + st + cut + cst) / hz;
		else if (ppid == pm)
			total += (double)(ut + st) / hz;
	}
	if (d)
		closedir(d);
	return total;
}

/* `collector downsample --store PATH --older-than 1s --per 16s` (what --compact-after does while
 * listening), fork to exit: wall and CPU printed. */
static int timed_compact(const char *self, const char *path)
{
	char coll[PATH_MAX + 16], dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", self);
	char *slash = strrchr(dir, '/');
	if (!slash)
		return 0;
	*slash = 0;
	snprintf(coll, sizeof(coll), "%s/../collector", dir);
	if (access(coll, X_OK) != 0)
		return 0;
	fflush(stdout);
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		execl(coll, coll, "downsample", "--store", path, "--older-than", "1s", "--per", "16s", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &st, 0, &ru) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "collector downsample failed\n");
		return -1;
	}
	printf("compacted (collector downsample --older-than 1s --per 16s): %.3f s wall, %.3f s collector CPU\n",
	       now_s() - t0,
	       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		   ru.ru_stime.tv_usec / 1e6);
	return 0;
}

int main(int argc, char **argv)
{
	log_init("bench-query", LOG_LEVEL_WARN);
	if (argc < 3) {
		fprintf(stderr,
			"usage: %s STORE|pg|postgresql://URI SAMPLES [NCPU] [PROCS] [FUNCS] [CHURN]\n       %s STORE 0 [PID "
			"[COMM]]\n",
			argv[0], argv[0]);
		return 2;
	}
	struct fill f = {.samples = strtoull(argv[2], NULL, 10),
			 .ncpu = argc > 3 ? (unsigned)atoi(argv[3]) : 4,
			 .procs = argc > 4 ? (unsigned)atoi(argv[4]) : 20,
			 .funcs = argc > 5 ? (unsigned)atoi(argv[5]) : 200,
			 .churn = argc > 6 ? (unsigned)atoi(argv[6]) : 0};
	f.reuse = f.churn && getenv("QUERY_REUSE") && strcmp(getenv("QUERY_REUSE"), "1") == 0;
	struct pgserver pg = {0};
	char uri[512];
	const char *path = argv[1];
	bool own_pg = strcmp(path, "pg") == 0, use_pg = own_pg || strncmp(path, "postgresql://", 13) == 0;
	if (own_pg) {
		char why[512];
		if (pg_start(&pg, why, sizeof(why)) < 0 || pg_new_db(&pg, "query", uri, sizeof(uri)) < 0) {
			fprintf(stderr, "no PostgreSQL: %s\n", why);
			return 1;
		}
		path = uri;
		server_dir = pg.dir;
	} else if (f.samples) {
		unlink(path);
	}
	struct store *s;
	if (f.samples == 0) { /* query an existing store only */
		double secs;
		int32_t pid = argc > 3 ? atoi(argv[3]) : 0; /* query STORE 0 [PID] */
		int rc = timed_query(path, "all", 1, 0, QUERY_BY_FUNCTION, &secs);
		if (rc == 0)
			rc = timed_query(path, "all", 1, 0, QUERY_BY_PROCESS, &secs);
		if (rc == 0)
			rc = timed_report(argv[0], path, 1, 0, NULL);
		if (rc == 0 && pid)
			rc = timed_query(path, "all --pid", 1, pid, QUERY_BY_FUNCTION, &secs);
		if (rc == 0 && pid)
			rc = timed_report(argv[0], path, 1, pid, NULL);
		if (rc == 0 && argc > 4) /* query STORE 0 PID COMM */
			rc = timed_report(argv[0], path, 1, 0, argv[4]);
		return rc < 0 ? 1 : 0;
	}
	if (make_app(&f, use_pg ? "/tmp/bench-query" : path) < 0)
		return 1;
	if (store_open(path, 0, &s) < 0)
		return 1;
	/* The session starts a wall-clock second per interval before now: the samples end now. */
	uint64_t per_interval = 99ull * f.ncpu;
	uint64_t intervals = (f.samples + per_interval - 1) / per_interval;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	Prof__Hello h = PROF__HELLO__INIT;
	h.agent_id = "bench-board";
	h.boot_id = 42;
	h.board = "bench";
	h.schema_version = 1;
	h.realtime_ns = (uint64_t)(now_ns - (int64_t)(intervals + 1) * 1000000000);
	int64_t sid;
	uint64_t max_seq;
	if (store_session_open(s, &h, "bench", &sid, &max_seq, NULL) < 0 || store_commit(s) < 0)
		return 1;
	double t0 = now_s(), c0 = cpu_s(), pg0 = own_pg ? pg_server_cpu(pg.dir) : -1;
	uint64_t rows = 0;
	for (uint64_t seq = 1; seq <= intervals; seq++) {
		uint64_t n = 0;
		if (put_interval(s, sid, &f, seq, per_interval, &n) < 0)
			return 1;
		rows += n;
		if (seq % 200 == 0 && store_commit(s) < 0)
			return 1;
	}
	if (store_commit(s) < 0)
		return 1;
	double fill = now_s() - t0, fill_cpu = cpu_s() - c0;
	uint64_t total = intervals * per_interval;
	printf("filled %llu samples (%llu intervals of 1 s, %u CPUs at 99 Hz = %.1f board-hours), %llu rows, in %.1f s\n",
	       (unsigned long long)total, (unsigned long long)intervals, f.ncpu, (double)intervals / 3600.0,
	       (unsigned long long)rows, fill);
	/* the fill's CPU: this process (the store's write path, the collector's part) and, on PostgreSQL,
	 * the server's processes too (#40: ingest per CPU-second, both engines) */
	double srv = own_pg ? pg_server_cpu(pg.dir) - pg0 : -1;
	printf("fill CPU: %.2f s in the writer (%.2f M samples per writer CPU-second)", fill_cpu,
	       (double)total / 1e6 / (fill_cpu > 0 ? fill_cpu : 1e-9));
	if (use_pg && pg0 >= 0 && srv >= 0)
		printf(", %.2f s in the PostgreSQL server (%.2f M samples per CPU-second of both)", srv,
		       (double)total / 1e6 / (fill_cpu + srv > 0 ? fill_cpu + srv : 1e-9));
	printf("\n");
	if (!use_pg) {
		store_close(s);
		char wal[600];
		snprintf(wal, sizeof(wal), "%s-wal", path);
		struct stat sb, sw;
		off_t size = stat(path, &sb) == 0 ? sb.st_size : 0;
		if (stat(wal, &sw) == 0)
			size += sw.st_size;
		double days = (double)intervals / 86400.0;
		printf("store size: %.1f MB, %.1f bytes/sample, %.1f MB per board-day (%u CPUs at 99 Hz)\n",
		       (double)size / 1e6, (double)size / (double)(intervals * per_interval), (double)size / 1e6 / days,
		       f.ncpu);
	} else {
		store_close(s);
		int64_t size = pg_int(path, "SELECT pg_database_size(current_database())"),
			/* the blocks with the sessions' key dictionaries they refer to (#40 w45a) */
			blocks = pg_int(path, "SELECT pg_total_relation_size('sample_blocks') + COALESCE("
					      "pg_total_relation_size(to_regclass('sample_key_ids')), 0)");
		printf("store size (PostgreSQL, pg_database_size): %.1f MB, %.1f bytes/sample (sample_blocks and "
		       "sample_key_ids with their indexes and TOAST %.1f MB, %.1f bytes/sample)\n",
		       (double)size / 1e6, (double)size / (double)total, (double)blocks / 1e6,
		       (double)blocks / (double)total);
	}
	double secs;
	int64_t start = (int64_t)h.realtime_ns;
	int rc = timed_query(path, "all", start, 0, QUERY_BY_FUNCTION, &secs);
	if (rc == 0)
		rc = timed_query(path, "all", start, 0, QUERY_BY_PROCESS, &secs);
	if (rc == 0)
		rc = timed_query(path, "last tenth", now_ns - (int64_t)(intervals / 10) * 1000000000, 0,
				 QUERY_BY_FUNCTION, &secs);
	/* one pid of many: the first process of the middle generation */
	uint64_t gens = f.churn ? (intervals + f.churn - 1) / f.churn : 1;
	int32_t one = 1000 + (int32_t)((gens / 2) * f.procs);
	if (rc == 0)
		rc = timed_query(path, "all --pid (one of many)", start, one, QUERY_BY_FUNCTION, &secs);
	if (rc == 0)
		rc = timed_report(argv[0], path, start, 0, NULL);
	if (rc == 0)
		rc = timed_report(argv[0], path, start, one, NULL);
	/* one name: its process of every generation (restarted under the same name) */
	if (rc == 0)
		rc = timed_report(argv[0], path, start, 0, "proc0");
	/* PostgreSQL: the report again once the tables have the statistics and visibility map that autovacuum
	 * gives an insert-only table within minutes of such a fill (the reports above ran ~20 s after it, on
	 * tables never analyzed: the planner's row estimates are guesses there, #40 w46a) */
	if (rc == 0 && use_pg) {
		double t0 = now_s();
		if (pg_exec(path, "VACUUM (ANALYZE)") != 0) {
			fprintf(stderr, "bench/query: VACUUM (ANALYZE) failed\n");
			rc = -EIO;
		} else {
			printf("VACUUM (ANALYZE), as autovacuum does after a fill: %.1f s\n", now_s() - t0);
			rc = timed_report(argv[0], path, start, 0, NULL);
		}
	}
	/* PostgreSQL: the compaction and the report over it here, before the server goes (bench-query.sh
	 * does the same for SQLite with the collector) */
	/* BENCH_QUERY_NO_COMPACT=1: the store left as written (a kept server, to compare collectors on it) */
	bool compact = use_pg && !getenv("BENCH_QUERY_NO_COMPACT");
	if (rc == 0 && compact)
		rc = timed_compact(argv[0], path);
	if (rc == 0 && compact)
		rc = timed_report(argv[0], path, start, 0, NULL);
	if (rc == 0 && compact)
		rc = timed_report(argv[0], path, start, 0, NULL);
	free(f.func_addr);
	if (own_pg)
		pg_stop(&pg);
	return rc < 0 ? 1 : 0;
}
