/* A session's CPU sample keys one by one, as stored (#40): decoded from its
 * sample_blocks, and an older collector's cpu_samples rows of the records it
 * stored without a block. For `collector dump --keys` (scripts that checked
 * raw rows); the views aggregate through collector/query/. */
#ifndef COLLECTOR_STORE_SAMPLE_KEYS_H
#define COLLECTOR_STORE_SAMPLE_KEYS_H

#include <stdint.h>

#include "store.h"

struct store_key_row {
	uint64_t seq;
	int64_t t_ns; /* the record's, ns after base_ns */
	int32_t pid, tid;
	uint64_t ip, kip;
	uint32_t stack_id;
	uint64_t count;
};
typedef int (*store_key_cb)(const struct store_key_row *row, void *arg);

/* Every key of the session, record by record (an older collector's rows first);
 * a non-zero return of cb stops and is returned; -EBADMSG for a damaged block. */
int store_list_sample_keys(struct store *s, int64_t session_id, store_key_cb cb, void *arg);

#endif
