/* BPF programs loaded on the machine (bpf_progs.h): BPF_PROG_GET_NEXT_ID, BPF_PROG_GET_FD_BY_ID
 * and BPF_OBJ_GET_INFO_BY_FD, as bpftool's `prog show` walks them (tools/bpf/bpftool/prog.c,
 * do_show); a program's holders from /proc/PID/fdinfo's "prog_id:" line (kernel/bpf/syscall.c,
 * bpf_prog_show_fdinfo). */
#include "bpf_progs.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/bpf.h>

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int tp_bpf_progs(uint32_t type, struct tp_bpf_prog *out, size_t max)
{
	size_t n = 0;
	uint32_t id = 0;
	for (int guard = 0; guard < 100000; guard++) {
		union bpf_attr a;
		memset(&a, 0, sizeof(a));
		a.start_id = id;
		if (sys_bpf(BPF_PROG_GET_NEXT_ID, &a) < 0)
			return errno == ENOENT ? (int)n : -errno;
		id = a.next_id;
		memset(&a, 0, sizeof(a));
		a.prog_id = id;
		long fd = sys_bpf(BPF_PROG_GET_FD_BY_ID, &a);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* unloaded meanwhile */
			return -errno;
		}
		struct bpf_prog_info info;
		memset(&info, 0, sizeof(info));
		memset(&a, 0, sizeof(a));
		a.info.bpf_fd = (uint32_t)fd;
		a.info.info_len = sizeof(info);
		a.info.info = (uint64_t)(uintptr_t)&info;
		long rc = sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &a);
		close((int)fd);
		if (rc < 0 || info.type != type)
			continue;
		if (n < max) {
			out[n].id = id;
			out[n].type = info.type;
			memcpy(out[n].name, info.name, sizeof(out[n].name));
			out[n].name[sizeof(out[n].name) - 1] = '\0';
		}
		n++;
	}
	return (int)n;
}

int tp_bpf_prog_held_by(pid_t pid, uint32_t id)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int held = 0;
	struct dirent *de;
	while (!held && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char path[384], line[128];
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			unsigned long v;
			if (sscanf(line, "prog_id: %lu", &v) == 1 && v == id) {
				held = 1;
				break;
			}
		}
		fclose(f);
	}
	closedir(d);
	return held;
}
