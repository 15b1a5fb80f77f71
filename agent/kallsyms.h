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

#include "session.h"

struct kallsyms_stats {
	size_t symbols; /* text symbols sent */
	size_t chunks;
	size_t bytes; /* packed KernelSymbols bytes (what the frames carry, less framing) */
	bool reference; /* the table went in an earlier session of this boot: a reference record only */
	char marker[4096]; /* the once-per-boot marker to leave when the collector acked ("" none) */
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
/* At the end of the session: leave the marker when every record was acked. */
void kallsyms_sent(const struct kallsyms_stats *st, bool all_acked);

#endif
