/* The agent's end of the capture library's shared rings (cl_layer/cl_ring.h):
 * a directory made before the command starts, where each profiled process's
 * library creates "<pid>.ring"; the receiver (cl_receiver.c) maps each new
 * one, reads its records as the library writes them, and when the process
 * is gone reads the rest and the counters that say what was never timed.
 * Only built with CONFIG_AGENT_OPENCL. */
#ifndef AGENT_CL_RING_READER_H
#define AGENT_CL_RING_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cl_ring;

struct cl_ring_counts {
	uint64_t seen, written, failed, dropped;
	bool done; /* the library's exit ran to the end */
};

/* A fresh directory for the rings (0700) under dir, "prof-cl-rings.<agent pid>.XXXXXX"; its
 * path in path. Directories of agents that are gone (killed) are removed first. */
int cl_rings_dir_create(const char *dir, char *path, size_t len);
/* Remove the directory and whatever rings are left in it. */
void cl_rings_dir_remove(const char *path);
/* Call fn for each "<pid>.ring" in the directory. */
void cl_rings_dir_scan(const char *path, void (*fn)(void *ctx, const char *file, int pid), void *ctx);

/* Map a ring file (checked: magic, size); -errno. */
int cl_ring_map(const char *file, struct cl_ring **out);
int cl_ring_pid(const struct cl_ring *r);
/* Copy the next record's messages into buf: their length (> 0), 0 when the
 * ring holds no more now, -EBADMSG when a record is malformed (the ring is
 * not read further). */
int cl_ring_next(struct cl_ring *r, uint8_t *buf, size_t cap);
void cl_ring_counts(const struct cl_ring *r, struct cl_ring_counts *out);
/* Unmap; remove the file too when unlink_it. */
void cl_ring_close(struct cl_ring *r, bool unlink_it);

/* Whether pid has ended (gone, or a zombie not reaped yet). */
bool cl_pid_ended(int pid);

#endif
