#!/usr/bin/env bash
# Part of `make check` (mk/board.mk): the cross boards, bounded in time: -Werror static
# builds and size of every board, the unit suites under qemu-user and the emulated
# board tests (QEMU) of qemu-virt-armhf and qemu-virt-arm64. Skip with BOARD_CHECK=0.
set -uo pipefail
limit=${BOARD_CHECK_TIMEOUT:-900}
start=$(date +%s)
echo "== boards (make board-check-all, at most ${limit} s) =="
timeout -k 10 "$limit" make --no-print-directory -j2 -Otarget BOARD=host board-check-all
rc=$?
[ "$rc" -eq 124 ] && echo "board-check: FAIL: over ${limit} s"
echo "board-check: rc=$rc in $(( $(date +%s) - start )) s"
exit "$rc"
