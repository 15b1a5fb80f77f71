/* `agent --gpu-selftest`: for a user with a board, what the Mali driver
 * reports (interface, version, GPU id, SHADER_PRESENT, L2_PRESENT,
 * L2_FEATURES, core groups, dump layout, the interval the reader keeps) and
 * the sanity of a few dumps (they arrive at the stated interval, every block
 * of the layout carries its enable mask, GPU_ACTIVE fits the interval), so
 * what agent/gpu/README.md lists as unverified on silicon can be checked. */
#ifndef AGENT_GPU_GPU_SELFTEST_H
#define AGENT_GPU_GPU_SELFTEST_H

#include <stdio.h>

/* argv: [--gpu-device PATH] [--gpu-interval US] [--dumps N]. Returns 0 when
 * the device opens and the dumps look sane, 1 otherwise (the line says why),
 * EXIT_USAGE on bad options. */
int gpu_selftest_main(int argc, char **argv, FILE *out);

#endif
