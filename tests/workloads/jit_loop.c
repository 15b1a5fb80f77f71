/* jit_loop N: what a JIT does, in small (issue 39: perf-map files). Copies a
 * summing loop's machine code (written here as bytes: x86_64, aarch64) into
 * anonymous memory twice, makes it executable, and writes /tmp/perf-PID.map
 * as perf's jit-interface.txt says ("START SIZE name", hex without 0x) and as
 * node --perf-basic-prof does: "jit_hot" at first; after the first N/2 rounds
 * (hot only) it appends "jit_cold" and runs both. Work: N rounds of 3 M
 * iterations in jit_hot, plus 1 M in jit_cold in the last N/2 rounds, so
 * jit_cold holds 1/7 of the JIT samples. Bounded by work, not time. The map
 * file stays (as node leaves it): perf reads it at report time. Exit 77 on an
 * architecture without code here.
 *
 * jit_loop N calls: the JIT code is a trampoline "jit_tramp" (a frame of its
 * own, then a call) into a C function, work(), that does the loop: the samples'
 * leaf is work(), the JIT code only a frame of their call chains (x86_64). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)
/* xor eax,eax; 1: add rax,rdi; dec rdi; jnz 1b; ret */
static const uint8_t code[] = {0x31, 0xc0, 0x48, 0x01, 0xf8, 0x48, 0xff, 0xcf, 0x75, 0xf8, 0xc3};
#elif defined(__aarch64__)
/* mov x1,#0; 1: add x1,x1,x0; subs x0,x0,#1; b.ne 1b; mov x0,x1; ret */
static const uint32_t code[] = {0xd2800001, 0x8b000021, 0xf1000400, 0x54ffffc1, 0xaa0103e0, 0xd65f03c0};
#endif

typedef uint64_t (*loop_fn)(uint64_t);

__attribute__((noinline)) static uint64_t work(uint64_t n)
{
	uint64_t s = 0;
	for (volatile uint64_t i = 0; i < n; i++)
		s += i;
	return s;
}

/* N rounds of work(1 M) through a JIT trampoline (800 rounds: about 0.3 s) (x86_64; 77 elsewhere) */
static int calls(long n)
{
#if defined(__x86_64__)
	/* push rbp; mov rbp,rsp; movabs rax,work; call rax; pop rbp; ret */
	uint8_t tramp[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0,    0,	   0,
			   0,	 0,    0,    0,	   0,	 0xff, 0xd0, 0x5d, 0xc3};
	uint64_t target = (uint64_t)(uintptr_t)work;
	memcpy(tramp + 6, &target, 8);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memcpy(mem, tramp, sizeof(tramp));
	if (mprotect(mem, page, PROT_READ | PROT_EXEC) < 0)
		return 1;
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx jit_tramp\n", (unsigned long)(uintptr_t)mem, sizeof(tramp));
	fclose(f);
	loop_fn fn;
	memcpy(&fn, &(uintptr_t){(uintptr_t)mem}, sizeof(fn));
	uint64_t sum = 0;
	for (long i = 0; i < n; i++)
		sum += fn(1000000);
	printf("jit_loop: %ld calls, map %s, %llu\n", n, path, (unsigned long long)(sum & 0xff));
	return 0;
#else
	(void)n;
	(void)work;
	return 77;
#endif
}

int main(int argc, char **argv)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	(void)argc;
	(void)argv;
	fprintf(stderr, "jit_loop: no machine code for this architecture\n");
	return 77;
#else
	long n = argc > 1 ? atol(argv[1]) : 200;
	if (argc > 2 && strcmp(argv[2], "calls") == 0)
		return calls(n);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("jit_loop: mmap");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	memcpy(mem + 512, code, sizeof(code));
	__builtin___clear_cache((char *)mem, (char *)mem + page);
	if (mprotect(mem, page, PROT_READ | PROT_EXEC) < 0) {
		perror("jit_loop: mprotect");
		return 1;
	}
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		return 1;
	}
	fprintf(f, "%lx %zx jit_hot\n", (unsigned long)(uintptr_t)mem, sizeof(code));
	fflush(f);
	loop_fn hot, cold;
	memcpy(&hot, &(uintptr_t){(uintptr_t)mem}, sizeof(hot));
	memcpy(&cold, &(uintptr_t){(uintptr_t)mem + 512}, sizeof(cold));
	uint64_t sum = 0;
	for (long i = 0; i < n; i++) {
		if (i == n / 2) { /* more code compiled: the map grows */
			fprintf(f, "%lx %zx jit_cold\n", (unsigned long)(uintptr_t)(mem + 512), sizeof(code));
			fflush(f);
		}
		sum += hot(3000000);
		if (i >= n / 2)
			sum += cold(1000000);
	}
	fclose(f);
	printf("jit_loop: %ld rounds, map %s, %llu\n", n, path, (unsigned long long)(sum & 0xff));
	return 0;
#endif
}
