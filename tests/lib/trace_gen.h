/* Synthetic instruction traces for the trace-import tests: register chains
 * that run across any cut, loads and stores over a region larger than a
 * small cache (hits, misses, memory RAW), every class, a few access sizes. */
#ifndef TESTS_LIB_TRACE_GEN_H
#define TESTS_LIB_TRACE_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "edag/edag.h"

/* Fill ins[0..n) (deterministic for a seed). */
void trace_gen(struct edag_insn *ins, size_t n, uint32_t seed);
/* Write the native binary trace of ins (header for arch) to path; 0 or -errno. */
int trace_gen_write_bin(const char *path, unsigned arch, const struct edag_insn *ins, size_t n);

#endif
