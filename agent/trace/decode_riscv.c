#include "generated/config.h"
#ifdef CONFIG_AGENT_TRACE_RISCV

#include "decode_riscv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define XREG(n) ((uint8_t)(n))           /* x0 -> 0: never a dependency */
#define FREG(n) ((uint8_t)(64 + (n)))
#define FCSR 128
#define SP 2
#define RA 1

static uint32_t bits(uint32_t v, int hi, int lo)
{
	return (v >> lo) & ((1u << (hi - lo + 1)) - 1);
}

static int64_t sext(uint64_t v, int width)
{
	uint64_t m = 1ull << (width - 1);
	return (int64_t)((v ^ m) - m);
}

static void rd_reg(struct trace_decoded *o, uint8_t r)
{
	if (r == 0)
		return;
	for (uint8_t i = 0; i < o->nread; i++)
		if (o->read[i] == r)
			return;
	if (o->nread < TRACE_MAX_READ)
		o->read[o->nread++] = r;
}

static void wr_reg(struct trace_decoded *o, uint8_t r)
{
	if (r == 0)
		return;
	for (uint8_t i = 0; i < o->nwrite; i++)
		if (o->written[i] == r)
			return;
	if (o->nwrite < TRACE_MAX_WRITE)
		o->written[o->nwrite++] = r;
}

static void mem(struct trace_decoded *o, uint8_t base, int64_t disp, uint8_t size, bool read, bool write)
{
	struct trace_memop *m = &o->mem[o->nmem++];
	memset(m, 0, sizeof(*m));
	m->base = base;
	m->index = TRACE_REG_NONE;
	m->seg = TRACE_REG_NONE;
	m->scale = 1;
	m->disp = disp;
	m->size = size;
	m->read = read;
	m->write = write;
	rd_reg(o, base);
	o->iclass = write ? TRACE_STORE : TRACE_LOAD;
}

static void name(struct trace_decoded *o, const char *n)
{
	snprintf(o->mnemonic, sizeof(o->mnemonic), "%s", n);
}

/* ---------------------------------------------------------------- 32-bit encodings */

static int op_fp(uint32_t w, struct trace_decoded *o)
{
	uint32_t f5 = bits(w, 31, 27), rd = bits(w, 11, 7), rs1 = bits(w, 19, 15), rs2 = bits(w, 24, 20);
	o->iclass = TRACE_FLOAT;
	switch (f5) {
	case 0x00: case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: /* add sub mul div sgnj min/max */
		rd_reg(o, FREG(rs1));
		rd_reg(o, FREG(rs2));
		wr_reg(o, FREG(rd));
		name(o, "fop");
		return 0;
	case 0x08: case 0x0b: /* fcvt.fmt.fmt, fsqrt */
		rd_reg(o, FREG(rs1));
		wr_reg(o, FREG(rd));
		name(o, f5 == 0x0b ? "fsqrt" : "fcvt");
		return 0;
	case 0x14: /* feq flt fle */
		rd_reg(o, FREG(rs1));
		rd_reg(o, FREG(rs2));
		wr_reg(o, XREG(rd));
		name(o, "fcmp");
		return 0;
	case 0x18: case 0x1c: /* fcvt.int.fmt, fmv.x.fmt / fclass */
		rd_reg(o, FREG(rs1));
		wr_reg(o, XREG(rd));
		name(o, f5 == 0x18 ? "fcvt.x" : "fmv.x");
		return 0;
	case 0x1a: case 0x1e: /* fcvt.fmt.int, fmv.fmt.x */
		rd_reg(o, XREG(rs1));
		wr_reg(o, FREG(rd));
		name(o, f5 == 0x1a ? "fcvt.f" : "fmv.f");
		return 0;
	default:
		return -EILSEQ;
	}
}

static int decode32(uint32_t w, struct trace_decoded *o)
{
	uint32_t opc = bits(w, 6, 0), rd = bits(w, 11, 7), f3 = bits(w, 14, 12), rs1 = bits(w, 19, 15),
		 rs2 = bits(w, 24, 20), rs3 = bits(w, 31, 27);
	int64_t imm_i = sext(bits(w, 31, 20), 12);
	int64_t imm_s = sext((bits(w, 31, 25) << 5) | bits(w, 11, 7), 12);
	static const uint8_t int_size[8] = {1, 2, 4, 8, 1, 2, 4, 0};
	o->len = 4;
	switch (opc) {
	case 0x37: case 0x17: /* lui, auipc */
		wr_reg(o, XREG(rd));
		o->iclass = TRACE_INT;
		name(o, opc == 0x37 ? "lui" : "auipc");
		return 0;
	case 0x6f: /* jal */
		wr_reg(o, XREG(rd));
		o->iclass = TRACE_BRANCH;
		name(o, "jal");
		return 0;
	case 0x67: /* jalr */
		if (f3 != 0)
			return -EILSEQ;
		rd_reg(o, XREG(rs1));
		wr_reg(o, XREG(rd));
		o->iclass = TRACE_BRANCH;
		name(o, "jalr");
		return 0;
	case 0x63: /* beq bne blt bge bltu bgeu */
		if (f3 == 2 || f3 == 3)
			return -EILSEQ;
		rd_reg(o, XREG(rs1));
		rd_reg(o, XREG(rs2));
		o->iclass = TRACE_BRANCH;
		name(o, "branch");
		return 0;
	case 0x03: /* lb lh lw ld lbu lhu lwu */
		if (!int_size[f3])
			return -EILSEQ;
		mem(o, XREG(rs1), imm_i, int_size[f3], true, false);
		wr_reg(o, XREG(rd));
		name(o, "load");
		return 0;
	case 0x07: /* flw fld */
		if (f3 != 2 && f3 != 3)
			return -EILSEQ; /* vector loads: not RV64GC */
		mem(o, XREG(rs1), imm_i, f3 == 2 ? 4 : 8, true, false);
		wr_reg(o, FREG(rd));
		name(o, f3 == 2 ? "flw" : "fld");
		return 0;
	case 0x23: /* sb sh sw sd */
		if (f3 > 3)
			return -EILSEQ;
		mem(o, XREG(rs1), imm_s, int_size[f3], false, true);
		rd_reg(o, XREG(rs2));
		name(o, "store");
		return 0;
	case 0x27: /* fsw fsd */
		if (f3 != 2 && f3 != 3)
			return -EILSEQ;
		mem(o, XREG(rs1), imm_s, f3 == 2 ? 4 : 8, false, true);
		rd_reg(o, FREG(rs2));
		name(o, f3 == 2 ? "fsw" : "fsd");
		return 0;
	case 0x13: case 0x1b: /* op-imm, op-imm-32 */
		rd_reg(o, XREG(rs1));
		wr_reg(o, XREG(rd));
		o->iclass = rd ? TRACE_INT : TRACE_OTHER; /* addi x0, x0, 0 is nop */
		name(o, rd || rs1 || imm_i ? "opimm" : "nop");
		return 0;
	case 0x33: case 0x3b: /* op, op-32 (M included) */
		rd_reg(o, XREG(rs1));
		rd_reg(o, XREG(rs2));
		wr_reg(o, XREG(rd));
		o->iclass = TRACE_INT;
		name(o, "op");
		return 0;
	case 0x0f: /* fence, fence.i */
		o->iclass = TRACE_OTHER;
		name(o, "fence");
		return 0;
	case 0x73: { /* ecall ebreak, csr* */
		uint32_t csr = bits(w, 31, 20);
		o->iclass = TRACE_OTHER;
		if (f3 == 0 || f3 == 4) {
			name(o, f3 == 0 ? (csr == 1 ? "ebreak" : "ecall") : "system");
			return 0;
		}
		if (f3 <= 3)
			rd_reg(o, XREG(rs1));
		wr_reg(o, XREG(rd));
		if (csr >= 1 && csr <= 3) { /* fflags, frm, fcsr */
			rd_reg(o, FCSR);
			wr_reg(o, FCSR);
		}
		o->iclass = TRACE_INT;
		name(o, "csr");
		return 0;
	}
	case 0x2f: { /* A: lr sc amo*.w/.d */
		if (f3 != 2 && f3 != 3)
			return -EILSEQ;
		uint8_t size = f3 == 2 ? 4 : 8;
		uint32_t f5 = bits(w, 31, 27);
		if (f5 == 0x02) { /* lr */
			mem(o, XREG(rs1), 0, size, true, false);
			name(o, "lr");
		} else if (f5 == 0x03) { /* sc: writes memory and the status to rd */
			mem(o, XREG(rs1), 0, size, false, true);
			rd_reg(o, XREG(rs2));
			name(o, "sc");
		} else {
			mem(o, XREG(rs1), 0, size, true, true);
			rd_reg(o, XREG(rs2));
			name(o, "amo");
		}
		wr_reg(o, XREG(rd));
		return 0;
	}
	case 0x43: case 0x47: case 0x4b: case 0x4f: /* fmadd fmsub fnmsub fnmadd */
		rd_reg(o, FREG(rs1));
		rd_reg(o, FREG(rs2));
		rd_reg(o, FREG(rs3));
		wr_reg(o, FREG(rd));
		o->iclass = TRACE_FLOAT;
		name(o, "fma");
		return 0;
	case 0x53:
		return op_fp(w, o);
	default:
		return -EILSEQ;
	}
}

/* ---------------------------------------------------------------- compressed */

static int decode16(uint32_t h, struct trace_decoded *o)
{
	uint32_t op = bits(h, 1, 0), f3 = bits(h, 15, 13);
	uint32_t rd = bits(h, 11, 7), rs2 = bits(h, 6, 2);
	uint8_t rdp = (uint8_t)(8 + bits(h, 4, 2)), rs1p = (uint8_t)(8 + bits(h, 9, 7));
	/* offsets of the word / double-word forms */
	uint32_t uw = (bits(h, 12, 10) << 3) | (bits(h, 6, 6) << 2) | (bits(h, 5, 5) << 6);
	uint32_t ud = (bits(h, 12, 10) << 3) | (bits(h, 6, 5) << 6);
	o->len = 2;
	if (h == 0)
		return -EILSEQ; /* the all-zero halfword is defined illegal */
	switch (op << 3 | f3) {
	/* quadrant 0 */
	case 000: /* c.addi4spn */
		rd_reg(o, SP);
		wr_reg(o, rdp);
		o->iclass = TRACE_INT;
		name(o, "c.addi4spn");
		return 0;
	case 001: mem(o, rs1p, ud, 8, true, false); wr_reg(o, FREG(rdp)); name(o, "c.fld"); return 0;
	case 002: mem(o, rs1p, uw, 4, true, false); wr_reg(o, rdp); name(o, "c.lw"); return 0;
	case 003: mem(o, rs1p, ud, 8, true, false); wr_reg(o, rdp); name(o, "c.ld"); return 0;
	case 005: mem(o, rs1p, ud, 8, false, true); rd_reg(o, FREG(rdp)); name(o, "c.fsd"); return 0;
	case 006: mem(o, rs1p, uw, 4, false, true); rd_reg(o, rdp); name(o, "c.sw"); return 0;
	case 007: mem(o, rs1p, ud, 8, false, true); rd_reg(o, rdp); name(o, "c.sd"); return 0;
	/* quadrant 1 */
	case 010: case 011: /* c.addi (c.nop), c.addiw */
		rd_reg(o, XREG(rd));
		wr_reg(o, XREG(rd));
		o->iclass = rd ? TRACE_INT : TRACE_OTHER;
		name(o, f3 ? "c.addiw" : rd ? "c.addi" : "c.nop");
		return 0;
	case 012: /* c.li */
		wr_reg(o, XREG(rd));
		o->iclass = TRACE_INT;
		name(o, "c.li");
		return 0;
	case 013: /* c.addi16sp, c.lui */
		if (rd == SP)
			rd_reg(o, SP);
		wr_reg(o, XREG(rd));
		o->iclass = TRACE_INT;
		name(o, rd == SP ? "c.addi16sp" : "c.lui");
		return 0;
	case 014: /* c.srli c.srai c.andi; c.sub c.xor c.or c.and c.subw c.addw */
		rd_reg(o, rs1p);
		if (bits(h, 11, 10) == 3)
			rd_reg(o, rdp);
		wr_reg(o, rs1p);
		o->iclass = TRACE_INT;
		name(o, "c.alu");
		return 0;
	case 015: /* c.j */
		o->iclass = TRACE_BRANCH;
		name(o, "c.j");
		return 0;
	case 016: case 017: /* c.beqz c.bnez */
		rd_reg(o, rs1p);
		o->iclass = TRACE_BRANCH;
		name(o, f3 == 6 ? "c.beqz" : "c.bnez");
		return 0;
	/* quadrant 2 */
	case 020: /* c.slli */
		rd_reg(o, XREG(rd));
		wr_reg(o, XREG(rd));
		o->iclass = TRACE_INT;
		name(o, "c.slli");
		return 0;
	case 021: /* c.fldsp */
		mem(o, SP, (bits(h, 12, 12) << 5) | (bits(h, 6, 5) << 3) | (bits(h, 4, 2) << 6), 8, true, false);
		wr_reg(o, FREG(rd));
		name(o, "c.fldsp");
		return 0;
	case 022: /* c.lwsp */
		mem(o, SP, (bits(h, 12, 12) << 5) | (bits(h, 6, 4) << 2) | (bits(h, 3, 2) << 6), 4, true, false);
		wr_reg(o, XREG(rd));
		name(o, "c.lwsp");
		return 0;
	case 023: /* c.ldsp */
		mem(o, SP, (bits(h, 12, 12) << 5) | (bits(h, 6, 5) << 3) | (bits(h, 4, 2) << 6), 8, true, false);
		wr_reg(o, XREG(rd));
		name(o, "c.ldsp");
		return 0;
	case 024:
		if (!bits(h, 12, 12)) {
			if (rs2 == 0) { /* c.jr */
				rd_reg(o, XREG(rd));
				o->iclass = TRACE_BRANCH;
				name(o, rd == RA ? "ret" : "c.jr");
			} else { /* c.mv */
				rd_reg(o, XREG(rs2));
				wr_reg(o, XREG(rd));
				o->iclass = TRACE_INT;
				name(o, "c.mv");
			}
		} else if (rs2 == 0 && rd == 0) {
			o->iclass = TRACE_OTHER;
			name(o, "c.ebreak");
		} else if (rs2 == 0) { /* c.jalr */
			rd_reg(o, XREG(rd));
			wr_reg(o, RA);
			o->iclass = TRACE_BRANCH;
			name(o, "c.jalr");
		} else { /* c.add */
			rd_reg(o, XREG(rd));
			rd_reg(o, XREG(rs2));
			wr_reg(o, XREG(rd));
			o->iclass = TRACE_INT;
			name(o, "c.add");
		}
		return 0;
	case 025: /* c.fsdsp */
		mem(o, SP, (bits(h, 12, 10) << 3) | (bits(h, 9, 7) << 6), 8, false, true);
		rd_reg(o, FREG(rs2));
		name(o, "c.fsdsp");
		return 0;
	case 026: /* c.swsp */
		mem(o, SP, (bits(h, 12, 9) << 2) | (bits(h, 8, 7) << 6), 4, false, true);
		rd_reg(o, XREG(rs2));
		name(o, "c.swsp");
		return 0;
	case 027: /* c.sdsp */
		mem(o, SP, (bits(h, 12, 10) << 3) | (bits(h, 9, 7) << 6), 8, false, true);
		rd_reg(o, XREG(rs2));
		name(o, "c.sdsp");
		return 0;
	default: /* 004: c.fsw/reserved */
		return -EILSEQ;
	}
}

int trace_decode_riscv(uint64_t pc, const uint8_t *code, size_t len, struct trace_decoded *o)
{
	memset(o, 0, sizeof(*o));
	o->pc = pc;
	if (len < 2)
		return -EILSEQ;
	uint32_t h = (uint32_t)code[0] | (uint32_t)code[1] << 8;
	if ((h & 3) != 3)
		return decode16(h, o);
	if ((h & 0x1c) == 0x1c || len < 4) /* 48-bit and longer encodings: not RV64GC */
		return -EILSEQ;
	return decode32(h | (uint32_t)code[2] << 16 | (uint32_t)code[3] << 24, o);
}

#endif /* CONFIG_AGENT_TRACE_RISCV */
