/* A freestanding static program for test_trace_replay_arm (built with the board cross
 * compilers): doubles in a loop (32-bit ARM hard-float: VFP vmul/vadd/vcvt; AArch64: fmul,
 * fadd, scvtf), then exit by svc. The replay must run them (Unicorn starts 32-bit ARM with
 * VFP off: CPACR and FPEXC). */
volatile double k = 1.000001, out;

__attribute__((noreturn)) static void sys_exit(int code)
{
#if defined(__aarch64__)
	register long x0 __asm__("x0") = code;
	register long x8 __asm__("x8") = 93;
	__asm__ volatile("svc #0" : : "r"(x0), "r"(x8) : "memory");
#else
	register long r0 __asm__("r0") = code;
	register long r7 __asm__("r7") = 1;
	__asm__ volatile("svc #0" : : "r"(r0), "r"(r7) : "memory");
#endif
	for (;;)
		;
}

void _start(void)
{
	double acc = 1.0;
	for (unsigned i = 0; i < 2000; i++)
		acc = acc * k + (double)i;
	out = acc;
	sys_exit((int)acc & 1);
}
