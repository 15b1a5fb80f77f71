/* Synthetic RISC-V instruction traces for the trace-reader benchmark
 * (scripts/bench-edag-read.sh) and the reader tests: N lines of EDAN's
 * execlog format ("0;0xPC;DISASM;0xADDR") or of the native text format
 * ("0xPC CLASS r=.. w=.. m=0xADDR/SIZE"), the same instruction stream in
 * both. Mix: 25% loads, 10% stores, 45% integer, 10% float, 10% branches;
 * addresses 3/4 streaming, 1/4 random over a working set of WS KiB.
 * Shape "loop" (the default): a program of 48 instructions drawn once from
 * that mix, executed over and over (as real traces are: loops), each memory
 * instruction with its own address stream; "random": every line drawn anew
 * (no repetition at all: the worst case for a parser's branch predictors).
 * Usage: trace_gen edan|native N [WS_KIB [loop|random]] > FILE   (deterministic) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const char *const xr[] = {"a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "t0", "t1", "t2", "s1", "s2", "s3"};
static const char *const fr[] = {"fa0", "fa1", "fa2", "fa3", "fa4", "fa5", "ft0", "ft1"};
#define NX (sizeof(xr) / sizeof(xr[0]))
#define NF (sizeof(fr) / sizeof(fr[0]))

int main(int argc, char **argv)
{
	if (argc < 3 || (strcmp(argv[1], "edan") != 0 && strcmp(argv[1], "native") != 0)) {
		fprintf(stderr, "usage: trace_gen edan|native N [WS_KIB] > FILE\n");
		return 2;
	}
	int edan = strcmp(argv[1], "edan") == 0;
	unsigned long long n = strtoull(argv[2], NULL, 10);
	uint64_t ws = (argc > 3 ? strtoull(argv[3], NULL, 10) : 4096) * 1024;
	if (ws < 4096)
		ws = 4096;
	static char out[1 << 20];
	setvbuf(stdout, out, _IOFBF, sizeof(out));
	if (!edan)
		fputs("# trace_gen\narch riscv64\n", stdout);
	int loop = !(argc > 4 && strcmp(argv[4], "random") == 0);
	enum { BODY = 48 };
	uint64_t body[BODY];
	for (int i = 0; i < BODY; i++)
		body[i] = next();
	uint64_t pc = 0x10000, base = 0x4000800000ull, stream = 0;
	for (unsigned long long i = 0; i < n; i++) {
		uint64_t r = loop ? body[i % BODY] : next();
		if (loop && i % BODY == 0)
			pc = 0x10000;
		unsigned kind = (unsigned)(r % 100);
		const char *d = xr[(r >> 8) % NX], *a = xr[(r >> 16) % NX], *b = xr[(r >> 24) % NX];
		const char *fd = fr[(r >> 32) % NF], *fa = fr[(r >> 40) % NF], *fb = fr[(r >> 48) % NF];
		uint64_t addr;
		if ((r >> 56) % 4)
			addr = base + ((stream += 8) % ws);
		else
			addr = base + ((next() % ws) & ~7ull);
		pc += (r >> 60) ? 4 : 2;
		if (kind < 20) { /* integer load */
			if (edan)
				printf("0;0x%llx;ld %s,8(%s);0x%llx\n", (unsigned long long)pc, d, a,
				       (unsigned long long)addr);
			else
				printf("0x%llx load r=%s w=%s m=0x%llx/8\n", (unsigned long long)pc, a, d,
				       (unsigned long long)addr);
		} else if (kind < 25) { /* float load */
			if (edan)
				printf("0;0x%llx;fld %s,0(%s);0x%llx\n", (unsigned long long)pc, fd, a,
				       (unsigned long long)addr);
			else
				printf("0x%llx load r=%s w=%s m=0x%llx/8\n", (unsigned long long)pc, a, fd,
				       (unsigned long long)addr);
		} else if (kind < 35) { /* store */
			if (edan)
				printf("0;0x%llx;sw %s,16(%s);0x%llx\n", (unsigned long long)pc, b, a,
				       (unsigned long long)addr);
			else
				printf("0x%llx store r=%s,%s m=0x%llx/4\n", (unsigned long long)pc, b, a,
				       (unsigned long long)addr);
		} else if (kind < 60) { /* integer, two sources */
			if (edan)
				printf("0;0x%llx;add %s,%s,%s\n", (unsigned long long)pc, d, a, b);
			else
				printf("0x%llx int r=%s,%s w=%s\n", (unsigned long long)pc, a, b, d);
		} else if (kind < 80) { /* integer immediate */
			if (edan)
				printf("0;0x%llx;addi %s,%s,%d\n", (unsigned long long)pc, d, a, (int)(r % 64) - 32);
			else
				printf("0x%llx int r=%s w=%s\n", (unsigned long long)pc, a, d);
		} else if (kind < 90) { /* float */
			if (edan)
				printf("0;0x%llx;fmadd.d %s,%s,%s,%s\n", (unsigned long long)pc, fd, fa, fb, fd);
			else
				printf("0x%llx float r=%s,%s,%s w=%s\n", (unsigned long long)pc, fa, fb, fd, fd);
		} else { /* branch */
			if (edan)
				printf("0;0x%llx;bne %s,%s,-%u # 0x%llx\n", (unsigned long long)pc, a, b,
				       (unsigned)(r % 200), (unsigned long long)(pc - r % 200));
			else
				printf("0x%llx branch r=%s,%s\n", (unsigned long long)pc, a, b);
		}
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
