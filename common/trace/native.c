/* The native trace formats (format: collector/edag/README.md; API: native.h): text lines and binary
 * records, and register names. Pure: no I/O. The text parser neither copies
 * nor allocates: fields are (pointer, length) into the caller's line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/native.h"
#include "trace/lex.h"
#include "isa_regs.h"

#define perr lx_err
#define eq lx_eq
#define trim lx_trim

/* ---------------------------------------------------------------- register names */

int edag_reg_number(unsigned arch, const char *name, size_t len)
{
	if (len >= 2 && name[0] == '#') {
		uint64_t v;
		if (len > 4 || lx_dec(name + 1, len - 1, &v) < 0 || v >= EDAG_NREGS)
			return -ENOENT;
		return (int)v;
	}
	if (arch == EDAG_ARCH_RISCV64) {
		int r = lx_rv_reg(name, len);
		if (r != -2)
			return r;
	}
	return isa_reg_number(arch, name, len);
}

/* Add the comma-separated register list s to regs. */
static int reg_list(unsigned arch, const char *s, size_t len, uint8_t *regs, uint8_t *n, char *err,
		    size_t errlen)
{
	while (len) {
		const char *c = lx_chr(s, len, ',');
		size_t l = c ? (size_t)(c - s) : len;
		if (l) {
			int r = edag_reg_number(arch, s, l);
			if (r < 0)
				return perr(err, errlen, "unknown register '%.*s' for %s", (int)l, s,
					    edag_arch_name(arch));
			if (*n >= EDAG_MAX_REGS)
				return perr(err, errlen, "more than %d registers", EDAG_MAX_REGS);
			regs[(*n)++] = (uint8_t)r;
		}
		s += l + (c ? 1 : 0);
		len -= l + (c ? 1 : 0);
	}
	return 0;
}

/* ---------------------------------------------------------------- native text */

/* edag_class_parse without a walk over the names */
static inline int class_fast(const char *t, size_t l)
{
	switch (l) {
	case 3:
		return memcmp(t, "int", 3) == 0 ? EDAG_INT : -EINVAL;
	case 4:
		return memcmp(t, "load", 4) == 0 ? EDAG_LOAD : -EINVAL;
	case 5:
		return memcmp(t, "store", 5) == 0   ? EDAG_STORE
		       : memcmp(t, "float", 5) == 0 ? EDAG_FLOAT
		       : memcmp(t, "other", 5) == 0 ? EDAG_OTHER
						    : -EINVAL;
	case 6:
		return memcmp(t, "branch", 6) == 0 ? EDAG_BRANCH : -EINVAL;
	default:
		return edag_class_parse(t, l); /* "integer", "fp" */
	}
}

static int native_window(const char *s, size_t len, struct edag_window_info *win, char *err, size_t errlen)
{
	memset(win, 0, sizeof(*win));
	win->share = 1;
	while (len) {
		while (len && lx_space((unsigned char)*s))
			s++, len--;
		size_t l = 0;
		while (l < len && !lx_space((unsigned char)s[l]))
			l++;
		if (!l)
			break;
		const char *eqs = memchr(s, '=', l);
		if (!eqs)
			return perr(err, errlen, "window: expected KEY=VALUE, not '%.*s'", (int)l, s);
		size_t kl = (size_t)(eqs - s), vl = l - kl - 1;
		const char *v = eqs + 1;
		char buf[40];
		if (vl == 0 || vl >= sizeof(buf))
			return perr(err, errlen, "window: bad value for '%.*s'", (int)kl, s);
		memcpy(buf, v, vl);
		buf[vl] = 0;
		char *end;
		errno = 0;
		if (eq(s, kl, "share")) {
			win->share = strtod(buf, &end);
			if (*end || !(win->share > 0 && win->share <= 1))
				return perr(err, errlen, "window: share must be in (0,1], not '%s'", buf);
		} else {
			long long x = strtoll(buf, &end, 10);
			if (*end || errno || x < 0)
				return perr(err, errlen, "window: bad number '%s'", buf);
			if (eq(s, kl, "index"))
				win->index = (uint32_t)x;
			else if (eq(s, kl, "pid"))
				win->pid = (int32_t)x;
			else if (eq(s, kl, "tid"))
				win->tid = (int32_t)x;
			else if (eq(s, kl, "t_ns"))
				win->t_ns = (uint64_t)x;
			else if (eq(s, kl, "represented"))
				win->represented_insns = (uint64_t)x;
			else
				return perr(err, errlen, "window: unknown key '%.*s'", (int)kl, s);
		}
		s += l;
		len -= l;
	}
	return 2;
}

int edag_parse_native_line(const char *line, size_t len, unsigned *arch, struct edag_insn *in,
			   struct edag_window_info *win, char *err, size_t errlen)
{
	trim(&line, &len);
	if (!len || line[0] == '#')
		return 0;
	if (len > 5 && memcmp(line, "arch", 4) == 0 && lx_space((unsigned char)line[4])) {
		const char *a = line + 5;
		size_t al = len - 5;
		trim(&a, &al);
		char buf[16];
		if (al >= sizeof(buf))
			return perr(err, errlen, "unknown arch '%.*s'", (int)al, a);
		memcpy(buf, a, al);
		buf[al] = 0;
		int ar = edag_arch_parse(buf);
		if (ar < 0)
			return perr(err, errlen, "unknown arch '%s' (x86_64, aarch64, arm, riscv64)", buf);
		*arch = (unsigned)ar;
		return 0;
	}
	if (len >= 6 && memcmp(line, "window", 6) == 0 && (len == 6 || lx_space((unsigned char)line[6])))
		return native_window(line + 6, len - 6, win, err, errlen);

	memset(in, 0, sizeof(*in));
	int field = 0;
	bool mem_explicit = false, has_m = false;
	unsigned mem_mode = 0;
	while (len) {
		size_t l = 0;
		while (l < len && !lx_space((unsigned char)line[l]))
			l++;
		const char *t = line;
		if (field == 0) {
			if (lx_hex(t, l, &in->pc) < 0)
				return perr(err, errlen, "bad pc '%.*s' (hex)", (int)l, t);
		} else if (field == 1) {
			const char *plus = lx_chr(t, l, '+');
			size_t cl = plus ? (size_t)(plus - t) : l;
			int c = class_fast(t, cl);
			if (c < 0)
				return perr(err, errlen,
					    "unknown class '%.*s' (load, store, int, float, branch, other)",
					    (int)cl, t);
			in->cls = (uint8_t)c;
			if (plus) {
				const char *md = plus + 1;
				size_t ml = l - cl - 1;
				mem_explicit = true;
				if (eq(md, ml, "r"))
					mem_mode = EDAG_MEM_READ;
				else if (eq(md, ml, "w"))
					mem_mode = EDAG_MEM_WRITE;
				else if (eq(md, ml, "rw"))
					mem_mode = EDAG_MEM_READ | EDAG_MEM_WRITE;
				else if (eq(md, ml, "none"))
					mem_mode = 0;
				else
					return perr(err, errlen,
						    "bad memory mode '+%.*s' (+r, +w, +rw, +none)", (int)ml,
						    md);
			}
		} else if (l > 2 && t[1] == '=' && (t[0] == 'r' || t[0] == 'w')) {
			int rc = t[0] == 'r'
				     ? reg_list(*arch, t + 2, l - 2, in->rd, &in->nread, err, errlen)
				     : reg_list(*arch, t + 2, l - 2, in->wr, &in->nwrite, err, errlen);
			if (rc < 0)
				return rc;
		} else if (l > 2 && t[0] == 'm' && t[1] == '=') {
			const char *slash = lx_chr(t, l, '/');
			uint64_t sz;
			if (!slash || lx_hex(t + 2, (size_t)(slash - t - 2), &in->addr) < 0 ||
			    lx_dec(slash + 1, (size_t)(t + l - slash - 1), &sz) < 0 || sz == 0 ||
			    sz > 4096)
				return perr(err, errlen,
					    "bad memory operand '%.*s' (m=0xADDR/SIZE, size 1..4096)", (int)l,
					    t);
			in->size = (uint32_t)sz;
			has_m = true;
		} else {
			return perr(err, errlen, "unexpected '%.*s'", (int)l, t);
		}
		field++;
		line += l;
		len -= l;
		while (len && lx_space((unsigned char)*line))
			line++, len--;
	}
	if (field < 2)
		return perr(err, errlen, "expected 'PC CLASS [r=..] [w=..] [m=ADDR/SIZE]'");
	in->mem = (uint8_t)(mem_explicit ? mem_mode : edag_default_mem(in->cls));
	if (in->mem && !has_m)
		return perr(err, errlen, "%s instruction without m=ADDR/SIZE", edag_class_name(in->cls));
	if (!in->mem && has_m)
		return perr(err, errlen,
			    "memory operand on an instruction that does not access memory (+none)");
	return 1;
}

/* ---------------------------------------------------------------- native binary */

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void edag_bin_header_encode(uint8_t out[EDAG_BIN_HEADER], unsigned arch)
{
	memcpy(out, EDAG_BIN_MAGIC, 8);
	put_le(out + 8, arch, 4);
	put_le(out + 12, 0, 4);
}

int edag_bin_header_decode(const uint8_t *buf, size_t len, unsigned *arch)
{
	if (len < EDAG_BIN_HEADER || memcmp(buf, EDAG_BIN_MAGIC, 8) != 0)
		return -EINVAL;
	*arch = (unsigned)get_le(buf + 8, 4);
	return 0;
}

/* Record: u64 pc, u8 class | mem << 3 | has-explicit-mem << 5, u8 nread, u8 nwrite,
 * [u64 addr, u32 size when mem], nread + nwrite register bytes. */
size_t edag_bin_encode(const struct edag_insn *in, uint8_t *out)
{
	size_t n = 0;
	put_le(out, in->pc, 8);
	n += 8;
	out[n++] = (uint8_t)(in->cls | (in->mem << 3) | (1u << 5));
	out[n++] = in->nread;
	out[n++] = in->nwrite;
	if (in->mem) {
		put_le(out + n, in->addr, 8);
		put_le(out + n + 8, in->size, 4);
		n += 12;
	}
	memcpy(out + n, in->rd, in->nread);
	n += in->nread;
	memcpy(out + n, in->wr, in->nwrite);
	return n + in->nwrite;
}

int edag_bin_decode(const uint8_t *buf, size_t len, struct edag_insn *in)
{
	if (len < 11)
		return 0;
	memset(in, 0, sizeof(*in));
	in->pc = get_le(buf, 8);
	uint8_t b = buf[8];
	in->cls = b & 7;
	in->mem = (uint8_t)((b & 0x20) ? (b >> 3) & 3 : edag_default_mem(in->cls));
	in->nread = buf[9];
	in->nwrite = buf[10];
	if (in->cls >= EDAG_NCLASS || (b & 0xc0) || in->nread > EDAG_MAX_REGS || in->nwrite > EDAG_MAX_REGS)
		return -EINVAL;
	size_t need = 11 + (in->mem ? 12 : 0) + in->nread + in->nwrite;
	if (len < need)
		return 0;
	size_t n = 11;
	if (in->mem) {
		in->addr = get_le(buf + n, 8);
		in->size = (uint32_t)get_le(buf + n + 8, 4);
		n += 12;
		if (in->size == 0 || in->size > 4096)
			return -EINVAL;
	}
	memcpy(in->rd, buf + n, in->nread);
	n += in->nread;
	memcpy(in->wr, buf + n, in->nwrite);
	return (int)need;
}

