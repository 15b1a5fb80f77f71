/* Instruction traces as both sides see them: the instruction record of the
 * eDAG engine (struct edag_insn), class/arch/register names, and the native
 * trace codec (text lines and binary records; format in
 * collector/edag/README.md). Used by the agent (`agent trace-import`), the
 * QEMU plugin (tools/qemu-plugin/) and the collector's eDAG library
 * (collector/edag/edag.h includes this header). Pure: no I/O, no logging,
 * no global mutable state; functions return 0 or a negative errno unless
 * documented otherwise. */
#ifndef COMMON_TRACE_NATIVE_H
#define COMMON_TRACE_NATIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- instructions */

enum edag_arch {
	EDAG_ARCH_UNKNOWN = 0,
	EDAG_ARCH_X86_64 = 1,
	EDAG_ARCH_AARCH64 = 2,
	EDAG_ARCH_ARM = 3,
	EDAG_ARCH_RISCV64 = 4
};

enum edag_class {
	EDAG_OTHER = 0,
	EDAG_LOAD = 1,
	EDAG_STORE = 2,
	EDAG_INT = 3,
	EDAG_FLOAT = 4,
	EDAG_BRANCH = 5,
	EDAG_NCLASS = 6
};

/* edag_insn.mem */
#define EDAG_MEM_READ 0x1u
#define EDAG_MEM_WRITE 0x2u

#define EDAG_NREGS 256
#define EDAG_MAX_REGS 16 /* registers read (and written) per instruction */

struct edag_insn {
	uint64_t pc;
	uint64_t addr; /* first byte accessed (when mem != 0) */
	uint32_t size; /* bytes accessed, 1..4096 (when mem != 0) */
	uint8_t cls;   /* enum edag_class */
	uint8_t mem;   /* EDAG_MEM_READ | EDAG_MEM_WRITE; see edag_default_mem() */
	uint8_t nread, nwrite;
	uint8_t rd[EDAG_MAX_REGS]; /* registers read */
	uint8_t wr[EDAG_MAX_REGS]; /* registers written */
};

/* The memory mode a class implies: load reads, store writes, others none. */
unsigned edag_default_mem(unsigned cls);
const char *edag_class_name(unsigned cls);
/* "load" ... "other" (also "int"/"integer", "fp"/"float"); -EINVAL if unknown. */
int edag_class_parse(const char *name, size_t len);
const char *edag_arch_name(unsigned arch);
/* "x86_64", "aarch64"/"arm64", "arm", "riscv64"; -EINVAL if unknown. */
int edag_arch_parse(const char *name);
/* Register number of name for arch (numbering above; "#N" is N for any arch);
 * -ENOENT if it is no register name (an immediate, a CSR we do not track). */
int edag_reg_number(unsigned arch, const char *name, size_t len);

/* ---------------------------------------------------------------- native text format */

/* One line of the native text format (README). Returns 1 and fills *in for an
 * instruction, 0 for a blank/comment/directive line (an "arch" directive
 * sets *arch; a "window" directive fills *win and returns 2), -EINVAL with a
 * reason in err otherwise. */
struct edag_window_info {
	uint32_t index;
	int32_t pid, tid;
	uint64_t t_ns;
	double share;		    /* sampled share of the run, (0,1] */
	uint64_t represented_insns; /* instructions of the run the window stands for, 0 = unknown */
};
int edag_parse_native_line(const char *line, size_t len, unsigned *arch, struct edag_insn *in,
			   struct edag_window_info *win, char *err, size_t errlen);

/* Native binary format: header (16 bytes) then records (README). */
#define EDAG_BIN_MAGIC "EDAGTRC1"
#define EDAG_BIN_HEADER 16
int edag_bin_header_decode(const uint8_t *buf, size_t len, unsigned *arch);
void edag_bin_header_encode(uint8_t out[EDAG_BIN_HEADER], unsigned arch);
/* Decode one record from buf: returns bytes used, 0 if buf holds no whole
 * record yet, -EINVAL if malformed. */
int edag_bin_decode(const uint8_t *buf, size_t len, struct edag_insn *in);
/* Encode one record into out (room for EDAG_BIN_MAX_RECORD); returns bytes. */
#define EDAG_BIN_MAX_RECORD (24 + 2 * EDAG_MAX_REGS)
size_t edag_bin_encode(const struct edag_insn *in, uint8_t *out);

#endif
