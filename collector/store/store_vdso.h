/* The agents' vdso images (proto/vdso.proto), one per session, read back by
 * the query to name [vdso] frames. */
#ifndef COLLECTOR_STORE_VDSO_H
#define COLLECTOR_STORE_VDSO_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define STORE_VDSO_MAX 65536 /* largest image accepted (the agent sends at most this) */

/* The image session sid's agent sent, malloc'd into *img. 1 (found), 0 (none) or -errno. */
int store_vdso_image(struct store *s, int64_t sid, uint8_t **img, size_t *len);

#endif
