/* A freestanding static program for test_trace_replay_arm (built with the board cross
 * compilers): doubles in a loop (32-bit ARM hard-float: VFP vmul/vadd/vcvt; AArch64: fmul,
 * fadd, scvtf), then exit by svc. The replay must run them (Unicorn starts 32-bit ARM with
 * VFP off: CPACR and FPEXC). */
volatile double k = 1.000001, out;

#include "sys_exit.h"

void _start(void)
{
	double acc = 1.0;
	for (unsigned i = 0; i < 2000; i++)
		acc = acc * k + (double)i;
	out = acc;
	sys_exit((int)acc & 1);
}
