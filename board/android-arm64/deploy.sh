#!/usr/bin/env bash
# Deploy the static arm64 agent to an Android phone with adb, with the continuous service.
#
#   board/android-arm64/deploy.sh [--serial SERIAL] [--collector HOST:PORT] [--token-file FILE]
#                                 [--agent-id ID] [--gpu auto|yes|no] [--run SECONDS]
#
# Pushes to /data/local/tmp/prof-agent/: the agent (build/android-arm64/agent.stripped), the
# runner (board/prof-agent-run.sh: `prof-agent record -a`, restarted when it exits, --gpu where
# /dev/mali0 exists, log rotated by size), the bionic capture libraries (lib/, where built:
# bionic-libs), the bionic OpenCL helper prof-clhelper beside the agent (where the static agent
# looks for it: --features and calibrate measure the phone's OpenCL device), its settings
# prof-agent.conf (collector, token, agent id: empty = the phone's serial, getprop ro.serialno)
# and the token (0600); runs `prof-agent --features` as root (adb root on userdebug/eng builds,
# else su -c). The service itself is prof-agent.rc (init restarts it; needs a writable /system
# or /vendor, see the file).
# --run: also run the service's command in the foreground for SECONDS (a first check);
# for a collector on this machine's loopback, `adb reverse tcp:7412 tcp:7412` first, then
# use 127.0.0.1:7412. Build first: make BOARD=android-arm64. Every adb step has a time bound.
set -euo pipefail
# usage: the comment block above, up to its first line that is not a comment
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
agent=${AGENT:-$top/build/android-arm64/agent.stripped}
adb=(adb)
collector='' token='' agent_id='' gpu=auto run=0
while [ $# -gt 0 ]; do
	case "$1" in
	--serial) adb+=(-s "${2:?}"); shift 2 ;;
	--collector) collector=${2:?}; shift 2 ;;
	--token-file) token=${2:?}; shift 2 ;;
	--agent-id) agent_id=${2:?}; shift 2 ;;
	--gpu) gpu=${2:?}; shift 2 ;;
	--run) run=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "deploy: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
command -v adb >/dev/null || { echo "deploy: no adb (apt-get install adb)" >&2; exit 1; }
[ -f "$agent" ] || { echo "deploy: no $agent: run make BOARD=android-arm64 first" >&2; exit 1; }
[ -z "$token" ] || [ -r "$token" ] || { echo "deploy: cannot read --token-file $token" >&2; exit 1; }
d=/data/local/tmp/prof-agent
conf=$(mktemp)
trap 'rm -f "$conf"' EXIT
{
	echo "# prof-agent service settings (board/prof-agent-run.sh lists them all)"
	echo "COLLECTOR=$collector"
	[ -n "$token" ] && echo "TOKEN_FILE=$d/token"
	echo "AGENT_ID=$agent_id"
	echo "GPU=$gpu"
	echo "AGENT=$d/prof-agent"
	echo "SPOOL=$d/spool"
	echo "LOG=$d/prof-agent.log"
} >"$conf"

timeout 30 "${adb[@]}" wait-for-device
timeout 20 "${adb[@]}" root >/dev/null 2>&1 || true # userdebug/eng: adbd as root
timeout 30 "${adb[@]}" wait-for-device
if [ "$(timeout 20 "${adb[@]}" shell id -u | tr -d '\r')" = 0 ]; then
	as_root() { timeout "$1" "${adb[@]}" shell "$2"; }
else
	echo "deploy: adbd is not root (user build?): trying su" >&2
	as_root() { timeout "$1" "${adb[@]}" shell "su -c '$2'"; }
fi
timeout 30 "${adb[@]}" shell mkdir -p "$d/spool"
timeout 120 "${adb[@]}" push "$agent" "$d/prof-agent"
timeout 30 "${adb[@]}" push "$here/../prof-agent-run.sh" "$d/prof-agent-run"
[ -n "$collector" ] && timeout 30 "${adb[@]}" push "$conf" "$d/prof-agent.conf"
# the bionic capture libraries, where built (make BOARD=android-arm64 BIONIC_SRC=DIR bionic-libs)
bionic=${BIONIC_LIB_DIR:-$top/build/android-arm64/lib-bionic}
if [ -f "$bionic/libprofcl_preload.so" ]; then
	timeout 30 "${adb[@]}" shell mkdir -p "$d/lib"
	timeout 60 "${adb[@]}" push "$bionic/libprofcl_preload.so" "$bionic/libprofcl_layer.so" "$d/lib/"
else
	echo "deploy: no bionic capture libraries ($bionic): OpenCL apps are not traced (board/README.md)" >&2
fi
# the bionic OpenCL helper, beside the agent (agent/opencl_helper.c looks there)
if [ -f "$bionic/prof-clhelper" ]; then
	timeout 60 "${adb[@]}" push "$bionic/prof-clhelper" "$d/prof-clhelper"
	helper=$d/prof-clhelper
else
	echo "deploy: no bionic OpenCL helper ($bionic/prof-clhelper): no OpenCL probe or calibrate (board/README.md)" >&2
	helper=
fi
[ -n "$token" ] && timeout 30 "${adb[@]}" push "$token" "$d/token"
as_root 30 "chmod 755 $d/prof-agent $d/prof-agent-run $helper; chmod 600 $d/token 2>/dev/null; true"
as_root 60 "$d/prof-agent --features"
if [ "$run" != 0 ]; then
	[ -n "$collector" ] || { echo "deploy: --run needs --collector HOST:PORT" >&2; exit 2; }
	id=${agent_id:-$(timeout 20 "${adb[@]}" shell getprop ro.serialno | tr -d '\r')}
	as_root $((run + 60)) "$d/prof-agent record --collector $collector --agent-id $id \
${token:+--token-file $d/token} --spool $d/spool -a -F 99 --duration $run"
fi
echo "deploy: service: install board/android-arm64/prof-agent.rc (see its header), then setprop ctl.start prof-agent"
