/* Saturating unsigned arithmetic for totals built from what agents sent
 * (sample counts, lost samples, interval lengths): a forged or damaged value
 * makes a total stick at UINT64_MAX instead of wrapping to a small number
 * (a share over 100 %). Header only. */
#ifndef COMMON_SAT_H
#define COMMON_SAT_H

#include <stdint.h>

static inline uint64_t sat_add_u64(uint64_t a, uint64_t b)
{
	uint64_t s;
	return __builtin_add_overflow(a, b, &s) ? UINT64_MAX : s;
}

/* *a += b, saturating. */
static inline void sat_inc_u64(uint64_t *a, uint64_t b)
{
	*a = sat_add_u64(*a, b);
}

/* a * b, saturating (a sample count times the time one sample stands for). */
static inline uint64_t sat_mul_u64(uint64_t a, uint64_t b)
{
	uint64_t m;
	return __builtin_mul_overflow(a, b, &m) ? UINT64_MAX : m;
}

/* a + b and a - b on signed 64-bit times, stuck at INT64_MIN/INT64_MAX instead of overflowing. */
static inline int64_t sat_add_i64(int64_t a, int64_t b)
{
	int64_t s;
	return __builtin_add_overflow(a, b, &s) ? (b > 0 ? INT64_MAX : INT64_MIN) : s;
}

static inline int64_t sat_sub_i64(int64_t a, int64_t b)
{
	int64_t s;
	return __builtin_sub_overflow(a, b, &s) ? (b < 0 ? INT64_MAX : INT64_MIN) : s;
}

#endif
