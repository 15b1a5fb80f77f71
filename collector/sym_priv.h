/* Internals shared by the symbolization files (symbols.c, sym_kallsyms.c,
 * sym_debuginfod.c, sym_frame.c); not part of the API (symbols.h). */
#ifndef COLLECTOR_SYM_PRIV_H
#define COLLECTOR_SYM_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "symbols.h"

struct sym {
	uint64_t addr, size; /* size 0: up to the next symbol */
	char *name;          /* demangled when it was mangled */
	char *raw;           /* as in the file; == name when not mangled */
};

/* raw copied, name its demangled form (or raw). 0 or -ENOMEM. */
int sym_set_name(struct sym *s, const char *raw);
void sym_free(struct sym *s);
int sym_cmp(const void *a, const void *b);
/* The symbol of sorted syms that holds addr, NULL if none. */
const struct sym *sym_lookup(const struct sym *syms, size_t n, uint64_t addr);
/* The resolver's kernel table (for sym_kallsyms.c). */
struct sym **sym_resolver_ksyms(struct sym_resolver *r, size_t **n);
const struct sym *sym_resolver_ksyms_const(const struct sym_resolver *r, size_t *n);
/* Path of the debug file a debuginfod server has for the build-id, where
 * DEBUGINFOD_URLS is set. 0, -ENOENT (none, or not configured), -errno. */
int sym_debuginfod_find(const uint8_t *bid, size_t len, char *path, size_t pathlen);
/* The DWARF of one file (sym_line.c, libdw). open: NULL only when out of memory
 * (a file without DWARF gives a handle that finds nothing). */
struct sym_dwarf;
struct sym_dwarf *sym_dwarf_open(const char *path);
void sym_dwarf_close(struct sym_dwarf *d);
/* Source file (valid until closed) and line of a link-time address. 0 or -ENOENT. */
int sym_dwarf_line(struct sym_dwarf *d, uint64_t vaddr, const char **file, uint32_t *line);

#endif
