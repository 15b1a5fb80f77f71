#include "isa_regs.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

static bool eq(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* name = prefix + decimal number in [0, max]: the number, else -1. */
static int prefixed(const char *s, size_t len, const char *prefix, int max)
{
	size_t pl = strlen(prefix);
	if (len <= pl || len > pl + 2 || memcmp(s, prefix, pl) != 0)
		return -1;
	int v = 0;
	for (size_t i = pl; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	if (len - pl == 2 && s[pl] == '0')
		return -1;
	return v <= max ? v : -1;
}

static int find(const char *s, size_t len, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && eq(s, len, names[i]))
			return (int)i;
	return -1;
}

static const char *const rv_x[32] = {"zero", "ra", "sp", "gp", "tp",  "t0",  "t1", "t2", "s0", "s1", "a0",
				     "a1",   "a2", "a3", "a4", "a5",  "a6",  "a7", "s2", "s3", "s4", "s5",
				     "s6",   "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"};
static const char *const rv_f[32] = {"ft0", "ft1", "ft2",  "ft3",  "ft4", "ft5", "ft6",	 "ft7",
				     "fs0", "fs1", "fa0",  "fa1",  "fa2", "fa3", "fa4",	 "fa5",
				     "fa6", "fa7", "fs2",  "fs3",  "fs4", "fs5", "fs6",	 "fs7",
				     "fs8", "fs9", "fs10", "fs11", "ft8", "ft9", "ft10", "ft11"};

static int reg_riscv(const char *s, size_t len)
{
	int n;
	if ((n = prefixed(s, len, "x", 31)) >= 0)
		return n;
	if ((n = find(s, len, rv_x, 32)) >= 0)
		return n;
	if (eq(s, len, "fp"))
		return 8;
	if ((n = prefixed(s, len, "f", 31)) >= 0)
		return 64 + n;
	if ((n = find(s, len, rv_f, 32)) >= 0)
		return 64 + n;
	if ((n = prefixed(s, len, "v", 31)) >= 0)
		return 96 + n;
	if (eq(s, len, "fcsr") || eq(s, len, "frm") || eq(s, len, "fflags"))
		return 128;
	return -ENOENT;
}

static int reg_aarch64(const char *s, size_t len)
{
	int n;
	if ((n = prefixed(s, len, "x", 30)) >= 0 || (n = prefixed(s, len, "w", 30)) >= 0)
		return n + 1;
	if (eq(s, len, "sp") || eq(s, len, "wsp"))
		return 32;
	if (eq(s, len, "xzr") || eq(s, len, "wzr"))
		return 0;
	if (eq(s, len, "lr"))
		return 31;
	if (eq(s, len, "fp"))
		return 30;
	static const char *const vp[] = {"v", "q", "d", "s", "h", "b"};
	for (size_t i = 0; i < 6; i++)
		if ((n = prefixed(s, len, vp[i], 31)) >= 0)
			return 64 + n;
	if (eq(s, len, "nzcv"))
		return 128;
	if (eq(s, len, "fpsr") || eq(s, len, "fpcr"))
		return 129;
	return -ENOENT;
}

static int reg_arm(const char *s, size_t len)
{
	int n;
	static const char *const alias[16] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
					      NULL, "sb", "sl", "fp", "ip", "sp", "lr", "pc"};
	if ((n = prefixed(s, len, "r", 15)) >= 0 || (n = find(s, len, alias, 16)) >= 0)
		return n + 1;
	if ((n = prefixed(s, len, "d", 31)) >= 0)
		return 64 + n;
	if ((n = prefixed(s, len, "s", 31)) >= 0)
		return 64 + n / 2;
	if ((n = prefixed(s, len, "q", 15)) >= 0)
		return 64 + 2 * n;
	if (eq(s, len, "cpsr") || eq(s, len, "apsr"))
		return 128;
	if (eq(s, len, "fpscr"))
		return 129;
	return -ENOENT;
}

static int reg_x86(const char *s, size_t len)
{
	static const char *const gpr[8][5] = {
	    {"rax", "eax", "ax", "al", "ah"},  {"rcx", "ecx", "cx", "cl", "ch"},
	    {"rdx", "edx", "dx", "dl", "dh"},  {"rbx", "ebx", "bx", "bl", "bh"},
	    {"rsp", "esp", "sp", "spl", NULL}, {"rbp", "ebp", "bp", "bpl", NULL},
	    {"rsi", "esi", "si", "sil", NULL}, {"rdi", "edi", "di", "dil", NULL}};
	for (int i = 0; i < 8; i++)
		if (find(s, len, gpr[i], 5) >= 0)
			return i + 1;
	int n;
	if ((n = prefixed(s, len, "r", 15)) >= 8)
		return n + 1;
	if (len >= 3 && s[0] == 'r' && strchr("dwb", s[len - 1]) && (n = prefixed(s, len - 1, "r", 15)) >= 8)
		return n + 1;
	if (eq(s, len, "rip"))
		return 17;
	if ((n = prefixed(s, len, "xmm", 31)) >= 0 || (n = prefixed(s, len, "ymm", 31)) >= 0 ||
	    (n = prefixed(s, len, "zmm", 31)) >= 0)
		return 64 + n;
	if ((n = prefixed(s, len, "st", 7)) >= 0)
		return 104 + n;
	if ((n = prefixed(s, len, "k", 7)) >= 0)
		return 112 + n;
	if (eq(s, len, "rflags") || eq(s, len, "eflags") || eq(s, len, "flags"))
		return 128;
	if (eq(s, len, "mxcsr"))
		return 129;
	if (eq(s, len, "fs"))
		return 144;
	if (eq(s, len, "gs"))
		return 145;
	return -ENOENT;
}

int isa_reg_number(unsigned arch, const char *name, size_t len)
{
	switch (arch) {
	case ISA_RISCV64:
		return reg_riscv(name, len);
	case ISA_AARCH64:
		return reg_aarch64(name, len);
	case ISA_ARM:
		return reg_arm(name, len);
	case ISA_X86_64:
		return reg_x86(name, len);
	default:
		return -ENOENT;
	}
}
