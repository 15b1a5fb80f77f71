/* Loading the sampler's BPF programs (bpf/sample.bpf.c, bpf/sched.bpf.c) for
 * the bpf back end (sampler_bpf.c). First with the light skeletons: a loader
 * program run by the kernel creates the maps and loads the programs, CO-RE
 * relocated by the kernel against its own BTF (Linux >= 5.17), so the agent
 * never reads /sys/kernel/btf/vmlinux (5+ MB) itself. On older kernels it
 * falls back to the libbpf skeletons, which parse that BTF in user space
 * (several MB of memory and ~0.1 s of CPU while loading), if compiled in
 * (CONFIG_AGENT_BPF_LIBBPF; without it the load fails there, saying so, and
 * the sampler uses the perf ring back end). The environment
 * variable PROF_BPF_LOADER=light or =libbpf forces one way (no fallback; for
 * tests and odd kernels). */
#ifndef AGENT_SAMPLER_BPF_LOAD_H
#define AGENT_SAMPLER_BPF_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>

struct sampler_bpf_progs {
	bool light;		       /* loaded by the light skeletons */
	int sample_prog;	       /* perf_event program (fd) */
	int counts_map, stacks_map;    /* fds */
	int task_times_map;	       /* -1: no sched_switch accounting */
	const volatile __u64 *dropped; /* samples not counted (map full) */
	void *sample, *sched;	       /* the skeletons */
};

/* Load (not attach) the sampling program filtered to tgid (0: all), with a
 * user stack map when callgraph; load and attach sched_switch accounting
 * when it works (else a warning and task_times_map = -1). Returns 0 or a
 * negative errno with err set. */
int sampler_bpf_load(struct sampler_bpf_progs *p, uint32_t tgid, bool callgraph, char *err, size_t errlen);
void sampler_bpf_unload(struct sampler_bpf_progs *p);

#endif
