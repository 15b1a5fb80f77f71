# Host build (any Linux; used by tests and the collector).
CROSS_COMPILE ?=
BOARD_CFLAGS :=
BOARD_DESC := host Linux build
