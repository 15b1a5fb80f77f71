/* Instruction records of a replayed ARM/AArch64 window from Capstone's detail
 * (trace_replay.h). The collector includes no agent code: these rules follow
 * the observations of the agent's decoder (agent/trace/decode.c,
 * aarch64_regs() and fixup_arm_regs(): where Capstone 4's access lists are
 * wrong or short) written again over Capstone's own API. */
#include "trace_replay.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "isa_regs.h"

#define NCANON 1024
#define REG_FLAGS 128 /* nzcv / cpsr (common/isa_regs.h) */

struct trace_replay_dec {
	unsigned arch;
	csh cs;
	cs_insn *insn;
	int16_t canon[NCANON]; /* Capstone register id -> register number; -2 not looked up, -1 none */
};

int trace_replay_dec_new(unsigned arch, struct trace_replay_dec **out)
{
	struct trace_replay_dec *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->arch = arch;
	cs_arch a = arch == EDAG_ARCH_AARCH64 ? CS_ARCH_ARM64 : CS_ARCH_ARM;
	cs_mode m = arch == EDAG_ARCH_AARCH64 ? CS_MODE_LITTLE_ENDIAN : CS_MODE_ARM;
	if ((arch != EDAG_ARCH_AARCH64 && arch != EDAG_ARCH_ARM) || cs_open(a, m, &d->cs) != CS_ERR_OK) {
		free(d);
		return -ELIBACC;
	}
	cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	d->insn = cs_malloc(d->cs);
	if (!d->insn) {
		cs_close(&d->cs);
		free(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < NCANON; i++)
		d->canon[i] = -2;
	*out = d;
	return 0;
}

void trace_replay_dec_free(struct trace_replay_dec *d)
{
	if (!d)
		return;
	cs_free(d->insn, 1);
	cs_close(&d->cs);
	free(d);
}

static int canon(struct trace_replay_dec *d, unsigned reg)
{
	if (reg == 0 || reg >= NCANON)
		return -1;
	if (d->canon[reg] == -2) {
		const char *name = cs_reg_name(d->cs, reg);
		int r = name ? isa_reg_number(d->arch, name, strlen(name)) : -1;
		if (d->arch == EDAG_ARCH_ARM && r == 16)
			r = -1; /* pc: no data dependency (agent/trace/decode.c canon_id: the tracers leave it out) */
		d->canon[reg] = (int16_t)(r > 0 && r < EDAG_NREGS ? r : -1);
	}
	return d->canon[reg];
}

static void add(uint8_t *list, uint8_t *n, int r)
{
	if (r <= 0 || r >= EDAG_NREGS)
		return;
	for (uint8_t i = 0; i < *n; i++)
		if (list[i] == r)
			return;
	if (*n < EDAG_MAX_REGS)
		list[(*n)++] = (uint8_t)r;
}

static void drop(uint8_t *list, uint8_t *n, int r)
{
	uint8_t k = 0;
	for (uint8_t i = 0; i < *n; i++)
		if (list[i] != r)
			list[k++] = list[i];
	*n = k;
}

static bool starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static bool one_of(const char *s, const char *const *set, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(s, set[i]) == 0)
			return true;
	return false;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* aarch64: registers from the operands (Capstone 4's access lists are wrong
 * for aliases such as cmp and lsl): the first operand is the destination of
 * data processing (also read by accumulating ones); compares, branches and
 * stores only read (store-exclusives write their status); loads write what
 * comes before the address; a written-back base is written too. */
static void regs_aarch64(struct trace_replay_dec *d, const cs_insn *ci, struct edag_insn *in)
{
	static const char *const nodest[] = {"cmp", "cmn", "tst", "fcmp", "fcmpe", "ccmp", "ccmn", "fccmp", "fccmpe",
					     "b", "bl", "br", "blr", "ret", "cbz", "cbnz", "tbz", "tbnz", "prfm",
					     "prfum", "msr", "dc", "ic", "hint", "nop", "isb", "dsb", "dmb", "svc"};
	static const char *const accum[] = {"movk", "bfi", "bfxil", "bfm", "fmla", "fmls", "mla", "mls", "sli",
					    "sri", "ins", "tbx", "bsl", "bit", "bif"};
	const cs_arm64 *a = &ci->detail->arm64;
	const char *mn = ci->mnemonic;
	bool atomic = starts(mn, "ldadd") || starts(mn, "ldclr") || starts(mn, "ldeor") || starts(mn, "ldset") ||
		      starts(mn, "ldsmax") || starts(mn, "ldsmin") || starts(mn, "ldumax") || starts(mn, "ldumin") ||
		      starts(mn, "swp") || starts(mn, "cas");
	bool no_dest = starts(mn, "b.") || one_of(mn, nodest, NELEM(nodest));
	bool acc = one_of(mn, accum, NELEM(accum)) || (starts(mn, "cas") && strlen(mn) <= 6);
	bool store = starts(mn, "st") && !atomic;
	bool status = store && (starts(mn, "stxr") || starts(mn, "stlxr") || starts(mn, "stxp") || starts(mn, "stlxp"));
	bool load = starts(mn, "ld") && !atomic;
	bool before_mem = true;
	for (uint8_t i = 0; i < a->op_count; i++) {
		const cs_arm64_op *op = &a->operands[i];
		if (op->type == ARM64_OP_MEM) {
			add(in->rd, &in->nread, canon(d, op->mem.base));
			add(in->rd, &in->nread, canon(d, op->mem.index));
			if (a->writeback)
				add(in->wr, &in->nwrite, canon(d, op->mem.base));
			before_mem = false;
			continue;
		}
		if (op->type != ARM64_OP_REG)
			continue;
		bool w, r;
		if (load) {
			w = before_mem;
			r = !before_mem;
		} else if (store) {
			w = status && i == 0;
			r = !w;
		} else if (atomic) {
			w = i == 1 || (i == 0 && acc);
			r = i == 0;
		} else {
			w = i == 0 && !no_dest;
			r = !w || acc;
		}
		if (r)
			add(in->rd, &in->nread, canon(d, op->reg));
		if (w)
			add(in->wr, &in->nwrite, canon(d, op->reg));
	}
	for (uint8_t i = 0; i < ci->detail->regs_read_count; i++)
		add(in->rd, &in->nread, canon(d, ci->detail->regs_read[i]));
	for (uint8_t i = 0; i < ci->detail->regs_write_count; i++)
		add(in->wr, &in->nwrite, canon(d, ci->detail->regs_write[i]));
	if (a->update_flags)
		add(in->wr, &in->nwrite, REG_FLAGS);
	if (strcmp(mn, "bl") == 0 || strcmp(mn, "blr") == 0)
		add(in->wr, &in->nwrite, 31); /* x30 */
	if (strcmp(mn, "ret") == 0 && a->op_count == 0)
		add(in->rd, &in->nread, 31);
	if (a->cc != ARM64_CC_INVALID && a->cc != ARM64_CC_AL && a->cc != ARM64_CC_NV)
		add(in->rd, &in->nread, REG_FLAGS);
}

/* arm: Capstone's access lists, plus the registers of a transfer list (read by
 * stores, written by loads), moves of an immediate read nothing of their
 * destination, a condition reads the flags. */
static void regs_arm(struct trace_replay_dec *d, const cs_insn *ci, struct edag_insn *in)
{
	const cs_arm *a = &ci->detail->arm;
	const char *mn = ci->mnemonic;
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	if (cs_regs_access(d->cs, ci, rr, &nr, rw, &nw) == CS_ERR_OK) {
		for (uint8_t i = 0; i < nr; i++)
			add(in->rd, &in->nread, canon(d, rr[i]));
		for (uint8_t i = 0; i < nw; i++)
			add(in->wr, &in->nwrite, canon(d, rw[i]));
	}
	bool store = starts(mn, "st") || starts(mn, "vst") || starts(mn, "push") || starts(mn, "vpush");
	bool load = starts(mn, "ld") || starts(mn, "vld") || starts(mn, "pop") || starts(mn, "vpop");
	for (uint8_t i = 0; i < a->op_count; i++) {
		const cs_arm_op *op = &a->operands[i];
		if (op->type != ARM_OP_REG)
			continue;
		uint8_t acc = op->access ? op->access : store ? CS_AC_READ : load ? CS_AC_WRITE : 0;
		if (acc & CS_AC_READ)
			add(in->rd, &in->nread, canon(d, op->reg));
		if (acc & CS_AC_WRITE)
			add(in->wr, &in->nwrite, canon(d, op->reg));
	}
	if (a->op_count == 2 && a->operands[0].type == ARM_OP_REG &&
	    (a->operands[1].type == ARM_OP_IMM || a->operands[1].type == ARM_OP_FP) && !starts(mn, "movt")) {
		int r = canon(d, a->operands[0].reg);
		bool written = false;
		for (uint8_t i = 0; i < in->nwrite; i++)
			written |= in->wr[i] == r;
		if (written)
			drop(in->rd, &in->nread, r);
	}
	if (a->cc != ARM_CC_INVALID && a->cc != ARM_CC_AL)
		add(in->rd, &in->nread, REG_FLAGS);
}

static bool in_group(const cs_insn *ci, uint8_t g)
{
	for (uint8_t i = 0; i < ci->detail->groups_count; i++)
		if (ci->detail->groups[i] == g)
			return true;
	return false;
}

unsigned trace_replay_decode(struct trace_replay_dec *d, uint64_t pc, const uint8_t *code, size_t len, int thumb,
			     struct edag_insn *in)
{
	memset(in, 0, sizeof(*in));
	in->pc = pc;
	if (d->arch == EDAG_ARCH_ARM)
		cs_option(d->cs, CS_OPT_MODE, thumb ? CS_MODE_THUMB : CS_MODE_ARM);
	const uint8_t *p = code;
	size_t n = len;
	uint64_t addr = pc;
	if (!cs_disasm_iter(d->cs, &p, &n, &addr, d->insn))
		return 0;
	const cs_insn *ci = d->insn;
	if (d->arch == EDAG_ARCH_AARCH64)
		regs_aarch64(d, ci, in);
	else
		regs_arm(d, ci, in);
	bool fp = false;
	for (uint8_t i = 0; i < in->nread; i++)
		fp |= in->rd[i] >= 64 && in->rd[i] < 128;
	for (uint8_t i = 0; i < in->nwrite; i++)
		fp |= in->wr[i] >= 64 && in->wr[i] < 128;
	if (in_group(ci, CS_GRP_JUMP) || in_group(ci, CS_GRP_CALL) || in_group(ci, CS_GRP_RET) ||
	    in_group(ci, CS_GRP_BRANCH_RELATIVE))
		in->cls = EDAG_BRANCH;
	else if (fp)
		in->cls = EDAG_FLOAT;
	else if (in->nwrite > 0)
		in->cls = EDAG_INT;
	else
		in->cls = EDAG_OTHER;
	return ci->size;
}
