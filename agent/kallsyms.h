/* The kernel's function table for the collector: /proc/kallsyms read once
 * per session (only when the kernel shows addresses to this agent) and sent
 * as KernelSymbols chunks (proto/ksyms.h: sorted, delta-encoded addresses,
 * front-coded names), so kernel frames get their function names on the host
 * without a file from the user. */
#ifndef AGENT_KALLSYMS_H
#define AGENT_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"
#include "session.h"

struct kallsyms_stats {
	size_t symbols; /* text symbols sent */
	size_t chunks;
	size_t bytes; /* packed KernelSymbols bytes (what the frames carry, less framing) */
	bool reference; /* the table went in an earlier session of this boot: a reference record only */
	char marker[4096]; /* the once-per-boot marker to leave when the collector acked ("" none) */
	char acked_store[64]; /* the store the marker says acked the table ("": a marker older than issue 39) */
	bool store_checked;   /* the collector's store was compared with acked_store */
	struct session *s;    /* for kallsyms_store_check from the loop */
	/* set by the caller, kept by kallsyms_send: called after every record it sends (a sampler
	 * already running drains its rings: the table takes seconds to send on a loaded host) */
	void (*tick)(void *ctx);
	void *tick_ctx;
};

/* The table read from path (NULL: /proc/kallsyms, or $PROF_AGENT_KALLSYMS) as
 * chunks of the kernel boot id read from boot_id_path (NULL:
 * /proc/sys/kernel/random/boot_id). Each chunk goes to emit. 0; -ENOENT when
 * the file shows no addresses (kptr_restrict: says so in one line); -errno. */
int kallsyms_read_send(const char *path, const char *boot_id_path,
		       int (*emit)(void *arg, const Prof__KernelSymbols *m), void *arg, struct kallsyms_stats *st);
/* The table into session s (its records: spooled, acked), or, when the
 * marker of this boot, agent and collector (o's spool directory) says the
 * collector acked it in an earlier session, a reference record only. */
int kallsyms_send(struct session *s, const struct session_opts *o, const char *agent_id, struct kallsyms_stats *st);
/* Once the collector said which store it writes (the ack of the Hello): if only a
 * reference was sent and the marker names another store (the collector was restarted
 * with a new one), send the table now. 1 sent, 0 nothing to do (yet), -errno. */
int kallsyms_store_check(struct kallsyms_stats *st);
/* A loop source running kallsyms_store_check until it has compared (every 100 ms). */
void kallsyms_loop_source(struct kallsyms_stats *st, struct loop_source *src);
/* At the end of the session: leave the marker, with the store's identity, when every
 * record was acked and the store has the table; remove it when the store was not
 * the marker's and only a reference went (the next session sends the table). */
void kallsyms_sent(const struct kallsyms_stats *st, bool all_acked);

#endif
