/* prof-clhelper: the OpenCL work of a static musl agent, which cannot dlopen. Built for the
 * board's C library (glibc <= the board's version, mk/cl_layer.mk) like the capture libraries,
 * dynamically linked; the agent executes it in its probe child with stdout on the pipe
 * (agent/opencl_helper.c) and reads what its own child would have written.
 *
 *   prof-clhelper probe     struct opencl_probe (agent/opencl_probe.h), raw, on stdout
 *
 * The agent and the helper come from one build (same struct layout and ABI); the agent bounds
 * what it reads (opencl_probe_run). Exit 0 when the struct was written. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opencl_probe.h"

int main(int argc, char **argv)
{
	if (argc != 2 || strcmp(argv[1], "probe") != 0) {
		fprintf(stderr, "usage: prof-clhelper probe   (run by the profiler agent)\n");
		return 2;
	}
	struct opencl_probe p;
	memset(&p, 0, sizeof(p));
	opencl_probe_fill(&p);
	const char *b = (const char *)&p;
	size_t off = 0;
	while (off < sizeof(p)) {
		ssize_t w = write(STDOUT_FILENO, b + off, sizeof(p) - off);
		if (w <= 0)
			return 1;
		off += (size_t)w;
	}
	return 0;
}
