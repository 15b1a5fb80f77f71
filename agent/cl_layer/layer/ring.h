/* The library's end of the shared ring (ring.c, ../cl_ring.h). Opened by
 * track.c when the reaper starts, written by send.c (reaper thread only). */
#ifndef PCL_RING_H
#define PCL_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../cl_ring.h"
#include "pcl.h"

/* Create and map this process's ring when PROF_CL_RINGS is set; true when active. */
bool pcl_ring_open(void) PCL_HIDDEN;
bool pcl_ring_active(void) PCL_HIDDEN;
/* One batch of messages holding ncmd commands; false when the ring has no room now. */
bool pcl_ring_write(const uint8_t *buf, size_t len, uint32_t ncmd) PCL_HIDDEN;
/* The counters: a command enqueued (or -1: its enqueue failed after all), one that ended without times. */
void pcl_ring_seen(int64_t n) PCL_HIDDEN;
void pcl_ring_failed(void) PCL_HIDDEN;
void pcl_ring_sync_dropped(uint64_t dropped) PCL_HIDDEN;
/* The exit ran to the end: the final drop count; nothing more will be written. */
void pcl_ring_done(uint64_t dropped) PCL_HIDDEN;
void pcl_ring_after_fork(void) PCL_HIDDEN;
/* The agent is gone (or never came): unmap and remove the ring; the socket rules apply. */
void pcl_ring_abandon(void) PCL_HIDDEN;

#endif
