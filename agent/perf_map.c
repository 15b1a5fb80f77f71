/* /tmp/perf-PID.map files read and sent (perf_map.h). */
#include "perf_map.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "validate_perf_map.h"

void perf_maps_init(struct perf_maps *pm)
{
	memset(pm, 0, sizeof(*pm));
	pm->root_fmt = "/proc/%d/root/tmp/perf-%d.map";
	pm->path_fmt = "/tmp/perf-%d.map";
	pm->proc_fmt = "/proc/%d";
}

int perf_maps_retry(struct perf_maps *pm, uint64_t now_ns, perf_map_emit_fn emit, void *ctx)
{
	int sent = 0;
	for (size_t i = 0; i < PERF_MAP_PIDS; i++) {
		struct perf_map_file *f = &pm->f[i];
		if (!f->pid || !f->pending || now_ns - f->checked_ns < PERF_MAP_CHECK_GAP_NS)
			continue;
		int rc = perf_maps_check(pm, f->pid, now_ns, emit, ctx);
		if (rc < 0)
			return rc;
		sent += rc;
	}
	return sent;
}

void perf_maps_forget(struct perf_maps *pm)
{
	for (size_t i = 0; i < PERF_MAP_PIDS; i++)
		pm->f[i].off = 0;
}

void perf_maps_free(struct perf_maps *pm)
{
	for (size_t i = 0; i < PERF_MAP_PIDS; i++)
		if (pm->f[i].fd1)
			close(pm->f[i].fd1 - 1);
	memset(pm->f, 0, sizeof(pm->f));
}

/* Which entry goes first: a free one, then one of a process without a file (ino 0), then the one checked
 * longest ago. */
static bool evict_before(const struct perf_map_file *a, const struct perf_map_file *b)
{
	if (!a->pid || !b->pid)
		return !a->pid && b->pid;
	if ((a->ino == 0) != (b->ino == 0))
		return a->ino == 0;
	return a->checked_ns < b->checked_ns;
}

/* pid's entry, else the one evict_before() picks, made pid's */
static struct perf_map_file *slot(struct perf_maps *pm, int32_t pid)
{
	struct perf_map_file *old = &pm->f[0];
	for (size_t i = 0; i < PERF_MAP_PIDS; i++) {
		if (pm->f[i].pid == pid)
			return &pm->f[i];
		if (evict_before(&pm->f[i], old))
			old = &pm->f[i];
	}
	if (old->fd1)
		close(old->fd1 - 1);
	memset(old, 0, sizeof(*old));
	old->pid = pid;
	old->uid = (uint32_t)-1;
	return old;
}

struct batch {
	Prof__PerfMap m;
	uint64_t start[PERF_MAP_REC_SYMS], size[PERF_MAP_REC_SYMS];
	char *name[PERF_MAP_REC_SYMS];
	char buf[PERF_MAP_CHUNK + 1];
};

static int flush(struct perf_maps *pm, struct batch *b, perf_map_emit_fn emit, void *ctx)
{
	if (!b->m.n_start)
		return 0;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_PERF_MAP;
	env.perf_map = &b->m;
	b->m.n_size = b->m.n_name = b->m.n_start;
	int rc = emit(ctx, &env);
	if (rc >= 0)
		pm->syms += b->m.n_start;
	b->m.n_start = 0;
	return rc < 0 ? rc : 0;
}

/* One line without its '\n', parsed as perf's dso__load_perf_map
 * (tools/perf/util/symbol.c) does: hex2u64 (strtoull base 16) the start, one
 * separator, the size, one separator, the rest is the name; a line with fewer
 * than three characters left after a number is skipped. 1 taken, 0 skipped. */
static int parse_line(char *line, size_t line_len, uint64_t *start, uint64_t *size, char **name)
{
	char *p;
	*start = strtoull(line, &p, 16);
	size_t len = (size_t)(p - line) + 1;
	if (len + 2 >= line_len)
		return 0;
	*size = strtoull(line + len, &p, 16);
	len = (size_t)(p - line) + 1;
	if (len + 2 >= line_len || *size == 0 || *start + *size < *start)
		return 0;
	*name = line + len;
	if (line_len - len > PERF_MAP_NAME_MAX)
		(*name)[PERF_MAP_NAME_MAX] = 0;
	return 1;
}

/* Read f's file (fd, size bytes now) from f->off; records sent through emit. */
static int read_new(struct perf_maps *pm, struct perf_map_file *f, int fd, uint64_t size,
		    perf_map_emit_fn emit, void *ctx)
{
	struct batch *b = malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	int sent = 0, rc = 0;
	while (f->off < size && f->off < PERF_MAP_FILE_MAX) {
		size_t want = size - f->off < PERF_MAP_CHUNK ? (size_t)(size - f->off) : PERF_MAP_CHUNK;
		ssize_t n = pread(fd, b->buf, want, (off_t)f->off);
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		prof__perf_map__init(&b->m);
		b->m.pid = f->pid;
		b->m.offset = f->off;
		b->m.start = b->start;
		b->m.size = b->size;
		b->m.name = b->name;
		size_t pos = 0;		   /* start of the next line in buf */
		uint64_t rec_off = f->off; /* where the batch's first line is */
		for (;;) {
			char *nl = memchr(b->buf + pos, '\n', (size_t)n - pos);
			if (!nl)
				break;
			*nl = 0;
			size_t i = b->m.n_start;
			if (parse_line(b->buf + pos, (size_t)(nl - (b->buf + pos)), &b->start[i], &b->size[i],
				       &b->name[i]))
				b->m.n_start++;
			pos = (size_t)(nl - b->buf) + 1;
			if (b->m.n_start == PERF_MAP_REC_SYMS) {
				int n_syms = (int)b->m.n_start;
				if ((rc = flush(pm, b, emit, ctx)) < 0)
					break;
				sent += n_syms;
				f->off = rec_off + pos; /* after the lines sent */
				b->m.offset = f->off;
			}
		}
		if (rc < 0)
			break;
		int n_syms = (int)b->m.n_start;
		if ((rc = flush(pm, b, emit, ctx)) < 0)
			break;
		sent += n_syms;
		f->off = rec_off + pos;
		if (pos == 0) { /* no whole line: a partial one being written, or one longer than a chunk */
			if ((size_t)n == PERF_MAP_CHUNK)
				f->off = PERF_MAP_FILE_MAX; /* a line over 64 KiB: no more of this file */
			break;
		}
	}
	if (f->off >= PERF_MAP_FILE_MAX && size > f->off)
		pm->capped++;
	free(b);
	return rc < 0 ? rc : sent;
}

/* pid's thread-group id in its own pid namespace (the last NStgid of /proc/PID/status, Linux 4.1),
 * else pid. */
static int ns_tgid(pid_t pid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	int ns = (int)pid;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "NStgid:", 7) == 0) {
			char *p = line + 7, *end;
			for (long v; (v = strtol(p, &end, 10)) > 0 && end != p; p = end)
				ns = (int)v;
			break;
		}
	if (f)
		fclose(f);
	return ns;
}

/* pid lives in another mount namespace than ours (perf's nsinfo__need_setns()). */
static bool other_mnt_ns(pid_t pid)
{
	char path[64], ours[64], theirs[64];
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	ssize_t a = readlink("/proc/self/ns/mnt", ours, sizeof(ours) - 1),
		b = readlink(path, theirs, sizeof(theirs) - 1);
	return a > 0 && b > 0 && (a != b || memcmp(ours, theirs, (size_t)a) != 0);
}

/* The process's map file, opened without following a last symlink: in its mount namespace under its
 * own pid there when that namespace is not ours, else (or missing there) ours under pid. */
static int open_map(const struct perf_maps *pm, pid_t pid)
{
	char path[256];
	int fd = -1;
	if (pm->root_fmt && other_mnt_ns(pid)) {
		snprintf(path, sizeof(path), pm->root_fmt, (int)pid, ns_tgid(pid));
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0 || errno != ENOENT)
			return fd;
	}
	snprintf(path, sizeof(path), pm->path_fmt, (int)pid);
	return open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
}

int perf_maps_check(struct perf_maps *pm, pid_t pid, uint64_t now_ns, perf_map_emit_fn emit, void *ctx)
{
	if (pid <= 0)
		return 0;
	struct perf_map_file *f = slot(pm, pid);
	if (f->checked_ns && now_ns - f->checked_ns < PERF_MAP_CHECK_GAP_NS) {
		f->pending = true;
		return 0;
	}
	f->checked_ns = now_ns ? now_ns : 1;
	f->pending = false;
	struct stat st;
	char path[64];
	snprintf(path, sizeof(path), pm->proc_fmt, (int)pid);
	if (stat(path, &st) == 0)
		f->uid = st.st_uid; /* the process's user (kept: it may be gone at the next look) */
	int fd = open_map(pm, pid);
	if (fd < 0 && errno == ELOOP)
		pm->refused++; /* a symlink */
	if (fd < 0) /* gone from reach (its mount namespace ended with it): the file opened before, if any */
		return f->fd1 && fstat(f->fd1 - 1, &st) == 0
			   ? read_new(pm, f, f->fd1 - 1, (uint64_t)st.st_size, emit, ctx)
			   : 0;
	/* a regular file of the process's user or of root (perf: "current user or root"); of a process
	 * gone before its user was seen, root's only */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != f->uid)) {
		pm->refused++;
		close(fd);
		return 0;
	}
	if (st.st_dev != f->dev || st.st_ino != f->ino || (uint64_t)st.st_size < f->off) {
		f->dev = st.st_dev; /* another file (the pid used again), or one written anew */
		f->ino = st.st_ino;
		f->off = 0;
	}
	if (f->fd1)
		close(f->fd1 - 1);
	f->fd1 = fd + 1; /* kept: read on after the path is gone */
	return read_new(pm, f, fd, (uint64_t)st.st_size, emit, ctx);
}
