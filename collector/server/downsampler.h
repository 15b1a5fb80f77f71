/* The listening collector's own downsampling (--downsample-after D
 * [--downsample-per W], #40): a thread with a connection of its own merges
 * the CPU sample blocks of records older than D per window W
 * (query_downsample_some), off the ingest path (the loop's thread only
 * waits for a window's short transaction, as for any other writer). Each
 * pass merges at most DOWNSAMPLER_WINDOWS_PER_PASS windows (a stop waits for
 * the pass under way); with more left,
 * the next pass comes DOWNSAMPLER_BUSY_PAUSE_MS later, else a minute later
 * (a tenth of a shorter D, at least a second). The first pass is at start.
 * Compaction (--compact-after D [--compact-per W], default W 16 s) is the
 * same merge over a short window: fewer, larger zstd frames for a report to
 * decode (bench/RESULTS.md, w40g), the time resolution W. */
#ifndef COLLECTOR_SERVER_DOWNSAMPLER_H
#define COLLECTOR_SERVER_DOWNSAMPLER_H

#include <stddef.h>
#include <stdint.h>

#define DOWNSAMPLER_WINDOWS_PER_PASS 64u
#define DOWNSAMPLER_BUSY_PAUSE_MS 250u
#define DOWNSAMPLER_EVERY_MS 60000u

struct downsampler;

/* One merge the thread makes: the blocks of records older than after_ns, per window per_ns; option names
 * it in the log ("--downsample-after"). */
struct downsampler_tier {
	const char *option;
	int64_t after_ns, per_ns;
};
#define DOWNSAMPLER_MAX_TIERS 2

/* Start the thread on the store at path (opened by it, STORE_SECOND), merging per tier in the order
 * given (--compact-after's short window first, then --downsample-after's): each tier at most
 * DOWNSAMPLER_WINDOWS_PER_PASS windows a pass, and a tier with windows left ends the pass (the next
 * one DOWNSAMPLER_BUSY_PAUSE_MS later), so a later tier waits for an earlier tier's backlog. 0 or
 * -errno. */
int downsampler_start(const char *path, const struct downsampler_tier *tiers, size_t ntiers,
		      struct downsampler **out);
/* Stop it (after the pass under way, if one is) and free it; NULL: nothing. */
void downsampler_stop(struct downsampler *d);

#endif
