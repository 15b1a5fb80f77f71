/* The --gpu options shared by `agent run` and `agent stat`, and starting /
 * finishing the sampler inside a subcommand's session. A GPU whose counters
 * cannot be read costs one log line; the session goes on without them. */
#ifndef AGENT_GPU_GPU_CLI_H
#define AGENT_GPU_GPU_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

struct session;
struct loop;
struct gpu_sampler;

#define OPT_GPU 1100
#define OPT_GPU_INTERVAL 1101
#define OPT_GPU_DEVICE 1102

#define GPU_CLI_OPTIONS                                                        \
	{"gpu", no_argument, NULL, OPT_GPU},                                   \
	{"gpu-interval", required_argument, NULL, OPT_GPU_INTERVAL},           \
	{"gpu-device", required_argument, NULL, OPT_GPU_DEVICE}

extern const char gpu_cli_help[];

struct gpu_cli {
	bool on;
	unsigned interval_us;
	const char *device;
	struct gpu_sampler *g;
};

/* For a subcommand's option callback: 1 if opt is not a --gpu option, 0 when
 * taken, EXIT_USAGE (logged) when its value is bad. */
int gpu_cli_option(struct gpu_cli *c, int opt, const char *arg);
/* With --gpu: open the device and attach the sampler (0), or log why not
 * and go on (still 0). */
int gpu_cli_start(struct gpu_cli *c, struct session *s, struct loop *l);
/* Final dump, last record. */
void gpu_cli_finish(struct gpu_cli *c);
void gpu_cli_print_summary(const struct gpu_cli *c, FILE *out);
void gpu_cli_close(struct gpu_cli *c);

#endif
