#!/usr/bin/env bash
# Deploy the static arm64 agent to an Android phone with adb and check what it can use.
#
#   board/android-arm64/deploy.sh [--serial SERIAL] [--collector HOST:PORT] [--run SECONDS]
#
# Pushes build/android-arm64/agent.stripped to /data/local/tmp/prof-agent and runs
# `prof-agent --features` as root (via `adb root` on userdebug/eng builds, else `su -c`).
# --run: also count system-wide for SECONDS, streaming to --collector; for a collector on
# this machine's loopback, `adb reverse tcp:7412 tcp:7412` first, then use 127.0.0.1:7412.
# Build first: make BOARD=android-arm64. Every adb step has a time bound.
set -euo pipefail
# usage: the comment block above, up to its first line that is not a comment
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
agent=${AGENT:-$top/build/android-arm64/agent.stripped}
adb=(adb)
collector='' run=0
while [ $# -gt 0 ]; do
	case "$1" in
	--serial) adb+=(-s "${2:?}"); shift 2 ;;
	--collector) collector=${2:?}; shift 2 ;;
	--run) run=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "deploy: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
command -v adb >/dev/null || { echo "deploy: no adb (apt-get install adb)" >&2; exit 1; }
[ -f "$agent" ] || { echo "deploy: no $agent: run make BOARD=android-arm64 first" >&2; exit 1; }

timeout 30 "${adb[@]}" wait-for-device
timeout 20 "${adb[@]}" root >/dev/null 2>&1 || true # userdebug/eng: adbd as root
timeout 30 "${adb[@]}" wait-for-device
timeout 120 "${adb[@]}" push "$agent" /data/local/tmp/prof-agent
timeout 30 "${adb[@]}" shell chmod 755 /data/local/tmp/prof-agent
if [ "$(timeout 20 "${adb[@]}" shell id -u | tr -d '\r')" = 0 ]; then
	as_root() { timeout "$1" "${adb[@]}" shell "$2"; }
else
	echo "deploy: adbd is not root (user build?): trying su" >&2
	as_root() { timeout "$1" "${adb[@]}" shell "su -c '$2'"; }
fi
as_root 60 "/data/local/tmp/prof-agent --features"
if [ "$run" != 0 ]; then
	[ -n "$collector" ] || { echo "deploy: --run needs --collector HOST:PORT" >&2; exit 2; }
	as_root $((run + 60)) "mkdir -p /data/local/tmp/prof-spool && /data/local/tmp/prof-agent stat \
--collector $collector -a --duration $run -I 1000 --spool /data/local/tmp/prof-spool"
fi
