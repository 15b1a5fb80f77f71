/* Arithmetic latency per op and type (seed 2.1): one work-item runs a long
 * dependent chain; cycles = time x clock / chain length. Throughput: the same
 * chains in many work-items at once (independent chains). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/calib_detect.h"
#include "calib_bench.h"

/* OP(x) is one operation (or a documented pair) on x with runtime operands
 * a and b, so that nothing folds: latency kernels chain it 8 times per loop
 * iteration in one variable, throughput kernels run 8 independent chains per
 * work-item (a CPU device runs work-items one after another, so independent
 * chains must live inside one work-item to overlap). */
#define ARITH_KERNELS(T)                                                                                     \
	"#define K(NAME, OP) \\\n"                                                                            \
	"__kernel void NAME(__global " T " *out, " T " a, " T " b, int n) {\\\n"                              \
	"	" T " x = a;\\\n"                                                                                 \
	"	for (int i = 0; i < n; i++) { x = OP(x); x = OP(x); x = OP(x); x = OP(x);\\\n"                    \
	"		x = OP(x); x = OP(x); x = OP(x); x = OP(x); }\\\n"                                        \
	"	out[get_global_id(0)] = x; }\\\n"                                                                 \
	"__kernel void NAME##_tp(__global " T " *out, " T " a, " T " b, int n) {\\\n"                         \
	"	" T " x0 = a, x1 = a + (" T ")1, x2 = a + (" T ")2, x3 = a + (" T ")3;\\\n"                       \
	"	" T " x4 = a + (" T ")4, x5 = a + (" T ")5, x6 = a + (" T ")6, x7 = a + (" T ")7;\\\n"            \
	"	for (int i = 0; i < n; i++) { x0 = OP(x0); x1 = OP(x1); x2 = OP(x2); x3 = OP(x3);\\\n"            \
	"		x4 = OP(x4); x5 = OP(x5); x6 = OP(x6); x7 = OP(x7); }\\\n"                                \
	"	out[get_global_id(0)] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7; }\n"

static const char float_src[] = ARITH_KERNELS("float")
	"#define F_ADD(x) ((x) + b)\nK(float_add, F_ADD)\n"
	"#define F_MUL(x) ((x) * b)\nK(float_mul, F_MUL)\n"
	"#define F_MAD(x) mad((x), b, a)\nK(float_mad, F_MAD)\n"
	"#define F_DIV(x) ((x) / b)\nK(float_div, F_DIV)\n"
	"#define F_SQRT(x) sqrt(x)\nK(float_sqrt, F_SQRT)\n"
	"#define F_NSQRT(x) native_sqrt(x)\nK(float_native_sqrt, F_NSQRT)\n"
	"#define F_NDIV(x) native_divide((x), b)\nK(float_native_divide, F_NDIV)\n"
	"#define F_NRECIP(x) native_recip(x)\nK(float_native_recip, F_NRECIP)\n";

/* int: a lone add chain is folded to x + n*b, so add is an add/xor pair;
 * mul and mad square x (b^8 would be folded); div maps x -> b / x, which
 * cycles between 3 and b/3 for b = 1000000007 (never 0). */
static const char int_src[] = ARITH_KERNELS("int")
	"#define I_ADD(x) (((x) + b) ^ a)\nK(int_add, I_ADD)\n"
	"#define I_MUL(x) ((x) * (x))\nK(int_mul, I_MUL)\n"
	"#define I_MAD(x) ((x) * (x) + b)\nK(int_mad, I_MAD)\n"
	"#define I_DIV(x) (b / (x))\nK(int_div, I_DIV)\n";

static const char half_src[] = "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n" ARITH_KERNELS("half")
	"#define H_ADD(x) ((x) + b)\nK(half_add, H_ADD)\n"
	"#define H_MUL(x) ((x) * b)\nK(half_mul, H_MUL)\n"
	"#define H_MAD(x) mad((x), b, a)\nK(half_mad, H_MAD)\n";

struct op {
	const char *name;
	int type; /* 0 float, 1 int, 2 half */
	int per_step;
	double a, b; /* initial x and y */
	bool quick;
};

static const struct op ops[] = {
	{"float_add", 0, 1, 1.0, 1e-7, true},     {"float_mul", 0, 1, 1.5, 1.0, true},
	{"float_mad", 0, 1, 0.0, 1.0, true},      {"float_div", 0, 1, 1.5, 1.0, true},
	{"float_sqrt", 0, 1, 2.0, 0, true},       {"float_native_sqrt", 0, 1, 2.0, 0, false},
	{"float_native_divide", 0, 1, 1.5, 1.0, false}, {"float_native_recip", 0, 1, 2.0, 0, false},
	{"int_add", 1, 2, 1, 1, true},            {"int_mul", 1, 1, 3, 3, true},
	{"int_mad", 1, 1, 3, 3, false},           {"int_div", 1, 1, 3, 1000000007, true},
	{"half_add", 2, 1, 1.0, 0.001, true},     {"half_mul", 2, 1, 1.5, 1.0, true},
	{"half_mad", 2, 1, 0.0, 1.0, false},
};

struct arith_run {
	struct cl_prog *p;
	const struct op *op;
	cl_buf *out;
	size_t global, local;
	int n;
	bool tp;
};

static int arith_once(void *arg, double *s)
{
	struct arith_run *r = arg;
	struct cl_arg args[4] = {CL_ARG_BUF(r->out)};
	float fa = (float)r->op->a, fb = (float)r->op->b;
	int ia = (int)r->op->a, ib = (int)r->op->b;
	uint16_t ha = 0x3c00, hb = 0x3c00; /* half 1.0 (x86/ARM little endian) */
	if (r->op->type == 2 && r->op->a == 0.0)
		ha = 0;
	else if (r->op->type == 2 && r->op->a != 1.0)
		ha = 0x3e00; /* 1.5 */
	if (r->op->type == 2 && r->op->b != 1.0)
		hb = 0x1419; /* ~0.001 */
	switch (r->op->type) {
	case 0: args[1] = CL_ARG_VAL(fa); args[2] = CL_ARG_VAL(fb); break;
	case 1: args[1] = CL_ARG_VAL(ia); args[2] = CL_ARG_VAL(ib); break;
	default: args[1] = CL_ARG_VAL(ha); args[2] = CL_ARG_VAL(hb); break;
	}
	args[3] = CL_ARG_VAL(r->n);
	char kn[64];
	snprintf(kn, sizeof(kn), "%s%s", r->op->name, r->tp ? "_tp" : "");
	return cl_run(r->p, kn, args, 4, r->global, r->local, s);
}

static int measure(struct calib_ctx *c, struct arith_run *run, double *stat_med, double *spread)
{
	double t, v[CR_MAX_REPS];
	run->n = 256;
	int rc = arith_once(run, &t);
	if (rc < 0)
		return rc;
	run->n = (int)cr_scale(run->n, t, c->quick ? 0.005 : 0.01, 64, 1L << 26);
	if ((rc = cr_repeat(c->reps, arith_once, run, v)) < 0)
		return rc;
	struct calib_stat st;
	calib_stat(v, c->reps, &st);
	*stat_med = st.median;
	*spread = st.spread;
	return 0;
}

int bench_arith(struct calib_ctx *c, struct calib_result *r)
{
	char err[1024];
	struct cl_prog *progs[3] = {NULL, NULL, NULL};
	const char *srcs[3] = {float_src, int_src, half_src};
	int rc = 0;
	for (int i = 0; i < 3; i++) {
		if (i == 2 && !c->dev->fp16)
			continue;
		if ((rc = cl_prog_build(c->cl, srcs[i], NULL, &progs[i], err, sizeof(err))) < 0) {
			snprintf(r->skipped, sizeof(r->skipped), "%s", err);
			goto out;
		}
	}
	cl_buf *out = NULL;
	unsigned cus = c->dev->compute_units ? c->dev->compute_units : 1;
	size_t local = c->dev->max_wg < 64 ? c->dev->max_wg : 64;
	size_t wide = (size_t)cus * 8 * local;
	if ((rc = cl_buf_create(c->cl, wide * sizeof(float), NULL, &out)) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "cannot allocate the output buffer");
		goto out;
	}
	double mhz = c->clock_mhz;
	char method[CALIB_METHOD_MAX], name[CALIB_NAME_MAX];
	unsigned done = 0;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		const struct op *op = &ops[i];
		if ((c->quick && !op->quick) || !progs[op->type])
			continue;
		struct arith_run run = {.p = progs[op->type], .op = op, .out = out, .global = 1, .local = 1};
		double t, sp;
		if ((rc = measure(c, &run, &t, &sp)) < 0) {
			snprintf(r->skipped, sizeof(r->skipped), "%s failed (%d)", op->name, rc);
			break;
		}
		double ops1 = (double)run.n * 8 * op->per_step;
		snprintf(name, sizeof(name), "lat_%s_cycles", op->name);
		snprintf(method, sizeof(method), "one work-item, chain of %.0f dependent ops; time x %.0f MHz (clock_mhz) / ops%s",
			 ops1, mhz, op->per_step == 2 ? " (add/xor pairs: a lone add chain is folded)" : "");
		cr_param(r, name, calib_cycles_per_op(t, ops1, mhz), "cycles", method, sp, 1);
		run.global = (size_t)cus * 4;
		run.local = 1;
		run.tp = true;
		if ((rc = measure(c, &run, &t, &sp)) < 0) {
			snprintf(r->skipped, sizeof(r->skipped), "%s (throughput) failed (%d)", op->name, rc);
			break;
		}
		double all = (double)run.n * 8 * op->per_step * (double)run.global;
		snprintf(name, sizeof(name), "tput_%s_per_cycle_cu", op->name);
		snprintf(method, sizeof(method),
			 "%zu work-items x 8 independent chains; ops / (time x %.0f MHz x %u CUs)%s", run.global, mhz, cus,
			 op->per_step == 2 ? " (int add: add/xor pairs)" : "");
		cr_param(r, name, all / (t * mhz * 1e6 * cus), "ops/cycle/CU", method, sp, 1);
		done++;
	}
	if (!c->dev->fp16)
		cr_param(r, "half_supported", 0, "bool", "cl_khr_fp16 absent: half ops not measured", 0, 1);
	if (done > 0 && rc < 0)
		rc = 0; /* keep what was measured; skipped says what failed */
	cl_buf_free(c->cl, out);
out:
	for (int i = 0; i < 3; i++)
		cl_prog_free(progs[i]);
	return rc;
}
