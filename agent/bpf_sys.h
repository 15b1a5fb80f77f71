/* The few bpf(2) commands the sampler's bpf back end issues itself, as raw
 * system calls (no libbpf): map reads for draining, and a program-type probe for
 * `agent --features`. Return 0 (or a count, see each) or a negative errno. */
#ifndef AGENT_BPF_SYS_H
#define AGENT_BPF_SYS_H

#include <stdint.h>

#include <linux/bpf.h>

int bpf_sys_map_lookup(int map_fd, const void *key, void *value);
int bpf_sys_map_delete(int map_fd, const void *key);
/* The key after key (key NULL: the first); -ENOENT after the last. */
int bpf_sys_map_next_key(int map_fd, const void *key, void *next_key);
/* BPF_MAP_LOOKUP_AND_DELETE_BATCH (Linux >= 5.6): up to *count entries into
 * keys/values, starting after in_batch (NULL: the start); out_batch is the
 * position to pass as in_batch next time. *count is set to the entries returned,
 * also when the result is -ENOENT (the map is done). */
int bpf_sys_map_lookup_and_delete_batch(int map_fd, void *in_batch, void *out_batch, void *keys, void *values,
					uint32_t *count);
/* Can the kernel load a program of this type (a two-instruction one)? 1 yes,
 * 0 no, negative errno when it cannot tell (-EPERM: not root). */
int bpf_sys_prog_type_supported(enum bpf_prog_type type);

#endif
