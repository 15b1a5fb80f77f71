#include "proc_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

void proc_maps_init(struct proc_maps *pm)
{
	memset(pm, 0, sizeof(*pm));
	pm->maps_fmt = "/proc/%d/maps";
}

void proc_maps_free(struct proc_maps *pm)
{
	for (size_t i = 0; i < pm->n; i++)
		free(pm->m[i].path);
	free(pm->m);
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
	if (p[0] != '/')
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

static bool known(const struct proc_maps *pm, pid_t pid, uint64_t s, uint64_t e, uint64_t off, const char *path)
{
	for (size_t i = 0; i < pm->n; i++) {
		const struct proc_mapping *m = &pm->m[i];
		if (m->pid == pid && m->start == s && m->end == e && m->pgoff == off && strcmp(m->path, path) == 0)
			return true;
	}
	return false;
}

static void note_scan(struct proc_maps *pm, pid_t pid, uint64_t now_ns)
{
	for (size_t i = 0; i < pm->npids; i++)
		if (pm->pids[i].pid == pid) {
			pm->pids[i].scanned_ns = now_ns;
			return;
		}
	if (pm->npids < PROC_MAPS_PIDS) {
		pm->pids[pm->npids].pid = pid;
		pm->pids[pm->npids++].scanned_ns = now_ns;
	}
}

static int add(struct proc_maps *pm, pid_t pid, uint64_t s, uint64_t e, uint64_t off, const char *path)
{
	if (pm->n >= PROC_MAPS_MAX)
		return -ENOSPC;
	if (pm->n == pm->cap) {
		size_t ncap = pm->cap ? pm->cap * 2 : 32;
		struct proc_mapping *nm = realloc(pm->m, ncap * sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		pm->m = nm;
		pm->cap = ncap;
	}
	struct proc_mapping *m = &pm->m[pm->n];
	memset(m, 0, sizeof(*m));
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	m->id = (uint32_t)pm->n + 1;
	m->pid = pid;
	m->start = s;
	m->end = e;
	m->pgoff = off;
	/* The file as the process sees it (its mount namespace), else our view. */
	char rooted[4200];
	snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)pid, path);
	int rc = elf_build_id(rooted, m->build_id, sizeof(m->build_id));
	if (rc < 0)
		rc = elf_build_id(path, m->build_id, sizeof(m->build_id));
	m->build_id_len = rc > 0 ? (size_t)rc : 0;
	pm->n++;
	return 0;
}

int proc_maps_add(struct proc_maps *pm, pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path)
{
	if (end <= start || pid <= 0 || path[0] != '/')
		return -EINVAL;
	if (known(pm, pid, start, end, pgoff, path))
		return 0;
	int rc = add(pm, pid, start, end, pgoff, path);
	return rc < 0 ? rc : 1;
}

int proc_maps_scan(struct proc_maps *pm, pid_t pid, uint64_t now_ns)
{
	char fn[64];
	snprintf(fn, sizeof(fn), pm->maps_fmt, (int)pid);
	note_scan(pm, pid, now_ns);
	FILE *f = fopen(fn, "re");
	if (!f)
		return -errno;
	char line[4608];
	int added = 0, rc = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t s, e, off;
		char *path;
		if (!proc_maps_parse_line(line, &s, &e, &off, &path) || known(pm, pid, s, e, off, path))
			continue;
		rc = add(pm, pid, s, e, off, path);
		if (rc < 0)
			break;
		added++;
	}
	fclose(f);
	if (rc == -ENOSPC)
		log_debug("more than %u mappings: the rest stay unsymbolized", PROC_MAPS_MAX);
	return rc < 0 && rc != -ENOSPC ? rc : added;
}

const struct proc_mapping *proc_maps_find(const struct proc_maps *pm, pid_t pid, uint64_t ip)
{
	for (size_t i = pm->n; i-- > 0;) /* newest first: a remapped range wins */
		if (pm->m[i].pid == pid && ip >= pm->m[i].start && ip < pm->m[i].end)
			return &pm->m[i];
	return NULL;
}

int proc_maps_ensure(struct proc_maps *pm, pid_t pid, uint64_t ip, uint64_t now_ns, uint64_t min_gap_ns)
{
	if (ip == 0 || pid <= 0 || proc_maps_find(pm, pid, ip))
		return 0;
	for (size_t i = 0; i < pm->npids; i++)
		if (pm->pids[i].pid == pid && now_ns - pm->pids[i].scanned_ns < min_gap_ns)
			return 0;
	return proc_maps_scan(pm, pid, now_ns);
}

void proc_maps_redeclare(struct proc_maps *pm)
{
	for (size_t i = 0; i < pm->n; i++)
		pm->m[i].declared = false;
}
