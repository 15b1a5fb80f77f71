# Android phones, arm64 (big.LITTLE Cortex-A53/A55/A76 class).
CROSS_COMPILE ?= aarch64-linux-gnu-
BOARD_CFLAGS := -march=armv8-a
BOARD_DESC := Android arm64 (static, run as root)
