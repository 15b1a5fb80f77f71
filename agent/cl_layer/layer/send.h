/* Link from the capture library to the agent (send.c): the shared ring when
 * the agent gave one (ring.c), else the socket. Under track.c's work_mu
 * (the reaper, or an app thread draining after its wait). */
#ifndef PCL_SEND_H
#define PCL_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcl.h"

/* Queue one datagram holding ncmd commands; false when the queue is full or
 * the agent went away (the commands are counted as dropped). */
bool pcl_send_queue(const uint8_t *buf, size_t len, uint32_t ncmd);
/* How many datagrams were dropped so far (queued or not): a kernel declared
 * in one of them must be declared again. */
uint64_t pcl_send_drops(void);
/* Send what the socket takes now (connecting first if needed). True when
 * the queue is empty afterwards (sent, or dropped because there is no agent). */
bool pcl_send_flush(uint64_t now_ns);
/* Nothing queued (pcl_send_flush has nothing to do). */
bool pcl_send_empty(void);
/* Wait up to timeout_ms for the socket to take more. */
int pcl_send_wait(int timeout_ms);
/* Connected to the agent, or writing to the ring (ring.c). */
bool pcl_send_connected(void);
/* With a ring: a connection that only tells whether the agent is still
 * there (no HELLO: the ring says who we are). False when there is no agent. */
bool pcl_send_link(void);
/* At exit: what is still queued is dropped (and counted). */
void pcl_send_drop_rest(void);
void pcl_send_after_fork(void);

#endif
