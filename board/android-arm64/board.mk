# Android phones, arm64 (big.LITTLE Cortex-A53/A55/A76 class). Static agent, run as root
# from /data/local/tmp (board/android-arm64/deploy.sh); BPF where the kernel has BTF.
CROSS_COMPILE ?= aarch64-linux-gnu-
BOARD_CFLAGS := -march=armv8-a -ffunction-sections -fdata-sections -fno-asynchronous-unwind-tables -fno-unwind-tables
# Size (board-size): drop unused sections; align ELF segments to 16 KiB (runs on 4 KiB and
# 16 KiB page kernels) instead of the linker's 64 KiB default, which pads the file.
BOARD_LDFLAGS := -Wl,--gc-sections -Wl,-z,max-page-size=16384
# Stripped agent, all subcommands, musl, BPF on (light skeletons only, no libbpf/libelf/
# zlib: CONFIG_AGENT_BPF_LIBBPF off): 889 KiB (target 1 MiB; board/README.md); 1000 KiB with
# issue 25's spool and limits and issue 24's OpenCL crash reports, batches and --mode auto.
# board-size fails above the 1 MiB target itself now: any growth needs a trim first. 1,057,208 B
# after issues 35/36/39/41 (vdso, calib through the helper, ...): the OpenCL benchmarks, which a
# static musl agent runs in prof-clhelper, left out of it: 1,008,032 B (armhf 970,168 -> 937,384).
BOARD_SIZE_MAX := 1048576
BOARD_DESC := Android arm64 (static, run as root)
BOARD_DEB_ARCH := arm64
BOARD_QEMU_USER := qemu-aarch64-static
# BPF CO-RE types: the build machine's BTF is not the phone's. By default vmlinux.h comes
# from the BTF of Debian's arm64 kernel (fetched by mk/board.mk, cut out of its Image);
# CO-RE relocates field offsets on the phone, whose kernel must have BTF. With the phone
# at hand, use its own BTF:
#   adb pull /sys/kernel/btf/vmlinux phone.btf && make BOARD=android-arm64 BPF_VMLINUX_BTF=$PWD/phone.btf
BOARD_BTF_KERNEL_PKG := linux-image-cloud-arm64
BPF_VMLINUX_BTF ?= $(O)/kernel/vmlinux.btf
# Tracer (static): the only Capstone architecture linked (mk/board.mk); add ARM to decode
# 32-bit processes too (+700 KB).
BOARD_CAPSTONE_ARCHS := AArch64
# C library of the static agent (mk/board.mk, board/README.md): musl; BOARD_LIBC=glibc
# for in-process OpenCL (static dlopen, only with the target's glibc 2.36).
BOARD_LIBC ?= musl
# The capture libraries for bionic apps and the OpenCL helper prof-clhelper (mk/cl_layer.mk
# `bionic-libs`, needs BIONIC_SRC): API 29 (Android 10), the first whose bionic has ELF TLS (the
# libraries' __thread state). bionic-api.txt: bionic's public names at this API and arch, which
# every build's helper is checked against (scripts/bionic-names-check.sh).
BOARD_BIONIC_API := 29
BOARD_BIONIC_ARCH := arm64
BOARD_BIONIC_TARGET := aarch64-linux-android
