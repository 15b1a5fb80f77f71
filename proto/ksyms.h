/* KernelSymbols (proto/kallsyms.proto): the front-coded, delta-encoded
 * chunks of a boot's kernel function table. Shared by the agent (encodes
 * /proc/kallsyms) and the collector (validates and decodes on ingest, and
 * again when a query names kernel frames). */
#ifndef PROTO_KSYMS_H
#define PROTO_KSYMS_H

#include <stddef.h>
#include <stdint.h>

#include "kallsyms.pb-c.h"

#define KSYMS_NAME_MAX 511u		  /* bytes of one name (the kernel's KSYM_NAME_LEN is 512 with the 0) */
#define KSYMS_BOOT_ID_MAX 64u		  /* a boot_id is a 36-character UUID */
#define KSYMS_MAX_CHUNK_SYMS 16384u	  /* symbols of one chunk (the agent sends 4096) */
#define KSYMS_MAX_CHUNKS 1024u		  /* chunks of one boot's table */
#define KSYMS_MAX_SUFFIX_BYTES (1u << 19) /* suffix bytes of one chunk */
#define KSYMS_CHUNK_SYMS 4096u		  /* what the agent puts in a chunk (~60 KiB packed) */
/* Decoded sizes. Front coding lets a 2-byte suffix stand for a 511-byte name: without these a
 * 5 MB table expanded to 1.2 GB in the collector. */
#define KSYMS_MAX_TABLE_SYMS (1u << 20) /* symbols of one boot's table (a distribution kernel: ~200k) */
#define KSYMS_MAX_CHUNK_NAME_BYTES                                                                           \
	(KSYMS_CHUNK_SYMS * (KSYMS_NAME_MAX + 1)) /* names of a chunk, decoded: 2 MiB */
#define KSYMS_MAX_TABLE_NAME_BYTES (16u << 20)	  /* names of a table, decoded (x86 distribution: ~3 MB) */
#define KSYMS_MAX_TABLE_PACKED_BYTES (32u << 20)  /* a table as stored (the agent's chunks, packed) */

/* Called per symbol in address order; a negative return stops the decode and is returned. */
typedef int (*ksyms_fn)(void *arg, uint64_t addr, const char *name);

/* Check m's shape (limits above, equal column lengths, shared prefixes no
 * longer than the previous name, every suffix ended, names of 1..511 bytes)
 * total at most KSYMS_MAX_TABLE_SYMS, names of a chunk at most
 * KSYMS_MAX_CHUNK_NAME_BYTES decoded)
 * and, if fn is not NULL, hand each symbol to it (a reference record, with no
 * symbols, is well-formed and calls nothing). 0, -EINVAL with a reason
 * in err (errlen may be 0), or fn's error. */
int ksyms_chunk_decode(const Prof__KernelSymbols *m, ksyms_fn fn, void *arg, char *err, size_t errlen);

/* Encode n symbols (sorted by name, for the front coding) into chunks of KSYMS_CHUNK_SYMS and
 * hand each to emit (the message and its arrays are valid during the call
 * only). 0, -EFBIG (over KSYMS_MAX_TABLE_SYMS), -ENOMEM, or emit's error. */
int ksyms_encode(const uint64_t *addr, const char *const *names, size_t n, const char *boot_id,
		 int (*emit)(void *arg, const Prof__KernelSymbols *m), void *arg);

/* One chunk (index chunk of chunks, total symbols in all) of n <= KSYMS_CHUNK_SYMS
 * symbols sorted by name: what a streaming encoder sends chunk by chunk. */
int ksyms_encode_chunk(const uint64_t *addr, const char *const *names, size_t n, uint32_t chunk, uint32_t chunks,
		       uint32_t total, const char *boot_id, int (*emit)(void *arg, const Prof__KernelSymbols *m),
		       void *arg);

#endif
