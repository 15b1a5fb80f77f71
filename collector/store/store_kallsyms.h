/* Kernel function tables the agents sent (KernelSymbols record kind, in
 * store_kallsyms.c), per (agent, kernel boot id). */
#ifndef COLLECTOR_STORE_KALLSYMS_H
#define COLLECTOR_STORE_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "ksyms.h"
#include "store.h"

/* The store's identity (16 hex digits, made at the first call on a new store):
 * what the agents key their "kernel symbols acked" marker by. 0 or -errno. */
int store_identity(struct store *s, char *out, size_t len);
/* The kernel boot id session sid ran on ("" when its agent sent no kernel symbols). 0 or -errno. */
int store_session_kernel_boot(struct store *s, int64_t sid, char *boot, size_t len);
/* Every symbol of (agent_id, boot), chunk by chunk (by name within a chunk); damaged chunks are
 * skipped with a warning. The table's limits (ksyms.h) are checked before it is read (chunks,
 * packed bytes) and while it is decoded (symbols, name bytes): over them, -EFBIG with one
 * warning per process. 0, -ENOENT (none stored) or -errno (fn's error stops it). Each warning
 * (damaged, partial, over a limit) is said once per process and (agent, boot). */
int store_kernel_symbols(struct store *s, const char *agent_id, const char *boot, ksyms_fn fn, void *arg);

#endif
