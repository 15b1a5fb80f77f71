/* Task names from /proc (task_names.h). */
#include "task_names.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int task_names_init(struct task_names *t, const char *proc_root)
{
	memset(t, 0, sizeof(*t));
	t->proc = proc_root ? proc_root : "/proc";
	return 0;
}

void task_names_free(struct task_names *t)
{
	free(t->slots);
	t->slots = NULL;
	t->cap = t->n = 0;
}

/* The first line of path into buf (at most len-1 bytes), "" if unreadable. */
static void read_name(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0) {
		buf[0] = 0;
		return;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

static size_t slot_of(const struct task_names *t, int32_t pid, int32_t tid)
{
	uint64_t h = ((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20) & (t->cap - 1);
}

static int grow(struct task_names *t)
{
	size_t nc = t->cap ? t->cap * 2 : 256;
	struct task_name *ns = calloc(nc, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	struct task_names old = *t;
	t->slots = ns;
	t->cap = nc;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].tid) {
			size_t j = slot_of(t, old.slots[i].pid, old.slots[i].tid);
			while (t->slots[j].tid)
				j = (j + 1) & (t->cap - 1);
			t->slots[j] = old.slots[i];
		}
	free(old.slots);
	return 0;
}

struct task_name *task_names_find(struct task_names *t, int32_t pid, int32_t tid)
{
	if (!t->cap || tid <= 0)
		return NULL;
	for (size_t j = slot_of(t, pid, tid); t->slots[j].tid; j = (j + 1) & (t->cap - 1))
		if (t->slots[j].pid == pid && t->slots[j].tid == tid)
			return &t->slots[j];
	return NULL;
}

/* A new entry for (pid, tid) with empty names, NULL on ENOMEM. */
static struct task_name *insert(struct task_names *t, int32_t pid, int32_t tid)
{
	if (t->n >= TASK_NAMES_MAX) {
		memset(t->slots, 0, t->cap * sizeof(*t->slots)); /* start over: bounded memory */
		t->n = 0;
	}
	if ((t->n + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	size_t j = slot_of(t, pid, tid);
	while (t->slots[j].tid)
		j = (j + 1) & (t->cap - 1);
	struct task_name *e = &t->slots[j];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->tid = tid;
	t->n++;
	return e;
}

static void copy_name(char *dst, const char *src)
{
	snprintf(dst, TASK_NAME_LEN, "%s", src);
}

int task_names_set(struct task_names *t, int32_t pid, int32_t tid, const char *comm)
{
	if (tid <= 0)
		return 0;
	struct task_name *e = task_names_find(t, pid, tid);
	if (!e && !(e = insert(t, pid, tid)))
		return -ENOMEM;
	if (tid == pid) {
		if (strcmp(e->comm, comm) != 0 || strcmp(e->thread, comm) != 0)
			e->declared = false;
		copy_name(e->comm, comm);
		copy_name(e->thread, comm);
	} else {
		if (strcmp(e->thread, comm) != 0)
			e->declared = false;
		copy_name(e->thread, comm);
		struct task_name *leader = task_names_find(t, pid, pid);
		if (leader && leader->comm[0] && strcmp(e->comm, leader->comm) != 0) {
			copy_name(e->comm, leader->comm);
			e->declared = false;
		}
	}
	return 0;
}

int task_names_ensure(struct task_names *t, int32_t pid, int32_t tid)
{
	if (tid <= 0)
		return 0; /* the idle task: no /proc entry */
	if (task_names_find(t, pid, tid))
		return 0;
	struct task_name *e = insert(t, pid, tid);
	if (!e)
		return -ENOMEM;
	char path[96];
	snprintf(path, sizeof(path), "%s/%d/comm", t->proc, pid);
	read_name(path, e->comm, sizeof(e->comm));
	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", t->proc, pid, tid);
	read_name(path, e->thread, sizeof(e->thread));
	if (!e->comm[0]) { /* gone: what a COMM record told of its process, if anything */
		struct task_name *leader = task_names_find(t, pid, pid);
		if (leader && leader != e)
			copy_name(e->comm, leader->comm);
	}
	return 1;
}

void task_names_redeclare(struct task_names *t)
{
	for (size_t i = 0; i < t->cap; i++)
		t->slots[i].declared = false;
}
