/* Instruction decoding for the tracers, with Capstone: class, registers read
 * and written (canonical numbers, sub-registers folded into their parent),
 * and memory operands as address templates (base + index*scale + disp) to be
 * evaluated with the register values of the moment. Host-independent: an
 * x86_64 host decodes aarch64 and arm code too. Decoded instructions are
 * cached by pc (same bytes → same result). */
#ifndef AGENT_TRACE_DECODE_H
#define AGENT_TRACE_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Same values as enum isa_arch and TraceWindow.arch. */
enum trace_arch { TRACE_ARCH_X86_64 = 1, TRACE_ARCH_AARCH64 = 2, TRACE_ARCH_ARM = 3, TRACE_ARCH_RISCV64 = 4 };
enum trace_iclass { TRACE_OTHER = 0, TRACE_LOAD = 1, TRACE_STORE = 2, TRACE_INT = 3, TRACE_FLOAT = 4, TRACE_BRANCH = 5 };

/* Register numbers: the one numbering of common/isa_regs.h (sub-registers
 * folded into their parent; 0 = zero register / none, never a dependency; the
 * program counter is no dependency either). */
#define TRACE_REG_NONE 0
#define TRACE_REG_FLOAT_FIRST 64
#define TRACE_REG_FLOAT_LAST 127
#define TRACE_MAX_READ 12
#define TRACE_MAX_WRITE 6
#define TRACE_MAX_MEM 2

struct trace_memop {
	uint8_t base, index; /* canonical, or TRACE_REG_NONE */
	uint8_t seg;         /* x86: 144 fs / 145 gs base to add, else NONE */
	uint8_t size;        /* bytes */
	int8_t scale;        /* index multiplier (aarch64/arm: 1 << shift) */
	bool read, write;
	bool pc_relative;    /* base is the pc plus pc_bias (x86 rip: the next instruction; arm: pc + 8) */
	uint8_t pc_bias;
	int64_t disp;        /* displacement; for x86 push/call: -size relative to rsp */
};

struct trace_decoded {
	uint64_t pc;
	uint8_t len;
	uint8_t iclass;
	uint8_t nread, nwrite, nmem;
	uint8_t read[TRACE_MAX_READ];
	uint8_t written[TRACE_MAX_WRITE];
	struct trace_memop mem[TRACE_MAX_MEM];
	char mnemonic[32];
};

struct trace_decoder;

/* Returns 0, -ENOTSUP (arch not available in this Capstone), -ENOMEM, or
 * -ELIBACC when Capstone cannot be loaded (cs_api_error() says why). */
int trace_decoder_open(struct trace_decoder **out, enum trace_arch arch);
/* arm: decode the following instructions as Thumb (true) or ARM (false, the
 * default). The cache is by pc, so one pc is decoded in one state. */
int trace_decoder_set_thumb(struct trace_decoder *d, bool thumb);
void trace_decoder_close(struct trace_decoder *d);
/* Decode the instruction at pc from code[0..len) (len >= the instruction's
 * length; 16 bytes is always enough). Returns 0 and a pointer valid until the
 * next trace_decode call (the cache may move), -EILSEQ for bytes that are not
 * an instruction. */
int trace_decode(struct trace_decoder *d, uint64_t pc, const uint8_t *code, size_t len,
		 const struct trace_decoded **out);
/* The cached decoding of pc, without reading its bytes: 0 and *out, or
 * -ENOENT when pc has not been decoded yet (then call trace_decode). */
int trace_decode_lookup(struct trace_decoder *d, uint64_t pc, const struct trace_decoded **out);
/* Cache statistics. */
uint64_t trace_decoder_hits(const struct trace_decoder *d);
uint64_t trace_decoder_misses(const struct trace_decoder *d);

/* Effective address of m given the canonical register values (reg_value
 * returns the value of a canonical register). */
uint64_t trace_memop_address(const struct trace_decoded *insn, const struct trace_memop *m,
			     uint64_t (*reg_value)(void *ctx, uint8_t reg), void *ctx);

/* Number of a Capstone register name for arch ("eax" → 1), or TRACE_REG_NONE. Pure. */
uint8_t trace_reg_canonical(enum trace_arch arch, const char *name);

#endif
