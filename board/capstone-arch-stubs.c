/* Static cross builds of the agent: keep only the board's Capstone architectures.
 *
 * Capstone 4's cs.o refers to every architecture's <Arch>_global_init and <Arch>_option,
 * so a static link pulls in every disassembler (~4 MB). Defining those two functions here,
 * for the architectures the board does not keep, satisfies the references before the linker
 * reaches libcapstone.a: the unused modules and their tables are never pulled in. cs_open()
 * on a stubbed architecture fails cleanly with CS_ERR_ARCH.
 * Kept: -DCAPSTONE_KEEP_<Arch> (BOARD_CAPSTONE_ARCHS in board/<name>/board.mk; mk/board.mk).
 * Static links only: in a dynamic link these definitions would interpose on libcapstone.so. */
#include <stddef.h>

#include <capstone/capstone.h>

struct cs_struct;

#define CAPSTONE_STUB(A)                                                                        \
	cs_err A##_global_init(struct cs_struct *ud);                                            \
	cs_err A##_option(struct cs_struct *handle, cs_opt_type type, size_t value);             \
	cs_err A##_global_init(struct cs_struct *ud)                                              \
	{                                                                                        \
		(void)ud;                                                                        \
		return CS_ERR_ARCH;                                                              \
	}                                                                                        \
	cs_err A##_option(struct cs_struct *handle, cs_opt_type type, size_t value)              \
	{                                                                                        \
		(void)handle;                                                                    \
		(void)type;                                                                      \
		(void)value;                                                                     \
		return CS_ERR_ARCH;                                                              \
	}

#ifndef CAPSTONE_KEEP_ARM
CAPSTONE_STUB(ARM)
#endif
#ifndef CAPSTONE_KEEP_AArch64
CAPSTONE_STUB(AArch64)
#endif
#ifndef CAPSTONE_KEEP_X86
CAPSTONE_STUB(X86)
#endif
CAPSTONE_STUB(Mips)
CAPSTONE_STUB(PPC)
CAPSTONE_STUB(Sparc)
CAPSTONE_STUB(SystemZ)
CAPSTONE_STUB(XCore)
CAPSTONE_STUB(M68K)
CAPSTONE_STUB(TMS320C64x)
CAPSTONE_STUB(M680X)
CAPSTONE_STUB(EVM)
