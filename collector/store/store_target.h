/* What became of the command a session profiled (store_target.c): the
 * TargetEnd record kind, table target_ends, and its query. */
#ifndef COLLECTOR_STORE_TARGET_H
#define COLLECTOR_STORE_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

struct store_target_end_row {
	int32_t pid;
	int32_t exit_code;
	uint32_t signal; /* 0: it exited */
	bool core_dumped;
	uint32_t capture_inside; /* 0 unknown, 1 no, 2 forwarding the program's calls, 3 in its own (target.proto) */
	char capture_detail[1025];
	char opencl_note[1025];
};

/* The session's TargetEnd (the last one): 1 and *out filled, 0 when it has none, or -errno. */
int store_target_end(struct store *s, int64_t session_id, struct store_target_end_row *out);

#endif
