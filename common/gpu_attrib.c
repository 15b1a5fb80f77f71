#include "gpu_attrib.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct span {
	uint64_t a, b;
	size_t k;
};

static int by_start(const void *x, const void *y)
{
	const struct span *p = x, *q = y;
	return p->a < q->a ? -1 : p->a > q->a ? 1 : 0;
}

static uint64_t overlap(uint64_t a0, uint64_t a1, uint64_t b0, uint64_t b1)
{
	uint64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
	return hi > lo ? hi - lo : 0;
}

/* First interval whose end is after t (intervals ordered by time). */
static size_t first_after(const uint64_t *t1, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t1[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int gpu_attrib(const uint64_t *t0, const uint64_t *t1, const uint64_t *values, size_t nrows, size_t ncols,
	       const uint64_t *k0, const uint64_t *k1, size_t nk, double *out, double *unattributed)
{
	for (size_t i = 0; i < nrows; i++)
		if (t1[i] < t0[i] || (i && t0[i] < t1[i - 1]))
			return -EINVAL;
	if (nk)
		memset(out, 0, nk * ncols * sizeof(*out));
	if (unattributed)
		memset(unattributed, 0, ncols * sizeof(*unattributed));
	struct span *sp = nk ? calloc(nk, sizeof(*sp)) : NULL;
	uint64_t *busy = nrows ? calloc(nrows, sizeof(*busy)) : NULL;
	if ((nk && !sp) || (nrows && !busy)) {
		free(sp), free(busy);
		return -ENOMEM;
	}
	size_t ns = 0;
	for (size_t k = 0; k < nk; k++)
		if (k1[k] > k0[k])
			sp[ns++] = (struct span){k0[k], k1[k], k};
	if (ns > 1) /* qsort must not see sp NULL (no kernels), even with a count of 0 */
		qsort(sp, ns, sizeof(*sp), by_start);
	/* Kernel time in each interval: the sum of the overlaps (concurrent
	 * kernels each count), so the shares of an interval add up to one. */
	for (size_t i = 0; i < ns; i++)
		for (size_t r = first_after(t1, nrows, sp[i].a); r < nrows && t0[r] < sp[i].b; r++)
			busy[r] += overlap(t0[r], t1[r], sp[i].a, sp[i].b);
	for (size_t i = 0; i < ns; i++) {
		size_t k = sp[i].k;
		for (size_t r = first_after(t1, nrows, sp[i].a); r < nrows && t0[r] < sp[i].b; r++) {
			uint64_t ov = overlap(t0[r], t1[r], sp[i].a, sp[i].b);
			if (!ov || !busy[r])
				continue;
			double w = (double)ov / (double)busy[r];
			for (size_t c = 0; c < ncols; c++)
				out[k * ncols + c] += w * (double)values[r * ncols + c];
		}
	}
	if (unattributed)
		for (size_t r = 0; r < nrows; r++)
			if (!busy[r])
				for (size_t c = 0; c < ncols; c++)
					unattributed[c] += (double)values[r * ncols + c];
	free(sp), free(busy);
	return 0;
}
