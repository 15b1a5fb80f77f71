#include "spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frame.h"
#include "log.h"

struct spool {
	char dir[PATH_MAX];
	uint64_t max_bytes;
	uint64_t seg_bytes;
	struct spool_segment *segs; /* oldest first; the last one is active when active_fd >= 0 */
	size_t nsegs, cap;
	int active_fd;
	uint32_t next_id;
	uint64_t bytes, records, dropped, last_seq, acked;
	uint64_t disk_full_drops; /* segments dropped because the disk was full */
	int dir_fd;		  /* the session directory, flock'ed while this process owns it */
	uint8_t *hello;		  /* adopted: the saved Hello frame */
	size_t hello_len;
	char collector[256]; /* adopted: the saved collector HOST:PORT */
};

static void seg_path(const struct spool *s, uint32_t id, char *out, size_t outlen);

#define HELLO_FILE "hello.frame"
#define COLLECTOR_FILE "collector"
#define META_MAX (2u << 20) /* a Hello frame is at most a frame (CONFIG_MAX_FRAME_KB) */

/* Open dir and take its lock without waiting: 0, -EBUSY (another process holds it) or -errno. */
static int lock_dir(const char *dir, int *fd_out)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EINTR)
			continue;
		int e = errno == EWOULDBLOCK ? EBUSY : errno;
		close(fd);
		return -e;
	}
	*fd_out = fd;
	return 0;
}

static void meta_path(const char *dir, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", dir, name);
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

int spool_open(struct spool **out, const char *base_dir, const char *agent_id, uint64_t boot_id,
	       uint64_t max_bytes, size_t seg_bytes, char *err, size_t errlen)
{
	*out = NULL;
	struct spool *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	char id[128];
	size_t k = 0;
	for (const char *p = agent_id; *p && k < sizeof(id) - 1; p++) {
		char c = *p;
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
			 c == '_' || c == '-';
		id[k++] = ok ? c : '_';
	}
	id[k] = 0;
	if (snprintf(s->dir, sizeof(s->dir), "%s/%s-%016llx", base_dir, id, (unsigned long long)boot_id) >=
	    (int)sizeof(s->dir)) {
		snprintf(err, errlen, "spool path too long under %s", base_dir);
		free(s);
		return -ENAMETOOLONG;
	}
	int rc = mkdir_p(s->dir);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create spool directory %s: %s (choose another with --spool DIR)", s->dir,
			 strerror(-rc));
		free(s);
		return rc;
	}
	rc = lock_dir(s->dir, &s->dir_fd);
	if (rc < 0) {
		snprintf(err, errlen, "cannot lock spool directory %s: %s%s", s->dir, strerror(-rc),
			 rc == -EBUSY ? " (another agent process with the same agent id and boot id?)" : "");
		free(s);
		return rc;
	}
	s->max_bytes = max_bytes;
	s->seg_bytes = seg_bytes ? seg_bytes : SPOOL_SEGMENT_BYTES;
	s->active_fd = -1;
	*out = s;
	return 0;
}

/* Write len bytes to dir/name through a temporary file and a rename. */
static int write_meta(const char *dir, const char *name, const void *data, size_t len)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 48];
	meta_path(dir, name, path, sizeof(path));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, data, len);
	int rc = w == (ssize_t)len ? 0 : w < 0 ? -errno : -EIO;
	if (close(fd) < 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

int spool_set_meta(struct spool *s, const uint8_t *hello, size_t len, const char *collector)
{
	/* the collector first: a Hello file is what makes the directory an orphan once unlocked */
	int rc = write_meta(s->dir, COLLECTOR_FILE, collector, strlen(collector));
	if (rc == 0)
		rc = write_meta(s->dir, HELLO_FILE, hello, len);
	if (rc < 0)
		log_warn("spool %s: cannot save the session's Hello (%s): if this run ends with records left, "
			 "no later run can send them",
			 s->dir, strerror(-rc));
	return rc;
}

/* The whole file (at most max bytes, else -EFBIG), NUL-terminated. */
static int read_file(const char *path, size_t max, uint8_t **data, size_t *len)
{
	*data = NULL;
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat sb;
	int rc = fstat(fd, &sb) < 0 ? -errno : (uint64_t)sb.st_size > max ? -EFBIG : 0;
	uint8_t *b = rc == 0 ? malloc((size_t)sb.st_size + 1) : NULL;
	if (rc == 0 && !b)
		rc = -ENOMEM;
	size_t got = 0;
	while (rc == 0 && got < (size_t)sb.st_size) {
		ssize_t r = pread(fd, b + got, (size_t)sb.st_size - got, (off_t)got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			rc = r < 0 ? -errno : -EIO;
		else
			got += (size_t)r;
	}
	close(fd);
	if (rc < 0) {
		free(b);
		return rc;
	}
	b[got] = 0;
	*data = b;
	*len = got;
	return 0;
}

int spool_read_meta(const char *dir, uint8_t **hello, size_t *len, char *collector, size_t clen)
{
	char path[PATH_MAX + 32];
	meta_path(dir, HELLO_FILE, path, sizeof(path));
	int rc = read_file(path, META_MAX, hello, len);
	if (rc < 0)
		return rc;
	uint8_t *c = NULL;
	size_t n = 0;
	meta_path(dir, COLLECTOR_FILE, path, sizeof(path));
	if (clen)
		snprintf(collector, clen, "%s", read_file(path, 1024, &c, &n) == 0 ? (char *)c : "");
	free(c);
	return 0;
}

const uint8_t *spool_hello(const struct spool *s, size_t *len)
{
	*len = s->hello_len;
	return s->hello;
}

const char *spool_collector(const struct spool *s)
{
	return s->collector;
}

enum spool_state spool_probe(const char *dir)
{
	char path[PATH_MAX + 32];
	meta_path(dir, HELLO_FILE, path, sizeof(path));
	if (access(path, F_OK) != 0)
		return SPOOL_NO_HELLO;
	int fd = -1;
	if (lock_dir(dir, &fd) == -EBUSY)
		return SPOOL_LIVE;
	if (fd >= 0)
		close(fd); /* releases the lock */
	return SPOOL_ORPHAN;
}

/* The whole frames of a segment file: their count, first/last seq and bytes.
 * A torn last frame (the agent died while writing it) is left out. */
static int scan_segment(const char *path, struct spool_segment *g)
{
	uint8_t *b;
	size_t len;
	int rc = read_file(path, 64u << 20, &b, &len); /* a segment: ~256 KiB and one frame over */
	if (rc < 0)
		return rc;
	size_t off = 0;
	while (off < len) {
		uint32_t body;
		uint64_t seq;
		int h = frame_get_varint(b + off, len - off, &body);
		if (h <= 0 || (size_t)h + body > len - off || spool_frame_seq(b + off, (size_t)h + body, &seq) < 0)
			break;
		if (g->records == 0)
			g->first_seq = seq;
		g->last_seq = seq;
		g->records++;
		off += (size_t)h + body;
	}
	g->bytes = off;
	free(b);
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct spool_segment *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The segments of an adopted directory, oldest first. */
static int load_segments(struct spool *s)
{
	DIR *d = opendir(s->dir);
	if (!d)
		return -errno;
	struct dirent *de;
	int rc = 0;
	while (rc == 0 && (de = readdir(d))) {
		unsigned id;
		char tail;
		if (sscanf(de->d_name, "seg-%8u.spl%c", &id, &tail) != 1)
			continue;
		if (s->nsegs == s->cap) {
			size_t nc = s->cap ? s->cap * 2 : 16;
			struct spool_segment *n = realloc(s->segs, nc * sizeof(*n));
			if (!n) {
				rc = -ENOMEM;
				break;
			}
			s->segs = n;
			s->cap = nc;
		}
		struct spool_segment *g = &s->segs[s->nsegs];
		memset(g, 0, sizeof(*g));
		g->id = id;
		char path[PATH_MAX + 32];
		seg_path(s, id, path, sizeof(path));
		rc = scan_segment(path, g);
		if (rc == 0 && g->records == 0)
			unlink(path); /* nothing whole in it */
		else if (rc == 0)
			s->nsegs++;
	}
	closedir(d);
	if (s->nsegs > 1)
		qsort(s->segs, s->nsegs, sizeof(*s->segs), by_id);
	for (size_t i = 0; i < s->nsegs; i++) {
		s->records += s->segs[i].records;
		s->bytes += s->segs[i].bytes;
		if (s->segs[i].last_seq > s->last_seq)
			s->last_seq = s->segs[i].last_seq;
		if (s->segs[i].id >= s->next_id)
			s->next_id = s->segs[i].id + 1;
	}
	return rc;
}

int spool_adopt(struct spool **out, const char *dir, char *err, size_t errlen)
{
	*out = NULL;
	struct spool *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->active_fd = -1;
	s->dir_fd = -1;
	s->max_bytes = UINT64_MAX;
	s->seg_bytes = SPOOL_SEGMENT_BYTES;
	if (snprintf(s->dir, sizeof(s->dir), "%s", dir) >= (int)sizeof(s->dir)) {
		free(s);
		return -ENAMETOOLONG;
	}
	char path[PATH_MAX + 32];
	meta_path(dir, HELLO_FILE, path, sizeof(path));
	int rc = access(path, F_OK) == 0 ? lock_dir(dir, &s->dir_fd) : -ENOENT;
	if (rc == 0)
		rc = spool_read_meta(dir, &s->hello, &s->hello_len, s->collector, sizeof(s->collector));
	if (rc == 0)
		rc = load_segments(s);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", dir,
			 rc == -ENOENT ? "no saved Hello (left by an older agent): `agent spool drop` removes it"
			 : rc == -EBUSY ? "its agent is still running"
					: strerror(-rc));
		if (s->dir_fd >= 0)
			close(s->dir_fd);
		free(s->hello);
		free(s->segs);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

static void seg_path(const struct spool *s, uint32_t id, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/seg-%08u.spl", s->dir, id);
}

/* Delete the oldest segment. */
static void drop_oldest(struct spool *s)
{
	if (s->nsegs == 0)
		return;
	struct spool_segment *g = &s->segs[0];
	if (s->nsegs == 1 && s->active_fd >= 0) {
		close(s->active_fd);
		s->active_fd = -1;
	}
	char path[PATH_MAX + 32];
	seg_path(s, g->id, path, sizeof(path));
	if (unlink(path) < 0 && errno != ENOENT)
		log_warn("spool: cannot delete %s: %s", path, strerror(errno));
	s->bytes -= g->bytes;
	s->records -= g->records;
	memmove(&s->segs[0], &s->segs[1], (s->nsegs - 1) * sizeof(*g));
	s->nsegs--;
}

bool spool_would_drop(const struct spool *s, size_t len)
{
	return s->bytes + len > s->max_bytes && s->records > 0;
}

static int new_segment(struct spool *s, uint64_t seq)
{
	if (s->active_fd >= 0) {
		close(s->active_fd);
		s->active_fd = -1;
	}
	if (s->nsegs == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 16;
		struct spool_segment *n = realloc(s->segs, nc * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->segs = n;
		s->cap = nc;
	}
	char path[PATH_MAX + 32];
	uint32_t id = s->next_id++;
	seg_path(s, id, path, sizeof(path));
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	s->active_fd = fd;
	struct spool_segment *g = &s->segs[s->nsegs++];
	memset(g, 0, sizeof(*g));
	g->id = id;
	g->first_seq = seq;
	return 0;
}

static bool disk_full(int rc)
{
	return rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG;
}

/* Write one whole frame at the end of segment g, or nothing (a partial write is cut off). */
static int write_frame(struct spool *s, struct spool_segment *g, const uint8_t *frame, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t w = write(s->active_fd, frame + done, len - done);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			/* Do not leave half a frame behind. */
			if (ftruncate(s->active_fd, (off_t)g->bytes) < 0)
				log_debug("spool: ftruncate: %s", strerror(errno));
			return -e;
		}
		done += (size_t)w;
	}
	return 0;
}

/* Disk full: delete the oldest segment holding records (counted as dropped, with a warning);
 * an empty segment left by the failed write goes too. -ENOSPC when nothing is left to drop. */
static int drop_for_space(struct spool *s, int why)
{
	if (s->nsegs > 0 && s->segs[s->nsegs - 1].records == 0) {
		/* the newest segment is empty (just created): remove it first, it holds nothing */
		struct spool_segment *g = &s->segs[s->nsegs - 1];
		char path[PATH_MAX + 32];
		seg_path(s, g->id, path, sizeof(path));
		if (s->active_fd >= 0) {
			close(s->active_fd);
			s->active_fd = -1;
		}
		unlink(path);
		s->nsegs--;
	}
	if (s->nsegs == 0)
		return -ENOSPC;
	uint64_t n = s->segs[0].records;
	drop_oldest(s);
	s->dropped += n;
	s->disk_full_drops++;
	if (s->disk_full_drops == 1 || (s->disk_full_drops & (s->disk_full_drops - 1)) == 0)
		log_warn("spool %s: %s before the cap: dropped the %llu oldest records, %llu dropped so far "
			 "(free disk space or lower --spool-max)",
			 s->dir, strerror(-why), (unsigned long long)n, (unsigned long long)s->dropped);
	return 0;
}

int spool_append(struct spool *s, uint64_t seq, const uint8_t *frame, size_t len)
{
	if (len > s->max_bytes)
		return -EFBIG;
	if (spool_would_drop(s, len)) {
		uint64_t before = s->records;
		while (s->nsegs > 0 && s->bytes + len > s->max_bytes)
			drop_oldest(s);
		uint64_t n = before - s->records;
		s->dropped += n;
		char cap[32];
		if (s->max_bytes >= (1u << 20))
			snprintf(cap, sizeof(cap), "%llu MiB", (unsigned long long)(s->max_bytes >> 20));
		else
			snprintf(cap, sizeof(cap), "%llu bytes", (unsigned long long)s->max_bytes);
		log_warn("spool full (cap %s): dropped %llu oldest records, %llu dropped so far", cap,
			 (unsigned long long)n, (unsigned long long)s->dropped);
	}
	struct spool_segment *g;
	for (;;) {
		g = s->nsegs ? &s->segs[s->nsegs - 1] : NULL;
		int rc = 0;
		if (s->active_fd < 0 || !g || g->bytes >= s->seg_bytes) {
			rc = new_segment(s, seq);
			g = rc == 0 ? &s->segs[s->nsegs - 1] : g;
		}
		if (rc == 0)
			rc = write_frame(s, g, frame, len);
		if (rc == 0)
			break;
		if (!disk_full(rc))
			return rc;
		/* The disk is full before the cap: make room by dropping the oldest records. */
		if (drop_for_space(s, rc) < 0)
			return rc;
	}
	if (g->records == 0)
		g->first_seq = seq;
	g->last_seq = seq;
	g->bytes += len;
	g->records++;
	s->bytes += len;
	s->records++;
	if (seq > s->last_seq)
		s->last_seq = seq;
	return 0;
}

void spool_ack(struct spool *s, uint64_t seq)
{
	if (seq > s->acked)
		s->acked = seq;
	while (s->nsegs > 0 && s->segs[0].last_seq <= seq)
		drop_oldest(s);
}

uint64_t spool_bytes(const struct spool *s) { return s->bytes; }
uint64_t spool_records(const struct spool *s) { return s->records; }
uint64_t spool_dropped(const struct spool *s) { return s->dropped; }
uint64_t spool_last_seq(const struct spool *s) { return s->last_seq; }
uint64_t spool_acked(const struct spool *s) { return s->acked; }
size_t spool_nsegments(const struct spool *s) { return s->nsegs; }
const char *spool_path(const struct spool *s) { return s->dir; }

const struct spool_segment *spool_segment_at(const struct spool *s, size_t i)
{
	return i < s->nsegs ? &s->segs[i] : NULL;
}

uint64_t spool_close(struct spool *s, bool remove_if_empty)
{
	if (!s)
		return 0;
	if (s->active_fd >= 0)
		close(s->active_fd);
	uint64_t left = s->records;
	if (remove_if_empty && left == 0) {
		/* Segments of zero records cannot exist; remove the directory (still locked). */
		char path[PATH_MAX + 32];
		meta_path(s->dir, HELLO_FILE, path, sizeof(path));
		unlink(path);
		meta_path(s->dir, COLLECTOR_FILE, path, sizeof(path));
		unlink(path);
		if (rmdir(s->dir) < 0)
			log_warn("spool: cannot remove %s: %s", s->dir, strerror(errno));
	}
	if (s->dir_fd >= 0)
		close(s->dir_fd);
	free(s->hello);
	free(s->segs);
	free(s);
	return left;
}

int spool_frame_seq(const uint8_t *frame, size_t len, uint64_t *seq)
{
	uint32_t body;
	int h = frame_get_varint(frame, len, &body);
	if (h <= 0 || (size_t)h + body > len)
		return -EBADMSG;
	const uint8_t *p = frame + h, *end = p + body;
	*seq = 0;
	while (p < end) {
		uint64_t tag = 0, v = 0;
		int shift = 0;
		do {
			if (p >= end || shift > 63)
				return -EBADMSG;
			tag |= (uint64_t)(*p & 0x7f) << shift;
			shift += 7;
		} while (*p++ & 0x80);
		unsigned wt = tag & 7;
		uint64_t field = tag >> 3;
		if (wt == 0 || wt == 2) {
			shift = 0;
			do {
				if (p >= end || shift > 63)
					return -EBADMSG;
				v |= (uint64_t)(*p & 0x7f) << shift;
				shift += 7;
			} while (*p++ & 0x80);
			if (wt == 0 && field == 1) {
				*seq = v;
				return 0;
			}
			if (wt == 2) {
				if (v > (uint64_t)(end - p))
					return -EBADMSG;
				p += v;
			}
		} else if (wt == 1) {
			p += 8;
		} else if (wt == 5) {
			p += 4;
		} else {
			return -EBADMSG;
		}
	}
	return 0; /* seq absent: 0 (proto3 default) */
}

void spool_iter_init(struct spool_iter *it, struct spool *s, uint64_t after_seq)
{
	memset(it, 0, sizeof(*it));
	it->s = s;
	it->after = after_seq;
}

void spool_iter_free(struct spool_iter *it)
{
	free(it->buf);
	it->buf = NULL;
	it->cap = it->len = it->pos = 0;
}

/* Load the next unread bytes: the rest of the current segment if it grew,
 * else the next segment that holds seqs > after. 1 loaded, 0 none, -errno. */
static int iter_load(struct spool_iter *it)
{
	const struct spool *s = it->s;
	const struct spool_segment *g = NULL;
	uint64_t from = 0;
	for (size_t i = 0; i < s->nsegs; i++) {
		const struct spool_segment *c = &s->segs[i];
		if (it->started && c->id == it->seg_id && c->bytes > it->off) {
			g = c;
			from = it->off;
			break;
		}
		if ((!it->started || c->id > it->seg_id) && c->last_seq > it->after) {
			g = c;
			from = 0;
			break;
		}
	}
	if (!g)
		return 0;
	size_t want = (size_t)(g->bytes - from);
	if (want > it->cap) {
		uint8_t *nb = realloc(it->buf, want);
		if (!nb)
			return -ENOMEM;
		it->buf = nb;
		it->cap = want;
	}
	char path[PATH_MAX + 32];
	seg_path(s, g->id, path, sizeof(path));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t got = 0;
	while (got < want) {
		ssize_t r = pread(fd, it->buf + got, want - got, (off_t)(from + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = r < 0 ? errno : EIO;
			close(fd);
			return -e;
		}
		got += (size_t)r;
	}
	close(fd);
	it->started = true;
	it->seg_id = g->id;
	it->off = from + want;
	it->len = want;
	it->pos = 0;
	return 1;
}

int spool_iter_next(struct spool_iter *it, const uint8_t **frame, size_t *len, uint64_t *seq)
{
	for (;;) {
		while (it->pos < it->len) {
			const uint8_t *f = it->buf + it->pos;
			size_t left = it->len - it->pos;
			uint32_t body;
			int h = frame_get_varint(f, left, &body);
			uint64_t sq;
			if (h <= 0 || (size_t)h + body > left || spool_frame_seq(f, (size_t)h + body, &sq) < 0) {
				log_warn("spool: segment %u is corrupt at offset %llu; skipping its rest", it->seg_id,
					 (unsigned long long)(it->off - it->len + it->pos));
				it->pos = it->len;
				break;
			}
			it->pos += (size_t)h + body;
			if (sq <= it->after)
				continue;
			it->after = sq;
			*frame = f;
			*len = (size_t)h + body;
			*seq = sq;
			return 1;
		}
		int rc = iter_load(it);
		if (rc <= 0)
			return rc;
	}
}
