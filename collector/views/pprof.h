/* pprof export: a stack_set as pprof's Profile message (profile.proto, the
 * format google/pprof documents), gzip-compressed, readable by `go tool pprof`.
 * Sample types: samples/count and cpu/nanoseconds (count × its session's sampling
 * period the records give, else 1 s / freq_hz: vstack.ns; `period` is the one at the highest
 * frequency, and the comment says when sessions' periods differ); each stack a Sample (leaf first) with labels comm,
 * thread, agent (strings) and pid, tid (numbers) where known; a Mapping per
 * module; resolved frames a Location with one Line of their Function (name
 * demangled, system_name as in the binary); unresolved ones a Location with
 * the file offset as address and no line, so the raw address is kept. */
#ifndef COLLECTOR_VIEWS_PPROF_H
#define COLLECTOR_VIEWS_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "stacks.h"

/* The serialized (not compressed) Profile into *buf (malloc'd). 0 or -errno. */
int pprof_encode(const struct stack_set *s, uint8_t **buf, size_t *len);
/* The gzip-compressed Profile to out. 0 or -errno. */
int pprof_write(const struct stack_set *s, FILE *out);

#endif
