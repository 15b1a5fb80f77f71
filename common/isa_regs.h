/* Register names → the one register numbering every trace uses (the eDAG
 * engine, the on-device tracer, the QEMU plugin):
 *   0        the hardwired zero register / "no register": never a dependency
 *   1..63    general-purpose registers
 *   64..127  floating-point / SIMD registers
 *   128..143 flags and FP status
 *   144..255 other (segment bases, system registers)
 * riscv64: xN -> N (x0 -> 0), fN -> 64+N, vN -> 96+N, fcsr/frm/fflags -> 128.
 * aarch64: xN/wN -> N+1, sp/wsp -> 32, xzr/wzr -> 0, vN/qN/dN/sN/hN/bN -> 64+N,
 *          nzcv -> 128, fpsr/fpcr -> 129.
 * arm:     rN -> N+1 (sp=r13 -> 14, lr=r14 -> 15, pc=r15 -> 16), dN -> 64+N,
 *          sN -> 64+N/2, qN -> 64+2N (its low half), cpsr/apsr -> 128, fpscr -> 129.
 * x86_64:  by hardware encoding + 1: rax 1, rcx 2, rdx 3, rbx 4, rsp 5, rbp 6,
 *          rsi 7, rdi 8, r8..r15 -> 9..16 (all sub-registers alias the full one),
 *          rip 17, xmm/ymm/zmmN -> 64+N, st0..st7 -> 104..111, k0..k7 -> 112..119,
 *          rflags -> 128, mxcsr -> 129, fs base -> 144, gs base -> 145. */
#ifndef COMMON_ISA_REGS_H
#define COMMON_ISA_REGS_H

#include <stddef.h>

/* Architectures, numbered as TraceWindow.arch. */
enum isa_arch { ISA_X86_64 = 1, ISA_AARCH64 = 2, ISA_ARM = 3, ISA_RISCV64 = 4 };

/* Number of register name[0..len) for arch, or -ENOENT. Pure. */
int isa_reg_number(unsigned arch, const char *name, size_t len);

#endif
