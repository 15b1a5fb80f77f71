# Arndale Octa: Exynos 5420 (4x Cortex-A15 + 4x Cortex-A7), Mali-T628 MP6, Linux 3.4.
# Static armv7 hard-float agent (musl, BOARD_LIBC below; with glibc 2.36: kernel >= 3.2).
# No eBPF on 3.4 (configs/arndale-octa_defconfig). Deploy: board/arndale-octa/deploy.sh.
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
BOARD_DESC := Arndale Octa (armv7 hard-float, Linux 3.4, no eBPF)
# Debian architecture of the cross libraries (scripts/deps.sh) and qemu-user for the cross unit tests.
BOARD_DEB_ARCH := armhf
BOARD_QEMU_USER := qemu-arm-static
# Tracer (static): the only Capstone architecture linked (mk/board.mk).
BOARD_CAPSTONE_ARCHS := ARM
# C library of the static agent (mk/board.mk, board/README.md): musl; BOARD_LIBC=glibc
# for in-process OpenCL (static dlopen, only with the target's glibc 2.36).
BOARD_LIBC ?= musl
# The OpenCL capture libraries run inside the board's apps, with the board's glibc: a Linux
# 3.4-era userland has glibc 2.17-2.19. They bind symbol versions <= 2.17 only, checked at each
# link (mk/cl_layer.mk, scripts/glibc-symver.sh, scripts/glibc-check.sh).
BOARD_GLIBC_MAX := 2.17
