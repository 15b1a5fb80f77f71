/* ptrace tracer benchmark: one window of N single-stepped instructions of a
 * running workload (trace_loop), decoded and with effective addresses, as the
 * agent takes them. Prints one line:
 *   insns=N seconds=S insns_per_s=R step_us=U decode_hits=H decode_misses=M
 * Usage: trace_ptrace WORKLOAD N */
#include "generated/config.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef CONFIG_AGENT_TRACER
#include "trace/decode.h"
#include "trace/window.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: trace_ptrace WORKLOAD N\n");
		return 2;
	}
	size_t n = strtoull(argv[2], NULL, 10);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", 1);
		dup2(fd, 1);
		execl(argv[1], argv[1], "600", "0", (char *)NULL);
		_exit(127);
	}
	usleep(200000);
	struct trace_decoder *d;
	if (trace_decoder_open(&d, trace_native_arch()) < 0) {
		fprintf(stderr, "trace_ptrace: no decoder for this architecture\n");
		kill(pid, SIGKILL);
		return 1;
	}
	struct trace_window w;
	char err[256];
	int rc = trace_window_capture(d, pid, n, 600000000000ull, &w, err, sizeof(err));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (rc < 0) {
		fprintf(stderr, "trace_ptrace: %s\n", err);
		return 1;
	}
	double s = (double)w.stop_ns / 1e9;
	printf("insns=%zu seconds=%.3f insns_per_s=%.0f step_us=%.2f decode_hits=%llu decode_misses=%llu\n", w.n, s,
	       (double)w.n / s, s * 1e6 / (double)w.n, (unsigned long long)trace_decoder_hits(d),
	       (unsigned long long)trace_decoder_misses(d));
	trace_window_free(&w);
	trace_decoder_close(d);
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "trace_ptrace: the tracer is not compiled in (CONFIG_AGENT_TRACER)\n");
	return 1;
}
#endif
