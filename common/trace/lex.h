/* Lexing helpers shared by the trace-format parsers (common/trace/native.c,
 * collector/edag/edag_edan.c, collector/edag/edag_machine.c). No copies, no
 * locale: bytes are compared as ASCII. */
#ifndef COMMON_TRACE_LEX_H
#define COMMON_TRACE_LEX_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline bool lx_space(unsigned char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static inline bool lx_eq(const char *s, size_t len, const char *lit)
{
	return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* memchr for the short spans of one line (no call) */
static inline const char *lx_chr(const char *s, size_t len, char c)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == c)
			return s + i;
	return NULL;
}

static inline void lx_trim(const char **s, size_t *len)
{
	while (*len && lx_space((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len && lx_space((unsigned char)(*s)[*len - 1]))
		(*len)--;
}

static inline int lx_hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Hex digits with an optional 0x/0X (as strtoull base 16 took them, without
 * whitespace or sign): 0 and *out, else -EINVAL (also on overflow). */
static inline int lx_hex(const char *s, size_t len, uint64_t *out)
{
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (len == 0 || len >= 40)
		return -EINVAL;
	uint64_t v = 0;
	size_t sig = 0;
	for (size_t i = 0; i < len; i++) {
		int d = lx_hexval((unsigned char)s[i]);
		if (d < 0)
			return -EINVAL;
		if (v || d)
			sig++;
		if (sig > 16)
			return -EINVAL;
		v = v << 4 | (unsigned)d;
	}
	*out = v;
	return 0;
}

/* Decimal digits only (no sign, no whitespace), overflow checked. */
static inline int lx_dec(const char *s, size_t len, uint64_t *out)
{
	if (len == 0 || len >= 40)
		return -EINVAL;
	uint64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9 || v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static inline int lx_err(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline int lx_err(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* RISC-V register names (common/isa_regs.c numbering) without a table walk:
 * the names traces use most, decided on their first bytes; -2 for "not one
 * of those" (the caller then asks isa_reg_number). */
static inline int lx_num2(const char *s, size_t len, int max)
{
	/* 1 or 2 decimal digits, no leading zero on two, <= max; else -1 */
	if (len == 1 && s[0] >= '0' && s[0] <= '9')
		return s[0] - '0';
	if (len == 2 && s[0] >= '1' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9') {
		int v = (s[0] - '0') * 10 + (s[1] - '0');
		return v <= max ? v : -1;
	}
	return -1;
}

static inline __attribute__((always_inline)) int lx_rv_reg(const char *s, size_t len)
{
	if (len < 2 || len > 4)
		return -2;
	int n;
	switch (s[0]) {
	case 'a':
		if (len == 2 && s[1] >= '0' && s[1] <= '7')
			return 10 + (s[1] - '0');
		return -2;
	case 's':
		if (len == 2 && s[1] == 'p')
			return 2;
		if ((n = lx_num2(s + 1, len - 1, 11)) >= 0)
			return n < 2 ? 8 + n : 16 + n;
		return -2;
	case 't':
		if (len == 2 && s[1] == 'p')
			return 4;
		if (len == 2 && s[1] >= '0' && s[1] <= '6')
			return s[1] <= '2' ? 5 + (s[1] - '0') : 28 + (s[1] - '3');
		return -2;
	case 'x':
		if ((n = lx_num2(s + 1, len - 1, 31)) >= 0)
			return n;
		return -2;
	case 'z':
		return len == 4 && memcmp(s, "zero", 4) == 0 ? 0 : -2;
	case 'r':
		return len == 2 && s[1] == 'a' ? 1 : -2;
	case 'g':
		return len == 2 && s[1] == 'p' ? 3 : -2;
	case 'f':
		if (len == 2 && s[1] == 'p')
			return 8;
		if ((n = lx_num2(s + 1, len - 1, 31)) >= 0)
			return 64 + n;
		if (len >= 3) {
			if (s[1] == 'a' && len == 3 && s[2] >= '0' && s[2] <= '7')
				return 64 + 10 + (s[2] - '0');
			if (s[1] == 's' && (n = lx_num2(s + 2, len - 2, 11)) >= 0)
				return 64 + (n < 2 ? 8 + n : 16 + n);
			if (s[1] == 't' && (n = lx_num2(s + 2, len - 2, 11)) >= 0)
				return 64 + (n < 8 ? n : 20 + n);
		}
		return -2;
	default:
		return -2;
	}
}

#endif
