# Emulated board for tests, matching the Arndale Octa build: QEMU -M virt, Cortex-A15 (TCG),
# Debian 12 armmp kernel, initramfs = static busybox + static armv7 hard-float agent, no BPF.
CROSS_COMPILE ?= arm-linux-gnueabihf-
BOARD_CFLAGS := -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mthumb -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables
# 64-bit off_t and ino_t (large spool files; readdir on 64-bit directory cookies, as
# under qemu-user on a 64-bit host). 64-bit time_t is left out: Linux 3.4 lacks the time64 calls.
BOARD_CFLAGS += -D_FILE_OFFSET_BITS=64
# Size (board-size): drop unused sections; align ELF segments to 4 KiB (the kernel's page
# size) instead of the linker's 64 KiB default, which pads the file.
BOARD_LDFLAGS := -Wl,--gc-sections -Wl,-z,max-page-size=4096
# Stripped agent, all subcommands, musl: 796 KiB (target 1 MiB; board/README.md); 904 KiB with
# issue 25's spool and limits and issue 24's OpenCL crash reports, batches and --mode auto.
# board-size fails above this cap, to catch growth: size + 20 KiB since issue 24; 935 KiB
# (957,880 B) with issues 36-42 (the Mali selftest, the OpenCL ring reader and every enqueue
# kind, the options' ranges): 980 KiB, still under the 1 MiB target.
BOARD_SIZE_MAX := 1003520
BOARD_DESC := QEMU virt armhf (Cortex-A15, TCG; test board for the Arndale configuration)
BOARD_DEB_ARCH := armhf
BOARD_QEMU_USER := qemu-arm-static
# highmem=off: the armmp kernel has no LPAE, keep every device below 4 GiB.
QEMU_SYSTEM := qemu-system-arm
QEMU_MACHINE := virt,highmem=off
QEMU_CPU := cortex-a15
QEMU_MEM := 256
QEMU_CONSOLE := ttyAMA0
QEMU_KERNEL_PKG := linux-image-armmp
# Tracer (static): the only Capstone architecture linked (mk/board.mk).
BOARD_CAPSTONE_ARCHS := ARM
# C library of the static agent (mk/board.mk, board/README.md): musl; BOARD_LIBC=glibc
# for in-process OpenCL (static dlopen, only with the target's glibc 2.36).
BOARD_LIBC ?= musl
# ---- issue 30: hardware counters. QEMU's virt machine writes an empty /pmu node for a 32-bit
# guest; scripts/board-test.sh dumps the DTB, adds this compatible and the PMU's PPI 7
# (interrupts = <1 7 0x104>) with dtc, and boots with -dtb: the ARMv7 PMU driver
# (armv7_cortex_a15, one cycle counter) probes. -icount shift=0: exact instruction counts.
QEMU_ICOUNT := shift=0
# Under -icount the guest runs about 10x slower than real time here (one instruction per
# virtual ns): the busy loops of the main run take 1 s (of virtual time), not 3.
BOARD_TEST_SECONDS := 1
QEMU_PMU_DT := arm,cortex-a15-pmu
# As arndale-octa: the capture libraries bind glibc <= 2.17 (mk/cl_layer.mk).
BOARD_GLIBC_MAX := 2.17
