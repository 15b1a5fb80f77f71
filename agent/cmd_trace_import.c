/* agent trace-import: stream a full instruction trace in the native format
 * (tools/qemu-plugin's output; a file, or a pipe from the tracer) to the
 * collector as TraceWindow records, through the usual session (spool, acks,
 * reconnect, exactly once). The trace is cut into pieces of --window
 * instructions (agent/trace/import.h) that the collector joins back into one
 * stream. Memory is bounded: one piece and one read buffer.
 *
 * Back-pressure: while the spool has room the input is read as fast as it
 * comes, so the tracer never waits for the network. When the next pieces would
 * make the spool drop records (collector away, or slower than the tracer),
 * reading pauses: a tracer writing into a pipe then blocks in write(), and the
 * traced program with it, for at most --max-stall seconds per episode. After
 * that the input is read on and the pieces that do not fit are discarded and
 * counted (the collector sees the gap: trace_pos jumps, and it analyses the
 * parts apart), so the program is never held back longer than that. */
#include "generated/config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_opts.h"
#include "commands.h"
#include "log.h"

#ifndef CONFIG_AGENT_TRACE_IMPORT
int cmd_trace_import(int argc, char **argv)
{
	log_error("trace-import is not compiled in (CONFIG_AGENT_TRACE_IMPORT; static board agents leave it out)");
	return EXIT_USAGE;
}
#else

#include "trace/native.h"
#include "net.h"
#include "trace/import.h"

#define OPT_WINDOW 1000
#define OPT_ARCH 1001
#define OPT_TRACER 1002
#define OPT_WHAT 1003
#define OPT_MAX_STALL 1004
#define READ_CHUNK (64u * 1024u)

static const char import_usage[] =
	"usage: agent trace-import --collector HOST:PORT [--window N] [--arch A] [--tracer NAME] [--what TEXT]\n"
	"                          [--max-stall S] [...] FILE|-\n"
	"\n"
	"Reads a full trace in the native format (binary or text: collector/edag/README.md), e.g.\n"
	"the QEMU plugin's output (tools/qemu-plugin/qemu-trace pipes it here), from FILE or\n"
	"standard input, and sends it to the collector as TraceWindow records; `collector edag\n"
	"--session N` analyses it as one stream, as `collector edag --trace FILE` would.\n"
	"  --window N      instructions per record (default 16384; records are joined again)\n"
	"  --arch A        register names of a text trace without an 'arch' line\n"
	"  --tracer NAME   what produced the trace, for the session's Hello (default: native trace)\n"
	"  --what TEXT     what was traced (the command line), for the Hello (default: FILE)\n"
	"  --max-stall S   when the spool is full, stop reading (the tracer waits) at most S s, then\n"
	"                  discard what does not fit (default 30)\n";

struct import_cmd {
	struct agent_cli cli;
	unsigned long window;
	unsigned arch_opt;
	const char *tracer, *what, *path;
	double max_stall_s;
	int fd;
	bool eof;
	char target[512];
	struct trace_import *ti;
	struct session *s;
	struct loop *l;
	uint32_t next_index;
	size_t max_frame_seen;
	uint64_t stall_since, stalled_ns, stalls;
	bool discarding;
	uint64_t discarded_insns, discarded_records, sent_records;
	int error;
	uint8_t buf[READ_CHUNK];
};

static int import_option(void *ctx, int opt, const char *arg)
{
	struct import_cmd *c = ctx;
	unsigned long v;
	switch (opt) {
	case OPT_WINDOW:
		if (agent_cli_ulong(arg, TRACE_WINDOW_MAX, &v) < 0 || v == 0) {
			log_error("--window: expected 1..%u instructions (got '%s')", TRACE_WINDOW_MAX, arg);
			return EXIT_USAGE;
		}
		c->window = v;
		return 0;
	case OPT_ARCH: {
		int a = edag_arch_parse(arg);
		if (a < 0) {
			log_error("--arch: expected x86_64, aarch64, arm or riscv64 (got '%s')", arg);
			return EXIT_USAGE;
		}
		c->arch_opt = (unsigned)a;
		return 0;
	}
	case OPT_TRACER:
		c->tracer = arg;
		return 0;
	case OPT_WHAT:
		c->what = arg;
		return 0;
	case OPT_MAX_STALL:
		if (agent_cli_seconds(arg, 0, &c->max_stall_s) < 0) {
			log_error("--max-stall: expected seconds from 0 to %.0f (got '%s')", AGENT_CLI_MAX_SECONDS, arg);
			return EXIT_USAGE;
		}
		return 0;
	default:
		return EXIT_USAGE;
	}
}

/* The session, once the traced architecture is known (its Hello names it). */
static int ensure_session(struct import_cmd *c)
{
	if (c->s)
		return 0;
	unsigned arch = trace_import_arch(c->ti);
	snprintf(c->target, sizeof(c->target), "%s trace by %s: %s", arch ? edag_arch_name(arch) : "unknown-arch",
		 c->tracer, c->what);
	c->cli.so.target = c->target;
	char err[1024];
	int rc = session_open(&c->s, &c->cli.so, err, sizeof(err));
	if (rc < 0)
		log_error("%s", err);
	return rc;
}

/* Encode and send w[0..n) (halves when a record would exceed the frame limit). */
static int send_part(struct import_cmd *c, const struct trace_window *w, const struct trace_encode_info *info)
{
	struct trace_encode_info in = *info;
	in.window_index = c->next_index;
	Prof__TraceWindow tw;
	int rc = trace_encode_window(w, &in, &tw);
	if (rc < 0)
		return rc;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
	env.trace_window = &tw;
	size_t len = prof__envelope__get_packed_size(&env) + 16;
	if (len > session_max_frame(c->s) && w->n > 1) {
		trace_encode_free(&tw);
		size_t n1 = w->n / 2;
		struct trace_window a = *w, b = *w;
		a.n = n1;
		b.rec = w->rec + n1;
		b.n = w->n - n1;
		struct trace_encode_info ia = *info, ib = *info;
		bool full = info->represented_insns == w->n && info->sampled_share == 1.0;
		ia.represented_insns = full ? n1 : info->represented_insns;
		ib.represented_insns = full ? b.n : 0;
		ib.trace_pos = info->trace_pos ? info->trace_pos + n1 : 0;
		if ((rc = send_part(c, &a, &ia)) < 0)
			return rc;
		return send_part(c, &b, &ib);
	}
	if (len > c->max_frame_seen)
		c->max_frame_seen = len;
	if (c->discarding && session_would_drop(c->s, len)) {
		c->discarded_insns += w->n;
		if (c->discarded_records++ == 0)
			log_warn("trace-import: the spool is full and the collector has not caught up in %g s: "
				 "discarding instructions %llu.. (the stored trace will have a gap)",
				 c->max_stall_s, (unsigned long long)info->trace_pos);
		trace_encode_free(&tw);
		c->next_index++;
		return 0;
	}
	rc = session_send(c->s, &env);
	trace_encode_free(&tw);
	if (rc < 0) {
		log_error("trace-import: record %u not sent: %s", c->next_index, strerror(-rc));
		return rc;
	}
	c->next_index++;
	c->sent_records++;
	return 0;
}

static int emit_piece(void *ctx, const struct trace_window *w, const struct trace_encode_info *info)
{
	struct import_cmd *c = ctx;
	int rc = ensure_session(c);
	return rc < 0 ? rc : send_part(c, w, info);
}

static int feed(struct import_cmd *c, const uint8_t *buf, size_t n)
{
	char err[256];
	int rc = trace_import_feed(c->ti, buf, n, err, sizeof(err));
	if (rc == -EINVAL)
		log_error("%s: %s", c->path, err);
	return rc;
}

/* Before the loop: read (blocking) until the architecture is known. */
static int read_header(struct import_cmd *c)
{
	while (!trace_import_arch(c->ti)) {
		ssize_t got = read(c->fd, c->buf, EDAG_BIN_HEADER);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			log_error("reading %s: %s", c->path, strerror(errno));
			return -errno;
		}
		if (got == 0) {
			c->eof = true;
			return 0;
		}
		int rc = feed(c, c->buf, (size_t)got);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int finish(struct import_cmd *c)
{
	char err[256];
	int rc = trace_import_finish(c->ti, err, sizeof(err));
	if (rc == -EINVAL)
		log_error("%s: %s", c->path, err);
	return rc;
}

static bool spool_tight(struct import_cmd *c)
{
	size_t next = c->max_frame_seen ? c->max_frame_seen : c->window * 16;
	/* one read can complete a piece or two: keep room for two of the largest seen */
	return session_would_drop(c->s, 2 * next + READ_CHUNK);
}

static int import_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct import_cmd *c = ctx;
	if (c->eof || max < 1)
		return 0;
	if (spool_tight(c)) {
		if (!c->stall_since) {
			c->stall_since = now;
			c->stalls++;
			log_debug("trace-import: spool full, pausing the input");
		}
		uint64_t limit = (uint64_t)(c->max_stall_s * 1e9);
		if (!c->discarding && now - c->stall_since < limit) {
			int ms = (int)((limit - (now - c->stall_since)) / 1000000) + 1;
			if (*timeout_ms < 0 || ms < *timeout_ms)
				*timeout_ms = ms;
			return 0; /* wait for acks; the tracer blocks on the full pipe */
		}
		c->discarding = true;
	} else if (c->stall_since) {
		c->stalled_ns += now - c->stall_since;
		c->stall_since = 0;
		c->discarding = false;
	}
	pfd[0].fd = c->fd;
	pfd[0].events = POLLIN;
	return 1;
}

static int import_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct import_cmd *c = ctx;
	if (n < 1 || !(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
		return 0;
	ssize_t got = read(c->fd, c->buf, sizeof(c->buf));
	if (got < 0) {
		if (errno == EINTR || errno == EAGAIN)
			return 0;
		log_error("reading %s: %s", c->path, strerror(errno));
		c->error = -errno;
		loop_stop(c->l, 0);
		return 0;
	}
	int rc = got == 0 ? finish(c) : feed(c, c->buf, (size_t)got);
	if (rc < 0 || got == 0) {
		c->eof = true;
		c->error = rc;
		loop_stop(c->l, 0);
	}
	return 0;
}

static int parse(struct import_cmd *c, int argc, char **argv)
{
	static const struct option extra[] = {
		{"window", required_argument, NULL, OPT_WINDOW},
		{"arch", required_argument, NULL, OPT_ARCH},
		{"tracer", required_argument, NULL, OPT_TRACER},
		{"what", required_argument, NULL, OPT_WHAT},
		{"max-stall", required_argument, NULL, OPT_MAX_STALL},
		{NULL, 0, NULL, 0},
	};
	char usage[4096];
	snprintf(usage, sizeof(usage), "%s%s", import_usage, agent_cli_common_help);
	c->window = 16384;
	c->max_stall_s = 30;
	c->tracer = "native trace";
	c->cli.need_target = true; /* the FILE comes back as the "command" */
	c->cli.target_optional = true;
	int ex = agent_cli_parse(argc, argv, &c->cli, usage, extra, "", import_option, c);
	if (ex >= 0)
		return ex;
	if (c->cli.to.all || c->cli.to.pid || !c->cli.to.cmd || c->cli.to.cmd[1]) {
		log_error("trace-import: give one FILE (or - for standard input), no -p/-a\n%s", import_usage);
		return EXIT_USAGE;
	}
	c->path = c->cli.to.cmd[0];
	if (!c->what)
		c->what = strcmp(c->path, "-") == 0 ? "standard input" : c->path;
	return -1;
}

int cmd_trace_import(int argc, char **argv)
{
	struct import_cmd *c = calloc(1, sizeof(*c));
	if (!c) {
		log_error("out of memory");
		return EXIT_AGENT_ERROR;
	}
	int ex = parse(c, argc, argv);
	if (ex >= 0) {
		free(c);
		return ex;
	}
	ex = EXIT_AGENT_ERROR;
	c->fd = strcmp(c->path, "-") == 0 ? STDIN_FILENO : open(c->path, O_RDONLY | O_CLOEXEC);
	if (c->fd < 0) {
		log_error("cannot open the trace %s: %s", c->path, strerror(errno));
		free(c);
		return EXIT_AGENT_ERROR;
	}
	uint64_t start = clock_mono_ns();
	if (trace_import_new(&c->ti, c->window, c->arch_opt, emit_piece, c) < 0)
		goto out;
	if (read_header(c) < 0)
		goto out;
	if (c->eof) {
		if (finish(c) < 0)
			goto out;
	} else {
		if (ensure_session(c) < 0 || loop_create(&c->l) < 0)
			goto out;
		struct loop_source src = {
			.name = "trace-import", .prepare = import_prepare, .dispatch = import_dispatch, .ctx = c};
		if (session_attach(c->s, c->l) < 0 || loop_add(c->l, &src) < 0)
			goto out;
		int rc = loop_run(c->l);
		if (rc < 0 || session_fatal(c->s))
			goto out;
		if (c->stall_since)
			c->stalled_ns += clock_mono_ns() - c->stall_since;
	}
	if (c->error < 0)
		goto out;
	const struct trace_import_stats *st = trace_import_stats(c->ti);
	if (!c->s || st->insns == 0) {
		log_error("%s: no instructions in the trace", c->path);
		goto out;
	}
	double read_s = (double)(clock_mono_ns() - start) / 1e9;
	uint64_t left = session_flush(c->s);
	fprintf(stderr,
		"\n trace-import: %llu instructions (%s, %s) in %llu record(s) of up to %lu, %.1f MiB read in %.2f s "
		"(%.3g instructions/s); input paused %llu time(s), %.2f s in all%s\n",
		(unsigned long long)st->insns, edag_arch_name(trace_import_arch(c->ti)), trace_import_format(c->ti),
		(unsigned long long)c->sent_records, c->window, (double)st->bytes / 1048576.0, read_s,
		read_s > 0 ? (double)st->insns / read_s : 0.0, (unsigned long long)c->stalls, (double)c->stalled_ns / 1e9,
		c->discarded_insns ? "" : "; nothing discarded");
	if (c->discarded_insns)
		log_warn("trace-import: %llu instructions in %llu record(s) discarded while the spool was full",
			 (unsigned long long)c->discarded_insns, (unsigned long long)c->discarded_records);
	session_print_summary(c->s, stderr);
	ex = left == 0 && c->discarded_insns == 0 ? 0 : EXIT_AGENT_ERROR;
out:
	session_close(c->s);
	loop_destroy(c->l);
	trace_import_free(c->ti);
	if (c->fd > STDIN_FILENO)
		close(c->fd);
	free(c);
	return ex;
}
#endif
