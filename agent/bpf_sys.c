/* Raw bpf(2) commands (bpf_sys.h). */
#include "generated/config.h"

#ifdef CONFIG_AGENT_BPF
#include "bpf_sys.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static int sys_bpf(enum bpf_cmd cmd, union bpf_attr *attr, unsigned int size)
{
	long rc = syscall(__NR_bpf, cmd, attr, size);
	return rc < 0 ? -errno : (int)rc;
}

static int map_elem(enum bpf_cmd cmd, int map_fd, const void *key, void *value)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)map_fd;
	a.key = (uint64_t)(uintptr_t)key;
	a.value = (uint64_t)(uintptr_t)value; /* next_key shares this field */
	return sys_bpf(cmd, &a, sizeof(a));
}

int bpf_sys_map_lookup(int map_fd, const void *key, void *value)
{
	return map_elem(BPF_MAP_LOOKUP_ELEM, map_fd, key, value);
}

int bpf_sys_map_delete(int map_fd, const void *key)
{
	return map_elem(BPF_MAP_DELETE_ELEM, map_fd, key, NULL);
}

int bpf_sys_map_next_key(int map_fd, const void *key, void *next_key)
{
	return map_elem(BPF_MAP_GET_NEXT_KEY, map_fd, key, next_key);
}

int bpf_sys_map_lookup_and_delete_batch(int map_fd, void *in_batch, void *out_batch, void *keys, void *values,
					uint32_t *count)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.batch.map_fd = (uint32_t)map_fd;
	a.batch.in_batch = (uint64_t)(uintptr_t)in_batch;
	a.batch.out_batch = (uint64_t)(uintptr_t)out_batch;
	a.batch.keys = (uint64_t)(uintptr_t)keys;
	a.batch.values = (uint64_t)(uintptr_t)values;
	a.batch.count = *count;
	int rc = sys_bpf(BPF_MAP_LOOKUP_AND_DELETE_BATCH, &a, sizeof(a));
	*count = a.batch.count; /* the kernel writes it back on -ENOENT too */
	return rc;
}

int bpf_sys_prog_type_supported(enum bpf_prog_type type)
{
	/* r0 = 0; exit */
	struct bpf_insn insns[2] = {
	    {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
	    {.code = BPF_JMP | BPF_EXIT},
	};
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (uint64_t)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (uint64_t)(uintptr_t) "GPL";
	int fd = sys_bpf(BPF_PROG_LOAD, &a, sizeof(a));
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (fd == -EPERM || fd == -EACCES)
		return fd;
	return 0; /* EINVAL: the kernel does not know the type; ENOSYS: no bpf(2) */
}
#endif
