/* Where the capture library puts completed commands so that they outlive
 * the process (issue #41): one shared file per process, "<pid>.ring" in the
 * directory the agent names (PROF_CL_RINGS), that the library creates and
 * maps, and the agent maps too. One writer at a time (the library's reaper
 * thread, or an app thread after its clFinish, under one lock): it copies
 * each batch of encoded messages (cl_msg.h: kernel declarations, commands,
 * the closing BYE) into the ring as soon as it has read their times, then
 * publishes the new head. The agent reads from its
 * tail and publishes that back, so the writer never overwrites what was not
 * read (a full ring keeps the batch in the library's queue; past that queue's
 * bound, commands are dropped and counted). A process killed by a signal
 * leaves everything it wrote; the counters in the header say what it could
 * not write: commands enqueued but never seen complete are
 * seen - written - failed - dropped. Shared by the library (layer/ring.c)
 * and the agent (cl_ring_reader.c); no allocation. */
#ifndef AGENT_CL_LAYER_CL_RING_H
#define AGENT_CL_LAYER_CL_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define PCL_ENV_RINGS "PROF_CL_RINGS" /* the directory of the rings */
#define PCL_RING_MAGIC 0x50434c52u    /* "PCLR" */
#define PCL_RING_HDR 4096u	      /* data starts one page in */
#define PCL_RING_DATA (4u << 20)      /* bytes of records */
#define PCL_RING_WRAP 0xffffffffu     /* record length: the rest up to the end is unused, go to offset 0 */
#define PCL_RING_REC 8u		      /* record header: u32 length of the messages, u32 commands in them */

/* Each writer's fields on a cache line of their own: the app's threads count
 * (seen), the reaper writes (head, counters), the agent reads (tail). */
struct pcl_ring_hdr {
	uint32_t magic, data_size; /* magic last, once the rest is set */
	int32_t pid;
	uint32_t mode;			       /* enum pcl_mode */
	_Alignas(64) _Atomic uint64_t seen;    /* commands the program enqueued that the library saw */
	_Alignas(64) _Atomic uint64_t tail;    /* bytes read (the agent) */
	_Alignas(64) _Atomic uint64_t head;    /* bytes written (the library) */
	_Atomic uint64_t written; /* commands in the ring (read or not) */
	_Atomic uint64_t failed; /* commands that completed with an error or without times: nothing to record */
	_Atomic uint64_t dropped; /* commands the library dropped (too many outstanding, queue full) */
	_Atomic uint32_t done;	 /* the library's exit ran to the end: everything is accounted for */
	uint32_t pad;
};

/* Records are 8-byte aligned: header, messages, padding. */
static inline uint64_t pcl_ring_rec_size(uint32_t len)
{
	return PCL_RING_REC + (((uint64_t)len + 7u) & ~7ull);
}

#endif
