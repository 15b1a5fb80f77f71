/* agent: counts perf events of a target (a PID, the whole system, or a
 * command it starts) and streams them to the collector, spooling on disk
 * whatever is not acknowledged yet. Single-threaded poll loop over the
 * collector socket, an interval timerfd, a signalfd and (for -p) a pidfd. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "events.h"
#include "feature_report.h"
#include "frame.h"
#include "generated/config.h"
#include "log.h"
#include "net.h"
#include "perf.h"
#include "record.h"
#include "spool.h"
#include "sysinfo.h"
#include "transport.h"

#define EXIT_AGENT_ERROR 1
#define EXIT_USAGE 2
#define HEARTBEAT_NS 10000000000ull
#define DEFAULT_SPOOL_DIR "/var/tmp/prof-agent-spool"
#define MAX_FRAME ((size_t)CONFIG_MAX_FRAME_KB * 1024u)

struct opts {
	const char *collector;
	pid_t pid;
	bool all;
	char **cmd;
	const char *events;
	unsigned interval_ms;
	double duration_s; /* 0: until the target ends or a signal */
	const char *spool_dir;
	unsigned spool_mb;
	const char *agent_id;
	double flush_timeout_s;
	int verbose; /* -1 quiet, 0 normal, 1 debug */
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: agent --collector HOST:PORT [-p PID | -a | -- CMD [ARGS...]] [-e EVENTS] [-I MS]\n"
		"             [--duration S] [--spool DIR] [--spool-max MB] [--agent-id ID]\n"
		"             [--flush-timeout S] [-v|-q]\n"
		"       agent --version | --features | --help\n"
		"\n"
		"Counts perf events of one target and streams them to the collector.\n"
		"  --collector HOST:PORT  where the collector listens (e.g. 127.0.0.1:7412)\n"
		"  -p PID                 all threads of PID (and children they start)\n"
		"  -a                     the whole system (one counter group per online CPU)\n"
		"  -- CMD [ARGS...]       run CMD and count it (exit code is CMD's)\n"
		"  -e EVENTS              comma list (default: cycles,instructions,cache-misses,branch-misses,\n"
		"                         task-clock,page-faults,context-switches,cpu-migrations; software\n"
		"                         events only when the hardware PMU is missing)\n"
		"  -I MS                  interval between readings (default 1000, min 10)\n"
		"  --duration S           stop after S seconds\n"
		"  --spool DIR            on-disk spool (default %s)\n"
		"  --spool-max MB         spool size cap (default %d)\n"
		"  --agent-id ID          name of this agent (default: hostname)\n"
		"  --flush-timeout S      at the end, wait up to S s for acks (default 5)\n"
		"  -v / -q                more / less logging\n",
		DEFAULT_SPOOL_DIR, CONFIG_SPOOL_MAX_MB);
}

static int parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	if (!*s || *s == '-')
		return -EINVAL;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { OPT_COLLECTOR = 256, OPT_DURATION, OPT_SPOOL, OPT_SPOOL_MAX, OPT_AGENT_ID, OPT_FLUSH, OPT_VERSION,
       OPT_FEATURES };

/* Returns -1 to go on, or an exit code. */
static int parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{"collector", required_argument, NULL, OPT_COLLECTOR},
		{"pid", required_argument, NULL, 'p'},
		{"all-cpus", no_argument, NULL, 'a'},
		{"events", required_argument, NULL, 'e'},
		{"interval", required_argument, NULL, 'I'},
		{"duration", required_argument, NULL, OPT_DURATION},
		{"spool", required_argument, NULL, OPT_SPOOL},
		{"spool-max", required_argument, NULL, OPT_SPOOL_MAX},
		{"agent-id", required_argument, NULL, OPT_AGENT_ID},
		{"flush-timeout", required_argument, NULL, OPT_FLUSH},
		{"verbose", no_argument, NULL, 'v'},
		{"quiet", no_argument, NULL, 'q'},
		{"version", no_argument, NULL, OPT_VERSION},
		{"features", no_argument, NULL, OPT_FEATURES},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	memset(o, 0, sizeof(*o));
	o->interval_ms = 1000;
	o->spool_dir = DEFAULT_SPOOL_DIR;
	o->spool_mb = CONFIG_SPOOL_MAX_MB;
	o->flush_timeout_s = 5;
	bool have_pid = false;
	int c;
	unsigned long v;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:ae:I:vqh", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_COLLECTOR:
			o->collector = optarg;
			break;
		case 'p':
			if (parse_ulong(optarg, INT_MAX, &v) < 0 || v == 0) {
				log_error("-p: '%s' is not a process id", optarg);
				return EXIT_USAGE;
			}
			o->pid = (pid_t)v;
			have_pid = true;
			break;
		case 'a':
			o->all = true;
			break;
		case 'e':
			o->events = optarg;
			break;
		case 'I':
			if (parse_ulong(optarg, 86400000ul, &v) < 0 || v < 10) {
				log_error("-I: interval must be a whole number of milliseconds >= 10 (got '%s')", optarg);
				return EXIT_USAGE;
			}
			o->interval_ms = (unsigned)v;
			break;
		case OPT_DURATION:
			if (parse_double(optarg, &o->duration_s) < 0 || o->duration_s <= 0) {
				log_error("--duration: expected seconds > 0 (got '%s')", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SPOOL:
			o->spool_dir = optarg;
			break;
		case OPT_SPOOL_MAX:
			if (parse_ulong(optarg, 1u << 20, &v) < 0 || v == 0) {
				log_error("--spool-max: expected a size in MiB >= 1 (got '%s')", optarg);
				return EXIT_USAGE;
			}
			o->spool_mb = (unsigned)v;
			break;
		case OPT_AGENT_ID:
			if (!optarg[0] || strlen(optarg) > 128) {
				log_error("--agent-id: expected 1..128 characters");
				return EXIT_USAGE;
			}
			o->agent_id = optarg;
			break;
		case OPT_FLUSH:
			if (parse_double(optarg, &o->flush_timeout_s) < 0) {
				log_error("--flush-timeout: expected seconds >= 0 (got '%s')", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'q':
			o->verbose = -1;
			break;
		case OPT_VERSION:
			printf("agent %s (schema version %u, board %s)\n", AGENT_VERSION, PROF_SCHEMA_VERSION,
			       CONFIG_BOARD_NAME);
			return 0;
		case OPT_FEATURES:
			feature_report_print(stdout);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			if (optopt && optopt < 256)
				log_error("unknown option or missing argument: -%c (see agent --help)", optopt);
			else
				log_error("unknown option or missing argument: %s (see agent --help)", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	if (!o->collector) {
		log_error("--collector HOST:PORT is required (where the collector listens, e.g. 127.0.0.1:7412)");
		return EXIT_USAGE;
	}
	int ntargets = have_pid + o->all + (o->cmd != NULL);
	if (ntargets != 1) {
		log_error("give exactly one target: -p PID, -a (system-wide) or -- CMD [ARGS...]");
		return EXIT_USAGE;
	}
	return -1;
}

struct agent {
	struct opts o;
	enum perf_target_kind kind;
	pid_t child; /* CMD mode */
	int child_status;
	bool child_done;
	bool released; /* the command was let go to exec */
	int pidfd;
	struct event_desc ev[EVENTS_MAX];
	size_t nev;
	struct perf_counters *pc;
	struct perf_value prev[EVENTS_MAX];
	struct perf_value last[EVENTS_MAX];
	uint64_t totals[EVENTS_MAX];
	struct record_builder rb;
	struct spool *spool;
	struct transport *tr;
	uint64_t seq;
	uint64_t rows;
	uint64_t dropped_seen;
	uint64_t not_spooled;
	uint64_t start_ns;
};

static void submit(struct agent *a, uint8_t *frame, size_t len)
{
	int rc = transport_submit(a->tr, a->seq, frame, len);
	free(frame);
	if (rc < 0) {
		if (a->not_spooled++ == 0)
			log_warn("spool: cannot keep record %llu: %s (records that cannot be spooled are lost if "
				 "the connection drops)",
				 (unsigned long long)a->seq, strerror(-rc));
	}
	if (spool_dropped(a->spool) != a->dropped_seen) {
		a->dropped_seen = spool_dropped(a->spool);
		record_builder_redeclare(&a->rb); /* the dropped records may have held the declarations */
	}
}

static int take_row(struct agent *a, uint64_t now)
{
	struct perf_value cur[EVENTS_MAX];
	uint64_t inc[EVENTS_MAX];
	uint32_t pct[EVENTS_MAX];
	int rc = perf_counters_read(a->pc, cur);
	if (rc < 0) {
		log_warn("reading counters: %s", strerror(-rc));
		return rc;
	}
	perf_interval(a->prev, cur, a->nev, inc, pct);
	for (size_t i = 0; i < a->nev; i++)
		a->totals[i] += inc[i];
	memcpy(a->last, cur, a->nev * sizeof(cur[0]));
	uint8_t *frame;
	size_t len;
	a->seq++;
	rc = record_counters_frame(&a->rb, a->seq, &now, 1, inc, pct, &frame, &len);
	if (rc == 0 && spool_would_drop(a->spool, len)) {
		/* This append drops old records: make this record declare its events. */
		free(frame);
		record_builder_redeclare(&a->rb);
		rc = record_counters_frame(&a->rb, a->seq, &now, 1, inc, pct, &frame, &len);
	}
	if (rc < 0) {
		a->seq--;
		log_warn("encoding a counters record: %s", strerror(-rc));
		return rc;
	}
	a->rows++;
	submit(a, frame, len);
	return 0;
}

static void send_heartbeat(struct agent *a, uint64_t now)
{
	uint8_t *frame;
	size_t len;
	if (record_heartbeat_frame(&a->rb, a->seq + 1, now, spool_dropped(a->spool), spool_bytes(a->spool), &frame,
				   &len) < 0)
		return;
	a->seq++;
	submit(a, frame, len);
}

/* Fork CMD blocked on a pipe; *release_fd releases it, *err_fd reports an exec failure. */
static int start_child(struct agent *a, const sigset_t *oldmask, int *release_fd, int *err_fd)
{
	int go[2], ep[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		return -e;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		return -e;
	}
	if (pid == 0) {
		close(go[1]);
		close(ep[0]);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, oldmask, NULL);
		char b;
		ssize_t r;
		do
			r = read(go[0], &b, 1);
		while (r < 0 && errno == EINTR);
		if (r != 1)
			_exit(127); /* the agent gave up before starting us */
		close(go[0]);
		execvp(a->o.cmd[0], a->o.cmd);
		int e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	a->child = pid;
	*release_fd = go[1];
	*err_fd = ep[0];
	return 0;
}

static void kill_child(struct agent *a)
{
	if (a->child > 0 && !a->child_done) {
		kill(a->child, SIGKILL);
		while (waitpid(a->child, NULL, 0) < 0 && errno == EINTR)
			;
		a->child_done = true;
	}
}

static void format_target(const struct agent *a, char *out, size_t outlen)
{
	if (a->kind == PERF_TARGET_SYSTEM) {
		snprintf(out, outlen, "system-wide");
	} else if (a->kind == PERF_TARGET_PID) {
		snprintf(out, outlen, "pid %d", (int)a->o.pid);
	} else {
		size_t off = (size_t)snprintf(out, outlen, "cmd");
		for (char **p = a->o.cmd; *p && off < outlen; p++)
			off += (size_t)snprintf(out + off, outlen - off, " %s", *p);
	}
}

static void print_summary(struct agent *a, uint64_t end_ns, const char *target)
{
	double elapsed = (double)(end_ns - a->start_ns) / 1e9;
	fprintf(stderr, "\n Performance counter stats for '%s' (%llu interval row%s):\n\n", target,
		(unsigned long long)a->rows, a->rows == 1 ? "" : "s");
	for (size_t i = 0; i < a->nev; i++) {
		const struct event_desc *e = &a->ev[i];
		uint32_t pct = perf_running_pct(a->last[i].enabled, a->last[i].running);
		char extra[64] = "";
		if (pct < 100)
			snprintf(extra, sizeof(extra), "  (%u%% of the time counted, scaled)", pct);
		if (events_is_time(e)) {
			double ms = (double)a->totals[i] / 1e6;
			double cpus = elapsed > 0 ? (double)a->totals[i] / 1e9 / elapsed : 0;
			fprintf(stderr, "  %16.2f msec %-24s #  %6.3f CPUs utilized%s\n", ms, e->name, cpus, extra);
		} else {
			fprintf(stderr, "  %16llu      %-24s%s\n", (unsigned long long)a->totals[i], e->name, extra);
		}
	}
	fprintf(stderr, "\n  %16.9f seconds time elapsed\n\n", elapsed);
	const struct transport_stats *st = transport_get_stats(a->tr);
	uint64_t acked = st->acked < a->seq ? st->acked : a->seq;
	fprintf(stderr,
		" records: %llu created, %llu sent (%llu replayed), %llu acked, %llu spooled (unacked), %llu "
		"dropped; %llu bytes on the wire\n",
		(unsigned long long)a->seq, (unsigned long long)st->records_sent,
		(unsigned long long)st->records_replayed, (unsigned long long)acked,
		(unsigned long long)spool_records(a->spool),
		(unsigned long long)(spool_dropped(a->spool) + a->not_spooled), (unsigned long long)st->bytes_sent);
}

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0)
		return (int)fd;
#endif
	(void)pid;
	return -1;
}

int main(int argc, char **argv)
{
	log_init("agent", LOG_LEVEL_INFO);
	struct agent *a = calloc(1, sizeof(*a));
	if (!a) {
		log_error("out of memory");
		return EXIT_AGENT_ERROR;
	}
	int ex = parse_args(argc, argv, &a->o);
	if (ex >= 0) {
		free(a);
		return ex;
	}
	if (a->o.verbose > 0)
		log_set_level(LOG_LEVEL_DEBUG);
	else if (a->o.verbose < 0)
		log_set_level(LOG_LEVEL_ERROR);
	a->pidfd = -1;
	a->kind = a->o.all ? PERF_TARGET_SYSTEM : a->o.cmd ? PERF_TARGET_EXEC : PERF_TARGET_PID;

	int rc, exit_code = 0;
	char err[1536];
	Prof__Hello *hello = NULL;
	int sfd = -1, tfd = -1, release_fd = -1, exec_err_fd = -1;
	uint8_t *hello_frame = NULL;
	size_t hello_len = 0;

	/* Validate what the user can get wrong before touching the system. */
	struct sockaddr_storage ss;
	socklen_t sl;
	if (net_parse_hostport(a->o.collector, &ss, &sl) < 0) {
		log_error("bad --collector '%s': expected HOST:PORT with an IPv4 address, localhost or [IPv6] (e.g. "
			  "127.0.0.1:7412)",
			  a->o.collector);
		free(a);
		return EXIT_USAGE;
	}
	if (a->o.events) {
		if (events_parse(a->o.events, a->ev, EVENTS_MAX, &a->nev, err, sizeof(err)) < 0) {
			log_error("-e: %s", err);
			free(a);
			return EXIT_USAGE;
		}
	}
	if (a->kind == PERF_TARGET_PID && kill(a->o.pid, 0) < 0 && errno == ESRCH) {
		log_error("-p %d: no such process", (int)a->o.pid);
		free(a);
		return EXIT_AGENT_ERROR;
	}

	signal(SIGPIPE, SIG_IGN);
	uint64_t boot_id = sysinfo_boot_id();
	uint64_t base_ns = clock_mono_ns();
	uint64_t real_ns = clock_real_ns();
	char target[1024];
	format_target(a, target, sizeof(target));
	struct sysinfo_opts so = {
		.agent_id = a->o.agent_id,
		.target = target,
		.boot_id = boot_id,
		.base_ns = base_ns,
		.realtime_ns = real_ns,
#ifdef CONFIG_AGENT_OPENCL
		.opencl = true,
#endif
	};
	rc = sysinfo_hello_build(&so, &hello);
	if (rc < 0) {
		log_error("collecting system information: %s", strerror(-rc));
		exit_code = EXIT_AGENT_ERROR;
		goto out;
	}
	rc = record_hello_frame(hello, MAX_FRAME, &hello_frame, &hello_len);
	if (rc < 0) {
		log_error("encoding Hello: %s", strerror(-rc));
		exit_code = EXIT_AGENT_ERROR;
		goto out;
	}
	rc = spool_open(&a->spool, a->o.spool_dir, hello->agent_id, boot_id, (uint64_t)a->o.spool_mb << 20, 0, err,
			sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		exit_code = EXIT_AGENT_ERROR;
		goto out;
	}

	/* Signals arrive through the signalfd; block them before forking so no
	 * SIGCHLD is lost. The child gets the original mask back. */
	sigset_t mask, oldmask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &oldmask);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0) {
		log_error("signalfd: %s", strerror(errno));
		exit_code = EXIT_AGENT_ERROR;
		goto out;
	}

	pid_t probe_pid = a->o.pid;
	int probe_cpu = -1;
	if (a->kind == PERF_TARGET_EXEC) {
		rc = start_child(a, &oldmask, &release_fd, &exec_err_fd);
		if (rc < 0) {
			log_error("cannot start '%s': %s", a->o.cmd[0], strerror(-rc));
			exit_code = EXIT_AGENT_ERROR;
			goto out;
		}
		probe_pid = a->child;
	} else if (a->kind == PERF_TARGET_SYSTEM) {
		int cpus[1];
		probe_pid = -1;
		probe_cpu = perf_online_cpus(cpus, 1) > 0 ? cpus[0] : 0;
	}

	if (a->nev > 0) {
		if (perf_filter_supported(a->ev, &a->nev, probe_pid, probe_cpu, err, sizeof(err)) < 0) {
			log_error("%s", err);
			exit_code = EXIT_AGENT_ERROR;
			goto out;
		}
	} else {
		bool fell_back;
		a->nev = perf_default_events(probe_pid, probe_cpu, a->ev, EVENTS_MAX, &fell_back, err, sizeof(err));
		if (fell_back)
			log_warn("%s", err);
	}
	struct perf_target pt = {.kind = a->kind, .pid = probe_pid};
	rc = perf_counters_open(a->ev, a->nev, &pt, &a->pc, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		exit_code = EXIT_AGENT_ERROR;
		goto out;
	}
	log_debug("counting %zu event(s) in %zu %s (%s)", a->nev, perf_counters_ngroups(a->pc),
		  a->kind == PERF_TARGET_SYSTEM ? "CPU group(s)" : "task group(s)",
		  perf_counters_grouped(a->pc) ? "grouped read" : "one fd per event");
	if (a->kind == PERF_TARGET_PID)
		a->pidfd = open_pidfd(a->o.pid);

	a->start_ns = clock_mono_ns();
	if (release_fd >= 0) {
		char go = 1;
		if (write(release_fd, &go, 1) != 1) {
			log_error("cannot release the command: %s", strerror(errno));
			exit_code = EXIT_AGENT_ERROR;
			goto out;
		}
		close(release_fd);
		release_fd = -1;
		a->released = true;
		int e = 0;
		ssize_t r;
		do
			r = read(exec_err_fd, &e, sizeof(e));
		while (r < 0 && errno == EINTR);
		close(exec_err_fd);
		exec_err_fd = -1;
		if (r == (ssize_t)sizeof(e)) {
			log_error("cannot run '%s': %s", a->o.cmd[0], strerror(e));
			while (waitpid(a->child, NULL, 0) < 0 && errno == EINTR)
				;
			a->child_done = true;
			exit_code = e == ENOENT ? 127 : 126;
			goto out;
		}
	}

	record_builder_init(&a->rb, base_ns, a->kind == PERF_TARGET_SYSTEM ? -1 : (int32_t)probe_pid, a->ev, a->nev,
			    MAX_FRAME);
	rc = transport_create(&a->tr, a->o.collector, a->spool, hello_frame, hello_len, MAX_FRAME, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		exit_code = EXIT_AGENT_ERROR;
		goto out;
	}

	tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (tfd < 0) {
		log_error("timerfd: %s", strerror(errno));
		exit_code = EXIT_AGENT_ERROR;
		goto out;
	}
	struct itimerspec its = {
		.it_interval = {.tv_sec = a->o.interval_ms / 1000, .tv_nsec = (long)(a->o.interval_ms % 1000) * 1000000},
	};
	its.it_value = its.it_interval;
	timerfd_settime(tfd, 0, &its, NULL);

	uint64_t hb_next = a->start_ns + HEARTBEAT_NS;
	uint64_t end_at = a->o.duration_s > 0 ? a->start_ns + (uint64_t)(a->o.duration_s * 1e9) : 0;
	uint64_t kill_at = 0; /* CMD mode: SIGKILL if the command outlives --duration by 2 s */
	bool stop = false, interrupted = false, fatal = false;
	int stop_signal = 0;

	/* ---- measurement loop ---- */
	while (!stop) {
		uint64_t now = clock_mono_ns();
		struct pollfd pfd[4];
		pfd[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
		pfd[1] = (struct pollfd){.fd = tfd, .events = POLLIN};
		pfd[2] = (struct pollfd){.fd = a->pidfd, .events = POLLIN};
		int tmo = transport_poll_prepare(a->tr, &pfd[3], now);
		uint64_t deadlines[3] = {hb_next, end_at, kill_at};
		for (int i = 0; i < 3; i++) {
			if (!deadlines[i])
				continue;
			int ms = deadlines[i] <= now ? 0 : (int)((deadlines[i] - now + 999999) / 1000000);
			if (tmo < 0 || ms < tmo)
				tmo = ms;
		}
		if (a->kind == PERF_TARGET_PID && a->pidfd < 0 && (tmo < 0 || tmo > 200))
			tmo = 200;
		int n = poll(pfd, 4, tmo);
		if (n < 0 && errno != EINTR) {
			log_error("poll: %s", strerror(errno));
			exit_code = EXIT_AGENT_ERROR;
			break;
		}
		now = clock_mono_ns();
		if (n > 0 && (pfd[0].revents & POLLIN)) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGCHLD) {
					int status;
					if (a->child > 0 && !a->child_done && waitpid(a->child, &status, WNOHANG) == a->child) {
						a->child_done = true;
						a->child_status = status;
						stop = true;
					}
				} else if (a->kind == PERF_TARGET_EXEC && !a->child_done && !interrupted) {
					/* Pass it on and wait for the command to end. */
					interrupted = true;
					stop_signal = (int)si.ssi_signo;
					kill(a->child, (int)si.ssi_signo);
					kill_at = now + 2000000000ull;
				} else {
					stop = true;
					stop_signal = (int)si.ssi_signo;
				}
			}
		}
		if (n > 0 && (pfd[1].revents & POLLIN)) {
			uint64_t exp;
			if (read(tfd, &exp, sizeof(exp)) == (ssize_t)sizeof(exp))
				take_row(a, now);
		}
		if (a->kind == PERF_TARGET_PID) {
			if ((a->pidfd >= 0 && n > 0 && (pfd[2].revents & POLLIN)) ||
			    (a->pidfd < 0 && kill(a->o.pid, 0) < 0 && errno == ESRCH)) {
				log_info("process %d exited", (int)a->o.pid);
				stop = true;
			}
		}
		if (hb_next && now >= hb_next) {
			send_heartbeat(a, now);
			hb_next = now + HEARTBEAT_NS;
		}
		if (end_at && now >= end_at) {
			end_at = 0;
			if (a->kind == PERF_TARGET_EXEC && !a->child_done) {
				log_info("--duration reached: stopping the command (SIGTERM)");
				kill(a->child, SIGTERM);
				kill_at = now + 2000000000ull;
			} else {
				stop = true;
			}
		}
		if (kill_at && now >= kill_at && a->kind == PERF_TARGET_EXEC && !a->child_done) {
			log_warn("the command did not stop; sending SIGKILL");
			kill(a->child, SIGKILL);
			kill_at = 0;
		}
		if (transport_process(a->tr, n > 0 ? pfd[3].revents : 0, now) == -EPROTONOSUPPORT) {
			log_error("%s", transport_error(a->tr));
			fatal = true;
			break;
		}
	}

	uint64_t end_ns = clock_mono_ns();
	if (!fatal && exit_code == 0) {
		take_row(a, end_ns); /* the final row */
		perf_counters_disable(a->pc);
		/* ---- flush: wait for the acks ---- */
		uint64_t flush_end = end_ns + (uint64_t)(a->o.flush_timeout_s * 1e9);
		while (spool_records(a->spool) > 0) {
			uint64_t now = clock_mono_ns();
			if (now >= flush_end)
				break;
			struct pollfd pfd[2];
			pfd[0] = (struct pollfd){.fd = sfd, .events = POLLIN};
			int tmo = transport_poll_prepare(a->tr, &pfd[1], now);
			int left = (int)((flush_end - now + 999999) / 1000000);
			if (tmo < 0 || tmo > left)
				tmo = left;
			int n = poll(pfd, 2, tmo);
			now = clock_mono_ns();
			if (n > 0 && (pfd[0].revents & POLLIN)) {
				struct signalfd_siginfo si;
				bool again = false;
				while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
					if (si.ssi_signo != SIGCHLD)
						again = true;
				if (again) {
					log_warn("interrupted while waiting for acks");
					break;
				}
			}
			if (transport_process(a->tr, n > 0 ? pfd[1].revents : 0, now) == -EPROTONOSUPPORT) {
				log_error("%s", transport_error(a->tr));
				fatal = true;
				break;
			}
		}
		if (spool_records(a->spool) > 0)
			log_warn("%llu record(s) not acknowledged by the collector within %g s; they stay in %s",
				 (unsigned long long)spool_records(a->spool), a->o.flush_timeout_s, spool_path(a->spool));
		print_summary(a, end_ns, target);
	}
	if (fatal)
		exit_code = EXIT_AGENT_ERROR;
	else if (exit_code == 0 && a->kind == PERF_TARGET_EXEC) {
		if (!a->child_done) {
			/* Stopped by a signal to the agent before the command ended. */
			int status;
			if (waitpid(a->child, &status, WNOHANG) == a->child) {
				a->child_done = true;
				a->child_status = status;
			}
		}
		if (a->child_done) {
			int st = a->child_status;
			exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
		} else {
			exit_code = 128 + (stop_signal ? stop_signal : SIGTERM);
		}
	}

out:
	if (release_fd >= 0)
		close(release_fd); /* the blocked child sees EOF and exits 127 */
	if (exec_err_fd >= 0)
		close(exec_err_fd);
	if (a->child > 0 && !a->child_done && !a->released)
		kill_child(a); /* never started: it only waited for us */
	/* A released command that is still running is left alone: the agent
	 * must not take the profiled program down with it. */
	perf_counters_close(a->pc);
	transport_destroy(a->tr);
	if (a->spool)
		spool_close(a->spool, true);
	if (a->pidfd >= 0)
		close(a->pidfd);
	if (tfd >= 0)
		close(tfd);
	if (sfd >= 0)
		close(sfd);
	free(hello_frame);
	sysinfo_hello_free(hello);
	free(a);
	return exit_code;
}
