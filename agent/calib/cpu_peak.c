/* Roofline ceilings of the host CPU (C kernels, one pthread per online
 * CPU): peak compute from independent FMA chains on the widest vectors the
 * CPU runs (AVX-512 / AVX2+FMA on x86, chosen at run time; generic vectors
 * elsewhere), and peak bandwidth from a STREAM-like copy and triad over
 * arrays much larger than the caches. Built with -ffp-contract=fast
 * (mk/calib.mk) so that a * b + c is one fused multiply-add. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_bench.h"
#include "net.h"

#define CHAINS 12

#define FMA_KERNEL(NAME, LANES, ATTR)                                                                        \
	typedef float NAME##_v __attribute__((vector_size(LANES * 4)));                                     \
	ATTR __attribute__((no_sanitize("address", "undefined"))) static float NAME(long n, float seed)                                                          \
	{                                                                                                    \
		NAME##_v x[CHAINS], a, b;                                                                   \
		for (int l = 0; l < LANES; l++) {                                                           \
			a[l] = 0.001f;                                                                      \
			b[l] = 0.999f;                                                                      \
		}                                                                                           \
		for (int j = 0; j < CHAINS; j++)                                                             \
			for (int l = 0; l < LANES; l++)                                                     \
				x[j][l] = seed + (float)(j + l);                                           \
		for (long i = 0; i < n; i++) {                                                              \
			_Pragma("GCC unroll 12") for (int j = 0; j < CHAINS; j++) x[j] = x[j] * b + a;      \
		}                                                                                           \
		NAME##_v s = x[0];                                                                          \
		for (int j = 1; j < CHAINS; j++)                                                             \
			s += x[j];                                                                          \
		float r = 0;                                                                                \
		for (int l = 0; l < LANES; l++)                                                             \
			r += s[l];                                                                          \
		return r;                                                                                   \
	}

FMA_KERNEL(fma_generic, 4, )
#if defined(__x86_64__) || defined(__i386__)
FMA_KERNEL(fma_avx2, 8, __attribute__((target("avx2,fma"))))
FMA_KERNEL(fma_avx512, 16, __attribute__((target("avx512f"))))
#endif

struct variant {
	const char *name;
	int lanes;
	float (*fn)(long, float);
};

static int pick(struct variant *v)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f")) {
		*v = (struct variant){"avx512 fma", 16, fma_avx512};
		return 0;
	}
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
		*v = (struct variant){"avx2 fma", 8, fma_avx2};
		return 0;
	}
#endif
	*v = (struct variant){"generic 4-lane vectors", 4, fma_generic};
	return 0;
}

struct worker {
	pthread_t th;
	const struct variant *v;
	long n;
	float sink;
	/* triad */
	double *a, *b, *c;
	size_t lo, hi;
	int op; /* 0 fma, 1 triad, 2 copy, 3 first touch */
};

/* Sanitizer checks would measure themselves, not the machine. */
__attribute__((no_sanitize("address", "undefined"))) static void *work(void *arg)
{
	struct worker *w = arg;
	switch (w->op) {
	case 0:
		w->sink = w->v->fn(w->n, w->sink);
		break;
	case 1:
		for (size_t i = w->lo; i < w->hi; i++)
			w->a[i] = w->b[i] + 3.0 * w->c[i];
		break;
	case 2:
		for (size_t i = w->lo; i < w->hi; i++)
			w->c[i] = w->a[i];
		break;
	default:
		for (size_t i = w->lo; i < w->hi; i++) {
			w->a[i] = 1.0;
			w->b[i] = 2.0;
			w->c[i] = 0.5;
		}
		break;
	}
	return NULL;
}

struct team {
	unsigned n;
	struct worker w[256];
};

static int team_run(void *arg, double *s)
{
	struct team *t = arg;
	uint64_t t0 = clock_mono_ns();
	unsigned started = 0;
	for (unsigned i = 0; i < t->n; i++, started++)
		if (pthread_create(&t->w[i].th, NULL, work, &t->w[i]) != 0)
			break;
	for (unsigned i = 0; i < started; i++)
		pthread_join(t->w[i].th, NULL);
	*s = (double)(clock_mono_ns() - t0) / 1e9;
	return started == t->n ? 0 : -EAGAIN;
}

int bench_cpu_peak(struct calib_ctx *c, struct calib_result *r)
{
	struct variant v;
	pick(&v);
	struct team *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->n = c->cpus < 1 ? 1 : c->cpus > 256 ? 256 : c->cpus;
	char method[CALIB_METHOD_MAX];
	for (unsigned i = 0; i < t->n; i++)
		t->w[i] = (struct worker){.v = &v, .n = 1000, .op = 0, .sink = 1.0f};
	double s, vals[CR_MAX_REPS];
	int rc = team_run(t, &s);
	long n = cr_scale(1000, s, c->quick ? 0.05 : 0.1, 1000, 1L << 30);
	for (unsigned i = 0; i < t->n; i++)
		t->w[i].n = n;
	if (rc == 0)
		rc = cr_repeat(c->reps, team_run, t, vals);
	if (rc < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "cannot start %u threads", t->n);
		free(t);
		return rc;
	}
	double flops = 2.0 * CHAINS * v.lanes * (double)n * t->n;
	for (unsigned k = 0; k < c->reps; k++)
		vals[k] = flops / vals[k] / 1e9;
	struct calib_stat st;
	calib_stat(vals, c->reps, &st);
	snprintf(method, sizeof(method), "%u threads x %d independent %s chains of %ld fused multiply-adds", t->n, CHAINS,
		 v.name, n);
	cr_param(r, "cpu_peak_gflops", st.median, "GFLOP/s", method, st.spread, 1);

	size_t elems = (c->quick ? 8u : 32u) << 20; /* doubles per array */
	double *a = malloc(elems * sizeof(double)), *b = malloc(elems * sizeof(double)), *cc = malloc(elems * sizeof(double));
	if (!a || !b || !cc) {
		free(a), free(b), free(cc), free(t);
		snprintf(r->skipped, sizeof(r->skipped), "cannot allocate 3 x %zu MiB", (elems * 8) >> 20);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < t->n; i++)
		t->w[i] = (struct worker){.a = a, .b = b, .c = cc, .lo = elems * i / t->n, .hi = elems * (i + 1) / t->n, .op = 3};
	team_run(t, &s); /* first touch by the thread that streams the slice */
	static const char *const nm[] = {"cpu_triad_gbps", "cpu_copy_gbps"};
	double best = 0, best_sp = 0;
	for (int op = 1; op <= 2 && rc == 0; op++) {
		for (unsigned i = 0; i < t->n; i++)
			t->w[i].op = op;
		if ((rc = cr_repeat(c->reps, team_run, t, vals)) < 0)
			break;
		double bytes = (op == 1 ? 24.0 : 16.0) * (double)elems;
		for (unsigned k = 0; k < c->reps; k++)
			vals[k] = bytes / vals[k] / 1e9;
		calib_stat(vals, c->reps, &st);
		snprintf(method, sizeof(method), "%u threads, %s over 3 x %zu MiB double arrays (STREAM byte counting)", t->n,
			 op == 1 ? "triad a = b + s*c" : "copy c = a", (elems * 8) >> 20);
		cr_param(r, nm[op - 1], st.median, "GB/s", method, st.spread, 1);
		if (st.median > best) {
			best = st.median;
			best_sp = st.spread;
		}
	}
	if (rc == 0)
		cr_param(r, "cpu_peak_gbps", best, "GB/s", "max of the CPU triad and copy", best_sp, 1);
	free(a), free(b), free(cc), free(t);
	return rc;
}
