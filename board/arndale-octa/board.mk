# Arndale Octa: Exynos 5420 (4x Cortex-A15 + 4x Cortex-A7), Mali-T628 MP6, Linux 3.4.
CROSS_COMPILE ?= arm-linux-gnueabihf-
BOARD_CFLAGS := -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mthumb
BOARD_DESC := Arndale Octa (armv7 hard-float, Linux 3.4, no eBPF)
