/* `agent --features`: what is compiled in and what the running kernel and
 * machine offer (perf_event, hardware PMU, BPF, BTF, OpenCL). */
#ifndef AGENT_FEATURE_REPORT_H
#define AGENT_FEATURE_REPORT_H

#include <stdio.h>

/* Print the report to out. Returns 0. */
int feature_report_print(FILE *out);

#endif
