# Emulated board for tests: QEMU -M virt, Cortex-A57 (TCG), Debian 12 arm64 kernel,
# initramfs = static busybox + static agent (mk/board.mk: make BOARD=qemu-virt-arm64 board-test).
# Same agent build as android-arm64 (static aarch64, BPF compiled in).
CROSS_COMPILE ?= aarch64-linux-gnu-
BOARD_CFLAGS := -march=armv8-a -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables
# Size (board-size): drop unused sections; align ELF segments to 16 KiB (runs on 4 KiB and
# 16 KiB page kernels) instead of the linker's 64 KiB default, which pads the file.
BOARD_LDFLAGS := -Wl,--gc-sections -Wl,-z,max-page-size=16384
# Stripped agent, all subcommands, musl, BPF on (light skeletons only, no libbpf/libelf/
# zlib: CONFIG_AGENT_BPF_LIBBPF off): 889 KiB (target 1 MiB; board/README.md); 1000 KiB with
# issue 25's spool and limits and issue 24's OpenCL crash reports, batches and --mode auto.
# board-size fails above the 1 MiB target itself now: any growth needs a trim first.
BOARD_SIZE_MAX := 1048576
BOARD_DESC := QEMU virt arm64 (Cortex-A57, TCG; test board)
BOARD_DEB_ARCH := arm64
BOARD_QEMU_USER := qemu-aarch64-static
# BPF CO-RE types from the guest kernel's own BTF (mk/board.mk cuts it out of the Image).
BPF_VMLINUX_BTF ?= $(O)/kernel/vmlinux.btf
# Guest: qemu-system binary, machine, CPU, memory, console, and the Debian kernel
# (meta package, resolved to linux-image-<abi>-<flavour> and fetched with apt-get download).
QEMU_SYSTEM := qemu-system-aarch64
QEMU_MACHINE := virt
QEMU_CPU := cortex-a57
QEMU_MEM := 256
QEMU_CONSOLE := ttyAMA0
QEMU_KERNEL_PKG := linux-image-cloud-arm64
# Tracer (static): the only Capstone architecture linked (mk/board.mk); add ARM to decode
# 32-bit processes too (+700 KB).
BOARD_CAPSTONE_ARCHS := AArch64
# C library of the static agent (mk/board.mk, board/README.md): musl; BOARD_LIBC=glibc
# for in-process OpenCL (static dlopen, only with the target's glibc 2.36).
BOARD_LIBC ?= musl
# ---- issue 30: hardware counters (scripts/board-test.sh, PROF-PMU block of board-guest-init.sh).
# -icount shift=0: one instruction per virtual ns, exact INST_RETIRED (without it QEMU's
# INST_RETIRED reads 0 and cycles are virtual ns). The main boot (Cortex-A57, VFP_SPEC/ASE_SPEC
# in its table) and one extra boot on a core without them (Cortex-A53) run the PMU checks.
QEMU_ICOUNT := shift=0
# Under -icount the guest runs about 10x slower than real time here (one instruction per
# virtual ns): the busy loops of the main run take 1 s (of virtual time), not 3.
BOARD_TEST_SECONDS := 1
QEMU_PMU_EXTRA_CPU := cortex-a53
# An arm64 glibc board (Debian/Ubuntu userland on an arm64 SoC): the capture libraries and the
# OpenCL helper bind only GLIBC_2.17 (aarch64's first glibc: every base symbol is 2.17;
# mk/cl_layer.mk) and board-opencl runs them on Debian's arm64 PoCL under qemu-aarch64-static.
BOARD_GLIBC_MAX := 2.17
# board-check leaves out the emulated calibrate here (qemu-virt-armhf runs the same helper code;
# ~40 s of PoCL compiling under qemu); `make BOARD=qemu-virt-arm64 BOARD_OPENCL_SKIP= board-opencl`
# runs it too (14 of 14 passed, 121 s cold).
BOARD_OPENCL_SKIP ?= calibrate
