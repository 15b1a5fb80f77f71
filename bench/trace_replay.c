/* Replay-window benchmark (issue 26): starts a workload, lets it run, then
 * takes K replay windows of it (agent/trace/replay.h) one after the other, as
 * the agent does, and prints one line per window:
 *   warm=U insns=N stop_ms=S end=REASON warm_lines=L emulated_per_s=R
 * Usage: trace_replay WARM N MAX_MS K -- WORKLOAD [ARGS...] */
#include "generated/config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(CONFIG_AGENT_TRACER) && defined(CONFIG_AGENT_TRACE_REPLAY)
#include "trace/decode.h"
#include "trace/replay.h"

int main(int argc, char **argv)
{
	if (argc < 7 || strcmp(argv[5], "--") != 0) {
		fprintf(stderr, "usage: trace_replay WARM N MAX_MS K -- WORKLOAD [ARGS...]\n");
		return 2;
	}
	struct trace_replay_opts o = {.warm = strtoull(argv[1], NULL, 10),
				      .n = strtoull(argv[2], NULL, 10),
				      .max_ns = strtoull(argv[3], NULL, 10) * 1000000ull};
	int k = atoi(argv[4]);
	char err[320];
	if (trace_replay_supported(err, sizeof(err)) < 0) {
		fprintf(stderr, "trace_replay: %s\n", err);
		return 1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		execv(argv[6], argv + 6);
		_exit(127);
	}
	usleep(300000);
	struct trace_decoder *d;
	if (trace_decoder_open(&d, trace_native_arch()) < 0) {
		fprintf(stderr, "trace_replay: no decoder\n");
		kill(pid, SIGKILL);
		return 1;
	}
	int rc = 0;
	o.buf = malloc(o.n * sizeof(*o.buf)); /* kept across windows, as the agent does */
	if (!o.buf) {
		kill(pid, SIGKILL);
		return 1;
	}
	memset(o.buf, 0, o.n * sizeof(*o.buf));
	o.buf_cap = o.n;
	for (int i = 0; i < k && rc == 0; i++) {
		struct trace_window w;
		rc = trace_replay_capture(d, pid, &o, &w, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "trace_replay: %s\n", err);
			break;
		}
		double s = (double)w.stop_ns / 1e9;
		printf("warm=%llu insns=%zu stop_ms=%.2f end=%s warm_lines=%zu emulated_per_s=%.0f dropped=%u "
		       "undecodable=%u\n",
		       (unsigned long long)w.warm_insns, w.n, s * 1e3, trace_end_name(w.end), w.nwarm,
		       (double)(w.warm_insns + w.n) / s, w.dropped_accesses, w.undecodable);
		fflush(stdout);
		trace_window_free(&w);
		usleep(100000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	free(o.buf);
	trace_decoder_close(d);
	return rc < 0;
}
#else
int main(void)
{
	fprintf(stderr, "trace_replay: replay windows are not compiled in (CONFIG_AGENT_TRACE_REPLAY)\n");
	return 1;
}
#endif
