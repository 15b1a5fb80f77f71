/* Where an agent's spool lives by default: one directory per agent id and
 * collector under the base (DEFAULT_SPOOL_DIR/<agent id>@<host_port>), so
 * agents of different ids or collectors on one machine never share one.
 * Also the listing and removal behind `agent spool ls|drop`. */
#ifndef AGENT_SPOOL_SCOPE_H
#define AGENT_SPOOL_SCOPE_H

#include <stddef.h>
#include <stdio.h>

/* base/<agent_id or hostname>@<collector>, unsafe characters as '_'. */
int spool_scope_dir(char *buf, size_t len, const char *base, const char *agent_id, const char *collector);
/* List the session directories (<agent>-<boot id>) under dir: segments,
 * bytes, age; and the OpenCL drop log. Returns the number listed or -errno. */
int spool_scope_list(const char *dir, FILE *out);
/* Remove the session directories under dir (one named session, or all when
 * name is NULL) and the OpenCL drop log. Returns the number removed or -errno. */
int spool_scope_drop(const char *dir, const char *name, FILE *out);

#endif
