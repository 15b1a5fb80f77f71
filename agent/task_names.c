/* Task names from the kernel's records and /proc (task_names.h). */
#include "task_names.h"

#include <ctype.h>
#include <dirent.h>
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
	free(t->seen);
	t->seen = NULL;
	t->seen_bytes = 0;
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

static void copy_name(char *dst, const char *src)
{
	snprintf(dst, TASK_NAME_LEN, "%s", src);
}

/* e's names from /proc; a task gone: what a COMM record told of its process, if anything. */
static void read_names(struct task_names *t, struct task_name *e)
{
	char path[96];
	snprintf(path, sizeof(path), "%s/%d/comm", t->proc, e->pid);
	read_name(path, e->comm, sizeof(e->comm));
	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", t->proc, e->pid, e->tid);
	read_name(path, e->thread, sizeof(e->thread));
	if (!e->comm[0]) {
		struct task_name *leader = task_names_find(t, e->pid, e->pid);
		if (leader && leader != e)
			copy_name(e->comm, leader->comm);
	}
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

#define PID_SEEN_MAX 4194304 /* PID_MAX_LIMIT (include/linux/threads.h): 512 KiB of bits */

/* Was a process of pid known in this session? Marks it known. */
static bool seen_before(struct task_names *t, int32_t pid)
{
	if (pid <= 0 || pid >= PID_SEEN_MAX)
		return false;
	size_t byte = (size_t)pid / 8;
	if (byte >= t->seen_bytes) {
		size_t nb = t->seen_bytes ? t->seen_bytes : 512;
		while (nb <= byte)
			nb *= 2;
		uint8_t *ns = realloc(t->seen, nb);
		if (!ns)
			return false; /* not told apart: as before */
		memset(ns + t->seen_bytes, 0, nb - t->seen_bytes);
		t->seen = ns;
		t->seen_bytes = nb;
	}
	bool was = t->seen[byte] & (1u << (pid % 8));
	t->seen[byte] |= (uint8_t)(1u << (pid % 8));
	return was;
}

/* The incarnation of a task new to the table: a thread its process's; a process the next number
 * where its pid had one before in the session, else 0. */
static uint32_t new_inc(struct task_names *t, int32_t pid, int32_t tid)
{
	if (tid != pid) {
		const struct task_name *l = task_names_find(t, pid, pid);
		return l ? l->inc : 0;
	}
	if (!seen_before(t, pid))
		return 0;
	if (t->next_inc == 0 || t->next_inc == UINT32_MAX)
		t->next_inc = 1;
	return t->next_inc++;
}

/* A new entry for (pid, tid) with empty names, NULL on ENOMEM or over the
 * bound (counted in dropped). */
static struct task_name *insert(struct task_names *t, int32_t pid, int32_t tid)
{
	if (t->n >= TASK_NAMES_MAX) {
		t->dropped++; /* every one alive (exited ones are reaped once per interval) */
		return NULL;
	}
	if ((t->n + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	size_t j = slot_of(t, pid, tid);
	while (t->slots[j].tid)
		j = (j + 1) & (t->cap - 1);
	uint32_t inc = new_inc(t, pid, tid);
	struct task_name *e = &t->slots[j];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	e->tid = tid;
	e->inc = inc;
	t->n++;
	return e;
}

/* The entry now holds a new task with the id of one that exited: the old one's names kept as prev
 * (its samples may not be sent yet), the new one's incarnation. */
static void take_over(struct task_names *t, struct task_name *e)
{
	e->prev_valid = true;
	e->prev_inc = e->inc;
	e->prev_first_map_id = e->first_map_id;
	e->prev_declared = e->declared;
	e->prev_sampled = false;
	e->prev_pending = false;
	memcpy(e->prev_comm, e->comm, TASK_NAME_LEN);
	memcpy(e->prev_thread, e->thread, TASK_NAME_LEN);
	e->boundary_ns = e->exit_ns;
	if (e->tid == e->pid) {
		seen_before(t, e->pid);
		if (t->next_inc == 0 || t->next_inc == UINT32_MAX)
			t->next_inc = 1;
		e->inc = t->next_inc++;
		e->first_map_id = t->next_map_id;
	} else {
		const struct task_name *l = task_names_find(t, e->pid, e->pid);
		e->inc = l ? l->inc : 0;
	}
}

uint32_t task_names_inc_of(struct task_names *t, int32_t pid, uint64_t stamp_ns)
{
	struct task_name *l = task_names_find(t, pid, pid);
	if (!l)
		return 0;
	if (l->prev_valid && stamp_ns && stamp_ns < l->boundary_ns && l->prev_inc != l->inc) {
		l->prev_pending = true;
		return l->prev_inc;
	}
	return l->inc;
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
	read_names(t, e);
	return 1;
}

int task_names_fork(struct task_names *t, int32_t pid, int32_t tid, int32_t ppid, int32_t ptid, uint64_t time_ns)
{
	if (tid <= 0 || ptid <= 0)
		return 0;
	struct task_name *e = task_names_find(t, pid, tid);
	/* the fork of a task that exited, seen after its EXIT record (another CPU's ring) */
	bool late = e && e->exited && time_ns <= e->exit_ns;
	if (e && (e->comm[0] || e->thread[0]) && (!e->exited || late))
		return 0; /* its COMM record came first: that name is newer */
	/* The kernel copies the forking thread's comm into the child (copy_process
	 * duplicates task_struct, comm included); a thread keeps its process. */
	if (!task_names_find(t, ppid, ptid))
		task_names_ensure(t, ppid, ptid); /* a parent older than the session: alive now */
	char thread[TASK_NAME_LEN] = "", comm[TASK_NAME_LEN] = "";
	const struct task_name *p = task_names_find(t, ppid, ptid);
	if (p) {
		copy_name(thread, p->thread[0] ? p->thread : p->comm);
		copy_name(comm, pid == ppid ? p->comm : thread);
	}
	e = task_names_find(t, pid, tid); /* the table may have grown */
	if (!thread[0]) { /* nothing known: the /proc read at its first sample */
		if (e && e->exited && !late) { /* a new task with the id of one that exited: apart */
			take_over(t, e);
			e->comm[0] = e->thread[0] = 0;
			e->exited = false;
			e->sampled = false;
			e->declared = false;
			read_names(t, e);
		}
		return 0;
	}
	bool fresh = !e;
	if (!e && !(e = insert(t, pid, tid)))
		return -ENOSPC;
	if (fresh && tid == pid && e->inc) /* a process on a pid seen before: its mappings from here */
		e->first_map_id = t->next_map_id;
	if (e->exited && !late)
		take_over(t, e);
	copy_name(e->comm, comm);
	copy_name(e->thread, thread);
	e->declared = false;
	if (e->exited && !late) { /* a new task with the id of one that exited */
		e->exited = false;
		e->sampled = false;
	} /* else: a task first sampled before its records came (no names yet), named now */
	return 0;
}

void task_names_exit(struct task_names *t, int32_t pid, int32_t tid, uint64_t time_ns)
{
	struct task_name *e = task_names_find(t, pid, tid);
	if (e && !e->exited) {
		e->exited = true;
		e->exit_ns = time_ns;
		e->exit_round = t->rounds;
		t->nexited++;
	}
}

size_t task_names_reap(struct task_names *t)
{
	t->rounds++;
	if (!t->nexited)
		return 0;
	struct task_name *ns = calloc(t->cap, sizeof(*ns));
	if (!ns)
		return 0;
	size_t gone = 0;
	struct task_name *old = t->slots;
	t->slots = ns;
	t->n = 0;
	size_t still = 0;
	for (size_t i = 0; i < t->cap; i++) {
		if (!old[i].tid)
			continue;
		/* one round of grace: its FORK or COMM record may come from a ring drained after the EXIT */
		if (old[i].exited && t->rounds >= old[i].exit_round + 2) {
			gone++;
			continue;
		}
		still += old[i].exited;
		size_t j = slot_of(t, old[i].pid, old[i].tid);
		while (t->slots[j].tid)
			j = (j + 1) & (t->cap - 1);
		t->slots[j] = old[i];
		t->n++;
	}
	free(old);
	t->nexited = still;
	t->evicted += gone;
	return gone;
}

void task_names_redeclare(struct task_names *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		t->slots[i].declared = false;
		t->slots[i].prev_declared = false;
	}
}

/* The numeric entries of dir (a /proc or /proc/PID/task directory), each to fn; false to stop. */
static bool each_id(const char *dir, bool (*fn)(struct task_names *t, int32_t id, int32_t pid), struct task_names *t,
		    int32_t pid)
{
	DIR *d = opendir(dir);
	if (!d)
		return true;
	bool go = true;
	struct dirent *de;
	while (go && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			go = fn(t, (int32_t)atol(de->d_name), pid);
	closedir(d);
	return go;
}

static bool snap_thread(struct task_names *t, int32_t tid, int32_t pid)
{
	if (t->n >= TASK_NAMES_MAX / 2)
		return false; /* the rest at their first sample */
	task_names_ensure(t, pid, tid);
	return true;
}

static bool snap_process(struct task_names *t, int32_t pid, int32_t unused)
{
	(void)unused;
	char dir[96];
	snprintf(dir, sizeof(dir), "%s/%d/task", t->proc, pid);
	return each_id(dir, snap_thread, t, pid);
}

size_t task_names_snapshot(struct task_names *t, int32_t pid)
{
	size_t before = t->n;
	if (pid > 0)
		snap_process(t, pid, 0);
	else
		each_id(t->proc, snap_process, t, 0);
	return t->n - before;
}
