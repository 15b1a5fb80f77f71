/* Reading the capture library's rings (cl_ring_reader.h). */
#include "cl_ring_reader.h"
#include "generated/config.h"

#ifdef CONFIG_AGENT_OPENCL

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl_layer/cl_ring.h"

struct cl_ring {
	struct pcl_ring_hdr *h;
	const uint8_t *data;
	size_t size;
	bool bad;
	char file[4096];
};

/* Directories of agents that are gone (killed: they could not remove theirs), with what is left in them. */
static void remove_stale(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int pid = 0;
		char f[4096];
		if (sscanf(e->d_name, "prof-cl-rings.%d.", &pid) == 1 && pid > 0 && kill(pid, 0) < 0 && errno == ESRCH &&
		    snprintf(f, sizeof(f), "%s/%s", dir, e->d_name) < (int)sizeof(f))
			cl_rings_dir_remove(f);
	}
	closedir(d);
}

int cl_rings_dir_create(const char *dir, char *path, size_t len)
{
	remove_stale(dir);
	if (snprintf(path, len, "%s/prof-cl-rings.%d.XXXXXX", dir, (int)getpid()) >= (int)len)
		return -ENAMETOOLONG;
	return mkdtemp(path) ? 0 : -errno;
}

static void remove_one(void *ctx, const char *file, int pid)
{
	(void)ctx, (void)pid;
	unlink(file);
}

void cl_rings_dir_remove(const char *path)
{
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) { /* rings, and files a library had not renamed yet */
		char f[4096];
		if (e->d_name[0] != '.' && snprintf(f, sizeof(f), "%s/%s", path, e->d_name) < (int)sizeof(f))
			remove_one(NULL, f, 0);
	}
	closedir(d);
	rmdir(path);
}

void cl_rings_dir_scan(const char *path, void (*fn)(void *ctx, const char *file, int pid), void *ctx)
{
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		int pid = 0, end = 0;
		char f[4096];
		if (sscanf(e->d_name, "%d.ring%n", &pid, &end) == 1 && pid > 0 && e->d_name[end] == 0 &&
		    snprintf(f, sizeof(f), "%s/%s", path, e->d_name) < (int)sizeof(f))
			fn(ctx, f, pid);
	}
	closedir(d);
}

int cl_ring_map(const char *file, struct cl_ring **out)
{
	*out = NULL;
	int fd = open(file, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	size_t size = PCL_RING_HDR + PCL_RING_DATA;
	void *m = MAP_FAILED;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size == size)
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int err = m == MAP_FAILED ? (errno ? errno : EINVAL) : 0;
	close(fd);
	if (err)
		return -err;
	struct pcl_ring_hdr *h = m;
	struct cl_ring *r = calloc(1, sizeof(*r));
	if (!r || h->magic != PCL_RING_MAGIC || h->data_size != PCL_RING_DATA) {
		free(r);
		munmap(m, size);
		return r ? -EINVAL : -ENOMEM;
	}
	r->h = h;
	r->data = (const uint8_t *)m + PCL_RING_HDR;
	r->size = size;
	snprintf(r->file, sizeof(r->file), "%s", file);
	*out = r;
	return 0;
}

int cl_ring_pid(const struct cl_ring *r)
{
	return r->h->pid;
}

int cl_ring_next(struct cl_ring *r, uint8_t *buf, size_t cap)
{
	if (r->bad)
		return -EBADMSG;
	for (;;) {
		uint64_t tail = atomic_load_explicit(&r->h->tail, memory_order_relaxed);
		uint64_t head = atomic_load_explicit(&r->h->head, memory_order_acquire);
		if (head == tail)
			return 0;
		uint64_t pos = tail % PCL_RING_DATA, left = PCL_RING_DATA - pos;
		uint32_t rec[2];
		if (head < tail || head - tail > PCL_RING_DATA || left < PCL_RING_REC) {
			r->bad = true;
			return -EBADMSG;
		}
		memcpy(rec, r->data + pos, sizeof(rec));
		if (rec[0] == PCL_RING_WRAP) {
			atomic_store_explicit(&r->h->tail, tail + left, memory_order_release);
			continue;
		}
		uint64_t need = pcl_ring_rec_size(rec[0]);
		if (rec[0] == 0 || rec[0] > cap || need > left || need > head - tail) {
			r->bad = true;
			return -EBADMSG;
		}
		memcpy(buf, r->data + pos + PCL_RING_REC, rec[0]);
		/* the library may reuse the space once the tail passes it: after the copy */
		atomic_store_explicit(&r->h->tail, tail + need, memory_order_release);
		return (int)rec[0];
	}
}

void cl_ring_counts(const struct cl_ring *r, struct cl_ring_counts *out)
{
	out->seen = atomic_load(&r->h->seen);
	out->written = atomic_load(&r->h->written);
	out->failed = atomic_load(&r->h->failed);
	out->dropped = atomic_load(&r->h->dropped);
	out->done = atomic_load(&r->h->done) != 0;
}

void cl_ring_close(struct cl_ring *r, bool unlink_it)
{
	if (!r)
		return;
	munmap(r->h, r->size);
	if (unlink_it)
		unlink(r->file);
	free(r);
}

bool cl_pid_ended(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the name may hold anything but the last ')' */
	return p && (p[2] == 'Z' || p[2] == 'X');
}

#endif
