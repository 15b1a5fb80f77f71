/* BPF programs loaded on the machine, for tests whose figures another process's BPF programs can
 * change (issue 43: a perf_event program runs in the timer interrupt beside ours). */
#ifndef TESTS_LIB_BPF_PROGS_H
#define TESTS_LIB_BPF_PROGS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tp_bpf_prog {
	uint32_t id;
	uint32_t type; /* enum bpf_prog_type */
	char name[16]; /* as loaded (BPF_OBJ_NAME_LEN) */
};

/* Up to max loaded programs of type (BPF_PROG_TYPE_*) into out; returns how many there are (may be
 * more than max), or -errno (-EPERM without CAP_SYS_ADMIN). */
int tp_bpf_progs(uint32_t type, struct tp_bpf_prog *out, size_t max);

/* Whether process pid holds a file descriptor of BPF program id (its /proc/PID/fdinfo). */
int tp_bpf_prog_held_by(pid_t pid, uint32_t id);

#endif
