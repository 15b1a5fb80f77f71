#include "proc_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "vdso.h"

#define MAP_OVERHEAD 16u /* malloc's per-block cost, counted with each path */

static int alive_kill(pid_t pid)
{
	return kill(pid, 0) == 0 || errno != ESRCH;
}

void proc_maps_init(struct proc_maps *pm)
{
	memset(pm, 0, sizeof(*pm));
	pm->maps_fmt = "/proc/%d/maps";
	pm->max_bytes = PROC_MAPS_MEM_MAX;
	pm->alive = alive_kill;
	pm->rounds = 1;
}

static void entry_free(struct proc_entry *e)
{
	for (size_t i = 0; i < e->n; i++)
		free(e->m[i].path);
	free(e->m);
}

void proc_maps_free(struct proc_maps *pm)
{
	for (size_t i = 0; i < pm->pcap; i++)
		if (pm->procs[i].pid)
			entry_free(&pm->procs[i]);
	free(pm->procs);
	memset(pm, 0, sizeof(*pm));
}

bool proc_maps_parse_line(char *line, uint64_t *start, uint64_t *end, uint64_t *pgoff, char **path)
{
	char perms[8];
	unsigned long long s, e, off;
	int pos = 0;
	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &pos) < 4 || pos == 0)
		return false;
	if (strlen(perms) < 3 || perms[2] != 'x')
		return false;
	char *p = line + pos;
	size_t len = strlen(p);
	while (len && (p[len - 1] == '\n' || p[len - 1] == ' '))
		p[--len] = 0;
	if (p[0] != '/' && strcmp(p, "[vdso]") != 0) /* files, and the vdso (vdso.h) */
		return false;
	static const char deleted[] = " (deleted)";
	if (len > sizeof(deleted) - 1 && strcmp(p + len - (sizeof(deleted) - 1), deleted) == 0)
		p[len - (sizeof(deleted) - 1)] = 0;
	*start = s;
	*end = e;
	*pgoff = off;
	*path = p;
	return e > s;
}

/* ------------------------------------------------------------ process table */

static size_t slot_of(size_t cap, int32_t pid)
{
	return (size_t)(((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull) >> 24) & (cap - 1);
}

static struct proc_entry *proc_get(const struct proc_maps *pm, int32_t pid)
{
	if (!pm->pcap || pid <= 0)
		return NULL;
	for (size_t j = slot_of(pm->pcap, pid); pm->procs[j].pid; j = (j + 1) & (pm->pcap - 1))
		if (pm->procs[j].pid == pid)
			return &pm->procs[j];
	return NULL;
}

const struct proc_entry *proc_maps_proc(const struct proc_maps *pm, pid_t pid)
{
	return proc_get(pm, pid);
}

static int proc_grow(struct proc_maps *pm)
{
	size_t nc = pm->pcap ? pm->pcap * 2 : 64;
	struct proc_entry *ns = calloc(nc, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < pm->pcap; i++)
		if (pm->procs[i].pid) {
			size_t j = slot_of(nc, pm->procs[i].pid);
			while (ns[j].pid)
				j = (j + 1) & (nc - 1);
			ns[j] = pm->procs[i];
		}
	free(pm->procs);
	pm->bytes += (nc - pm->pcap) * sizeof(*ns);
	pm->procs = ns;
	pm->pcap = nc;
	return 0;
}

/* The entry of pid, created if new; NULL on ENOMEM. Moves entries: earlier pointers are stale. */
static struct proc_entry *proc_put(struct proc_maps *pm, int32_t pid)
{
	struct proc_entry *e = proc_get(pm, pid);
	if (e)
		return e;
	if ((pm->nprocs + 1) * 2 > pm->pcap && proc_grow(pm) < 0)
		return NULL;
	size_t j = slot_of(pm->pcap, pid);
	while (pm->procs[j].pid)
		j = (j + 1) & (pm->pcap - 1);
	e = &pm->procs[j];
	memset(e, 0, sizeof(*e));
	e->pid = pid;
	pm->nprocs++;
	return e;
}

/* Remove the entry at slot i (linear probing: shift the cluster back). */
static void proc_del(struct proc_maps *pm, size_t i)
{
	entry_free(&pm->procs[i]);
	pm->bytes -= pm->procs[i].cap * sizeof(struct proc_mapping);
	size_t mask = pm->pcap - 1, j = i;
	for (;;) {
		pm->procs[i].pid = 0;
		for (;;) {
			j = (j + 1) & mask;
			if (!pm->procs[j].pid)
				goto done;
			size_t k = slot_of(pm->pcap, pm->procs[j].pid);
			/* j's entry may move to i when its home k is not in (i, j] */
			if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
				continue;
			break;
		}
		pm->procs[i] = pm->procs[j];
		i = j;
	}
done:
	pm->procs[i].pid = 0;
	pm->nprocs--;
}

/* -------------------------------------------------------------- mappings */

/* A live mapping of e's like it (a process that exited holds dead ones until they are declared: the
 * next process on its pid mapping the same file at the same address, a non-PIE program run again, gets
 * a mapping and an id of its own, w44a). */
static bool known(const struct proc_entry *e, uint64_t s, uint64_t end, uint64_t off, const char *path)
{
	for (size_t i = e ? e->n : 0; i-- > 0;) {
		const struct proc_mapping *m = &e->m[i];
		if (!m->dead && m->start == s && m->end == end && m->pgoff == off && strcmp(m->path, path) == 0)
			return true;
	}
	return false;
}

static size_t map_bytes(const char *path)
{
	return strlen(path) + 1 + MAP_OVERHEAD;
}

static size_t evict(struct proc_maps *pm);

/* Processes that are gone without an EXIT record (no watch, a lost record)
 * are found by asking the kernel; their mappings die, and dead declared ones go. */
static void reclaim(struct proc_maps *pm)
{
	for (size_t i = 0; i < pm->pcap; i++) {
		struct proc_entry *e = &pm->procs[i];
		if (e->pid && !e->exited && !pm->alive(e->pid)) {
			e->exited = true;
			/* no grace: the kernel says it is gone (exit_round + 2 == rounds, in uint32_t) */
			e->exit_round = pm->rounds - 2;
			for (size_t j = 0; j < e->n; j++)
				e->m[j].dead = true;
		}
	}
	/* not a reap: the rounds are the sampler's intervals (sampler_flush), and a process whose EXIT was
	 * read in this one keeps its mappings for its last samples, drained later (w45c, review r5) */
	evict(pm);
}

static int add(struct proc_maps *pm, pid_t pid, uint64_t s, uint64_t end, uint64_t off, const char *path)
{
	/* what this add may allocate: the path, the process's array doubling, the table doubling */
	const struct proc_entry *e0 = proc_get(pm, pid);
	size_t need = map_bytes(path);
	if (!e0 && (pm->nprocs + 1) * 2 > pm->pcap)
		need += (pm->pcap ? pm->pcap : 64) * sizeof(struct proc_entry);
	if (!e0 || e0->n == e0->cap)
		need += (e0 && e0->cap ? e0->cap : 8) * sizeof(struct proc_mapping);
	if (pm->bytes + need > pm->max_bytes) {
		reclaim(pm);
		if (pm->bytes + need > pm->max_bytes) {
			pm->dropped++;
			return -ENOSPC;
		}
	}
	struct proc_entry *e = proc_put(pm, pid);
	if (!e)
		return -ENOMEM;
	if (e->n == e->cap) {
		size_t ncap = e->cap ? e->cap * 2 : 8;
		struct proc_mapping *nm = realloc(e->m, ncap * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		pm->bytes += (ncap - e->cap) * sizeof(*nm);
		e->m = nm;
		e->cap = ncap;
	}
	struct proc_mapping *m = &e->m[e->n];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	m->id = ++pm->next_id;
	m->pid = pid;
	m->start = s;
	m->end = end;
	m->pgoff = off;
	m->dead = e->exited; /* a late record of a process already gone */
	/* The file as the process sees it (its mount namespace), else our view. */
	char rooted[4200];
	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)pid, path);
	int rc = path[0] != '/' ? (int)vdso_build_id(m->build_id, sizeof(m->build_id)) /* [vdso]: the same image */
				: elf_build_id(rooted, m->build_id, sizeof(m->build_id));
	if (rc < 0)
		rc = elf_build_id(path, m->build_id, sizeof(m->build_id));
	m->build_id_len = rc > 0 ? (size_t)rc : 0;
	e->n++;
	pm->nmaps++;
	pm->bytes += map_bytes(path);
	return 0;
}

int proc_maps_add(struct proc_maps *pm, pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
	if (end <= start || pid <= 0 || (path[0] != '/' && strcmp(path, "[vdso]") != 0))
		return -EINVAL;
	if (known(proc_get(pm, pid), start, end, pgoff, path))
		return 0;
	int rc = add(pm, pid, start, end, pgoff, path);
	return rc < 0 ? rc : 1;
}

int proc_maps_scan(struct proc_maps *pm, pid_t pid, uint64_t now_ns)
{
	char fn[64];
	snprintf(fn, sizeof(fn), pm->maps_fmt, (int)pid);
	struct proc_entry *e = proc_put(pm, pid);
	if (!e)
		return -ENOMEM;
	e->scanned_ns = now_ns ? now_ns : 1;
	FILE *f = fopen(fn, "re");
	if (!f) {
		int err = errno;
		if ((err == ENOENT || err == ESRCH) && !e->exited) {
			e->exited = true; /* gone: the entry goes once empty */
			e->exit_round = pm->rounds;
		}
		return -err;
	}
	char line[4608];
	int added = 0, rc = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, end, off;
		char *path;
		if (!proc_maps_parse_line(line, &s, &end, &off, &path) || known(proc_get(pm, pid), s, end, off, path))
			continue;
		rc = add(pm, pid, s, end, off, path);
		if (rc < 0)
			break;
		added++;
	}
	fclose(f);
	return rc < 0 && rc != -ENOSPC ? rc : added;
}

const struct proc_mapping *proc_maps_find(const struct proc_maps *pm, pid_t pid, uint64_t ip)
{
	const struct proc_entry *e = proc_get(pm, pid);
	for (size_t i = e ? e->n : 0; i-- > 0;) /* newest first: a remapped range wins */
		if (ip >= e->m[i].start && ip < e->m[i].end)
			return &e->m[i];
	return NULL;
}

/* A child gone before its maps were read: it ran its parent's code (a fork
 * that did not exec; an exec would have sent MMAP records). Copy the parent's
 * (all: also when it has mappings of its own, from after its exec). */
static int inherit_maps(struct proc_maps *pm, pid_t pid, bool all)
{
	const struct proc_entry *c = proc_get(pm, pid);
	if (!c || c->ppid <= 0 || c->ppid == pid || (c->n && !all))
		return 0;
	pid_t ppid = c->ppid;
	int added = 0;
	for (size_t i = 0;; i++) {
		const struct proc_entry *p = proc_get(pm, ppid); /* add() may move entries */
		if (!p || i >= p->n)
			break;
		const struct proc_mapping m = p->m[i];
		char path[4096]; /* add() may reap the parent's */
		snprintf(path, sizeof(path), "%s", m.path);
		if (add(pm, pid, m.start, m.end, m.pgoff, path) < 0)
			break;
		added++;
	}
	return added;
}

static int inherit(struct proc_maps *pm, pid_t pid)
{
	return inherit_maps(pm, pid, false);
}

static int inherit_all(struct proc_maps *pm, pid_t pid)
{
	return inherit_maps(pm, pid, true);
}

/* ip of a forked child found in no mapping of its own: sampled before its exec (its
 * mappings now are the new program's), in its parent's code, as perf's copy of the
 * parent's maps at fork says. Copy that one mapping; 1 copied, 0 none. */
static int from_parent(struct proc_maps *pm, pid_t pid, uint64_t ip)
{
	struct proc_entry *c = proc_get(pm, pid);
	if (!c)
		return 0;
	if (c->ppid <= 0 || c->ppid == pid) {
		c->missed = true; /* its FORK record may come later */
		return 0;
	}
	const struct proc_mapping *pmap = proc_maps_find(pm, c->ppid, ip);
	if (!pmap)
		return 0;
	char path[4096];
	snprintf(path, sizeof(path), "%s", pmap->path);
	uint64_t s = pmap->start, end = pmap->end, off = pmap->pgoff;
	return add(pm, pid, s, end, off, path) == 0;
}

int proc_maps_ensure(struct proc_maps *pm, pid_t pid, uint64_t ip, uint64_t now_ns, uint64_t min_gap_ns)
{
	if (ip == 0 || pid <= 0 || proc_maps_find(pm, pid, ip))
		return 0;
	const struct proc_entry *e = proc_get(pm, pid);
	int rc = 0;
	if (!e || !e->scanned_ns || now_ns - e->scanned_ns >= min_gap_ns) {
		rc = proc_maps_scan(pm, pid, now_ns);
		if (rc == -ENOENT || rc == -ESRCH)
			rc = inherit(pm, pid);
	}
	if (!proc_maps_find(pm, pid, ip) && from_parent(pm, pid, ip) > 0)
		rc = rc > 0 ? rc + 1 : 1;
	return rc;
}

void proc_maps_fork(struct proc_maps *pm, pid_t pid, pid_t ppid, uint64_t time_ns)
{
	if (pid <= 0 || pid == ppid)
		return; /* a thread: the same mappings */
	struct proc_entry *e = proc_get(pm, pid);
	if (e && time_ns < e->fork_ns)
		return;
	/* this process's own FORK, read after it was found gone: its EXIT record came first, or a
	 * sample found /proc/PID gone before any record of it (another CPU's ring) */
	bool late = e && e->exited && (time_ns < e->exit_ns || e->exit_ns == 0);
	if (late) {
		if ((e->n == 0 && e->scanned_ns) || e->missed) {
			bool all = e->n == 0;
			e->ppid = ppid; /* sampled in its parent's code before this record came */
			e->missed = false;
			if (all)
				inherit(pm, pid);
			else
				inherit_all(pm, pid);
		}
		return;
	}
	if (e && e->exited) {
		/* the pid used again: the old mappings stay (dead) until declared */
		e->exited = false;
	}
	if (!e && !(e = proc_put(pm, pid)))
		return;
	e->ppid = ppid;
	e->fork_ns = time_ns;
	if (e->missed) { /* a sample missed its mappings before this record came */
		e->missed = false;
		inherit_all(pm, pid);
	}
}

void proc_maps_exit(struct proc_maps *pm, pid_t pid, uint64_t time_ns)
{
	struct proc_entry *e = proc_get(pm, pid);
	if (!e || time_ns < e->fork_ns)
		return; /* unknown, or the exit of an earlier incarnation seen late */
	e->exited = true;
	e->exit_ns = time_ns;
	e->exit_round = pm->rounds;
	for (size_t i = 0; i < e->n; i++)
		e->m[i].dead = true;
}

static size_t evict(struct proc_maps *pm)
{
	size_t gone = 0;
	for (size_t i = 0; i < pm->pcap;) {
		struct proc_entry *e = &pm->procs[i];
		/* one round of grace after an exit: its MMAP records may come from a ring drained later */
		if (!e->pid || (e->exited && pm->rounds < e->exit_round + 2)) {
			i++;
			continue;
		}
		size_t k = 0;
		for (size_t j = 0; j < e->n; j++) {
			if (e->m[j].dead && e->m[j].declared) {
				pm->bytes -= map_bytes(e->m[j].path);
				free(e->m[j].path);
				gone++;
				continue;
			}
			e->m[k++] = e->m[j];
		}
		pm->nmaps -= e->n - k;
		e->n = k;
		if (e->exited && e->n == 0) {
			proc_del(pm, i); /* an entry may have moved into slot i: look at it again */
			continue;
		}
		i++;
	}
	pm->evicted += gone;
	return gone;
}

size_t proc_maps_reap(struct proc_maps *pm)
{
	pm->rounds++;
	return evict(pm);
}

struct proc_mapping *proc_maps_next(struct proc_maps *pm, size_t *proc_it, size_t *map_it)
{
	while (*proc_it < pm->pcap) {
		struct proc_entry *e = &pm->procs[*proc_it];
		if (e->pid && *map_it < e->n)
			return &e->m[(*map_it)++];
		(*proc_it)++;
		*map_it = 0;
	}
	return NULL;
}

void proc_maps_redeclare(struct proc_maps *pm)
{
	size_t pi = 0, mi = 0;
	struct proc_mapping *m;
	while ((m = proc_maps_next(pm, &pi, &mi)))
		m->declared = false;
}
