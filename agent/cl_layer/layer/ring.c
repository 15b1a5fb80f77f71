/* The library's end of the shared ring (../cl_ring.h): created at the first
 * command when the agent named a directory (PROF_CL_RINGS), written by one
 * thread at a time under track.c's work_mu (the reaper, or an app thread
 * after its wait; send.c), its counters kept by track.c. Without the
 * directory (an older agent, a test) nothing here is active and send.c uses
 * the socket alone. The file is built under a temporary name and renamed
 * into place once its header is valid, so the agent never maps half of one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

#define EARLY_WRAP (128u << 10) /* more than a record can take (PCL_DGRAM_MAX and its header) */

/* NULL while no ring is written; the app's threads read it without a lock (pcl_ring_seen), so an
 * abandoned ring stays mapped (4 MiB of address space until exit): a thread that read the pointer
 * just before the abandon counts into memory that is still there, not into an unmapped page. */
static _Atomic(struct pcl_ring_hdr *) ring_;
static struct pcl_ring_hdr *mapped; /* this process's mapping, abandoned or not */
static uint8_t *data;
static char ring_path[4096];

bool pcl_ring_open(void)
{
	const char *dir = getenv(PCL_ENV_RINGS);
	if (mapped || !dir || !*dir)
		return atomic_load(&ring_) != NULL;
	char tmp[4096], path[4096];
	if (snprintf(tmp, sizeof(tmp), "%s/%d.tmp", dir, (int)pcl_pid()) >= (int)sizeof(tmp) ||
	    snprintf(path, sizeof(path), "%s/%d.ring", dir, (int)pcl_pid()) >= (int)sizeof(path))
		return false;
	unlink(tmp);
	int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		pcl_log("cannot create %s: %s: commands go over the socket only", tmp, strerror(errno));
		return false;
	}
	size_t size = PCL_RING_HDR + PCL_RING_DATA;
	void *m = MAP_FAILED;
	if (ftruncate(fd, (off_t)size) == 0)
		m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		unlink(tmp);
		return false;
	}
	struct pcl_ring_hdr *h = m;
	h->data_size = PCL_RING_DATA;
	h->pid = pcl_pid();
	h->mode = (uint32_t)pcl_mode;
	h->magic = PCL_RING_MAGIC; /* the agent maps it only after the rename below */
	if (rename(tmp, path) < 0) {
		munmap(m, size);
		unlink(tmp);
		return false;
	}
	mapped = h;
	data = (uint8_t *)m + PCL_RING_HDR;
	atomic_store(&ring_, h);
	snprintf(ring_path, sizeof(ring_path), "%s", path);
	return true;
}

bool pcl_ring_active(void)
{
	return atomic_load(&ring_) != NULL;
}

bool pcl_ring_write(const uint8_t *buf, size_t len, uint32_t ncmd)
{
	struct pcl_ring_hdr *ring = atomic_load(&ring_);
	if (!ring || len > PCL_DGRAM_MAX)
		return false;
	uint64_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
	uint64_t need = pcl_ring_rec_size((uint32_t)len), pos = head % PCL_RING_DATA, skip = 0;
	/* The record goes at offset 0 when it does not fit before the end, and also as soon as the agent
	 * has read everything past EARLY_WRAP: the ring's first pages are then all it touches while the
	 * agent keeps up, warm in both caches, instead of 4 MiB of fresh pages (a page fault per 4 KiB,
	 * half of the reaper's CPU with `clpeak --kernel-latency`, issue #41). */
	if (PCL_RING_DATA - pos < need || (pos >= EARLY_WRAP && head == tail))
		skip = PCL_RING_DATA - pos;
	if (head + skip + need - tail > PCL_RING_DATA)
		return false; /* the agent has not read that far yet */
	if (skip) {
		uint32_t wrap = PCL_RING_WRAP;
		memcpy(data + pos, &wrap, sizeof(wrap));
		pos = 0;
	}
	uint32_t rec[2] = {(uint32_t)len, ncmd};
	memcpy(data + pos, rec, sizeof(rec));
	memcpy(data + pos + PCL_RING_REC, buf, len);
	atomic_fetch_add(&ring->written, ncmd);
	atomic_store_explicit(&ring->head, head + skip + need, memory_order_release);
	return true;
}

void pcl_ring_seen(int64_t n)
{
	struct pcl_ring_hdr *ring = atomic_load_explicit(&ring_, memory_order_acquire);
	if (ring)
		atomic_fetch_add_explicit(&ring->seen, (uint64_t)n, memory_order_relaxed);
}

void pcl_ring_failed(void)
{
	struct pcl_ring_hdr *ring = atomic_load(&ring_);
	if (ring)
		atomic_fetch_add(&ring->failed, 1);
}

void pcl_ring_sync_dropped(uint64_t dropped)
{
	struct pcl_ring_hdr *ring = atomic_load(&ring_);
	if (ring)
		atomic_store(&ring->dropped, dropped);
}

void pcl_ring_done(uint64_t dropped)
{
	struct pcl_ring_hdr *ring = atomic_load(&ring_);
	if (!ring)
		return;
	atomic_store(&ring->dropped, dropped);
	atomic_store(&ring->done, 1);
}

void pcl_ring_after_fork(void)
{
	/* The parent's ring stays the parent's: the child makes its own at its first command (only
	 * this thread exists in the child: nothing else can be using the mapping). */
	if (mapped)
		munmap(mapped, PCL_RING_HDR + PCL_RING_DATA);
	mapped = NULL;
	atomic_store(&ring_, NULL);
	data = NULL;
}

void pcl_ring_abandon(void)
{
	if (!atomic_load(&ring_))
		return;
	atomic_store(&ring_, NULL); /* kept mapped: see ring_ */
	unlink(ring_path);
}
