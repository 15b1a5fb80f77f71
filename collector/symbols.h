/* Host-side symbolization of sampled addresses: for a mapping (path,
 * build-id, start, pgoff) find an ELF file with symbols (the --symfs DIR
 * copy, the separate debug file DEBUG_DIR/.build-id/xx/rest.debug (DEBUG_DIR
 * /usr/lib/debug unless set), the path itself, and, where DEBUGINFOD_URLS is
 * set, the debug file a debuginfod server has for the build-id (libdebuginfod);
 * a file whose build-id differs from the one the agent sent is not used) and
 * resolve addresses to function names with its .symtab/.dynsym (libelf).
 * C++ and Rust names are demangled with libiberty's demangler. Kernel
 * addresses resolve through a kallsyms file (sym_resolver_load_kallsyms).
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

/* Separate debug files are looked up under dir/.build-id/ (then the process's
 * directory, then /usr/lib/debug). */
int sym_resolver_set_debug_dir(struct sym_resolver *r, const char *dir);
/* A debug directory every resolver of the process looks in (after its own, before
 * /usr/lib/debug): the live collector's --debug-dir, for its pages. Call once at start,
 * before any thread; dir must outlive the resolvers. */
void sym_set_process_debug_dir(const char *dir);
/* An ELF image in memory (copied), used for mappings whose path is "[...]" (the
 * agent's "[vdso]") and whose build-id is the image's. 0, -ENOENT (no build-id),
 * -ENOSPC (16 images already) or -ENOMEM. */
int sym_resolver_add_image(struct sym_resolver *r, const void *data, size_t len);
/* Kernel symbols from a kallsyms file ("ADDR TYPE NAME [module]" lines, as
 * /proc/kallsyms of the profiled board's boot). 0 or -errno (-ENOENT: no
 * function symbol in it, e.g. all addresses 0 from a non-root read). */
int sym_resolver_load_kallsyms(struct sym_resolver *r, const char *path);
/* Kernel symbols from a table (address and name pairs in any order; address 0
 * skipped), replacing any loaded: the table an agent sent (KernelSymbols).
 * 0, -ENOENT (no address), -EFBIG or -ENOMEM. */
int sym_resolver_set_kernel(struct sym_resolver *r, const uint64_t *addr, const char *const *names, size_t n);
/* Kernel function of addr, NULL when unknown or no kallsyms loaded. */
const char *sym_resolve_kernel(const struct sym_resolver *r, uint64_t addr);

/* A demangled copy of a C++ (Itanium ABI) or Rust symbol (malloc'd), NULL when
 * name is not mangled. */
char *sym_demangle(const char *name);

/* One frame as the views show it. Unresolved user addresses group per module:
 * name "[MODULE]" (one row per module instead of one per address), the raw
 * address stays in file_off/ip for exports. */
struct sym_frame {
	const char *name;   /* demangled function, or "[module]" / "[kernel]" / "[unknown]" */
	const char *raw;    /* the symbol as in the file (mangled), NULL when unresolved */
	const char *module; /* basename of the mapped file, "[kernel]", "[unknown]" */
	uint64_t ip;        /* the sampled address */
	uint64_t file_off;  /* ip's offset in the module's file (0 for kernel/unknown) */
	int resolved;       /* 1 when name is a function */
	const char *path;     /* the mapped file's path, NULL for kernel/unknown (set by the query) */
	const char *build_id; /* its build-id in hex, NULL if none (set by the query) */
	const char *src_file; /* source file of ip (DWARF), NULL if unknown */
	uint32_t src_line;    /* its line, 0 if unknown */
};
/* Describe ip: kernel (the kallsyms function or "[kernel]"), in mapping m
 * (NULL: "[unknown]"). Strings live in buf (or the resolver). */
void sym_describe(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, int kernel, char *buf,
		  size_t buflen, struct sym_frame *out);

/* Resolve ip inside m. Returns the function name, demangled (valid until the
 * resolver is freed) or NULL; *file_off gets the offset of ip in the file either way. */
const char *sym_resolve(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, uint64_t *file_off);
/* As sym_resolve, and *raw gets the symbol as written in the file (mangled). */
const char *sym_resolve_raw(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, uint64_t *file_off,
			    const char **raw);

/* Source file and line of ip inside m from the DWARF line table of the file its
 * symbols came from (libdw); the file name lives until the resolver is freed.
 * 0, -ENOENT (no DWARF or no line for ip) or -ENOMEM. */
int sym_source_line(struct sym_resolver *r, const struct sym_mapping *m, uint64_t ip, const char **file,
		    uint32_t *line);

/* Lowercase hex of a build-id into buf ("" if none). */
const char *sym_build_id_hex(const uint8_t *id, size_t len, char *buf, size_t buflen);

#endif
