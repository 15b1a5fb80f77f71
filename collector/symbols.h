/* Host-side symbolization of sampled addresses: for a mapping (path,
 * build-id, start, pgoff) find an ELF file with symbols (the --symfs DIR
 * copy, the path itself, or /usr/lib/debug/.build-id/xx/rest.debug; a file
 * whose build-id differs from the one the agent sent is not used) and
 * resolve addresses to function names with its .symtab/.dynsym (libelf).
 * Files are loaded once per resolver. */
#ifndef COLLECTOR_SYMBOLS_H
#define COLLECTOR_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

struct sym_resolver;

struct sym_mapping {
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t start, end, pgoff;
};

/* symfs: NULL or a directory that mirrors the target's file system. */
int sym_resolver_create(const char *symfs, struct sym_resolver **out);
void sym_resolver_free(struct sym_resolver *r);

/* Resolve ip inside m. Returns the function name (valid until the resolver is
 * freed) or NULL; *file_off gets the offset of ip in the file either way. */
const char *sym_resolve(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, uint64_t *file_off);

/* Lowercase hex of a build-id into buf ("" if none). */
const char *sym_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t buflen);

#endif
