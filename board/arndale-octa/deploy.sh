#!/usr/bin/env bash
# Deploy the profiler to an Arndale Octa: the static agent, the OpenCL capture libraries and the
# agent's OpenCL helper prof-clhelper (glibc <= 2.17), and a service that runs `prof-agent record` continuously (board/prof-agent-run.sh).
#
#   board/arndale-octa/deploy.sh ssh USER@BOARD [OPTIONS]   Linux userland, over ssh (root)
#   board/arndale-octa/deploy.sh root DIR [OPTIONS]         into DIR standing for the board's /
#                                                           (an SD card's root fs; the tests)
#   board/arndale-octa/deploy.sh adb [OPTIONS]              Android 4.2 userland, adb as root
# OPTIONS: --collector HOST:PORT (required the first time), --token-file FILE (the collector's
#          --token-file), --agent-id ID (default: the board's machine id), --gpu auto|yes|no
#          (default auto: --gpu where /dev/mali0 exists), --no-service (files only)
# Installs (Linux): /usr/local/bin/prof-agent, /usr/local/lib/profcl/{libprofcl_layer.so,
# libprofcl_preload.so,libprofcl_bridge.so,prof-clhelper,prof-agent-run}, /etc/default/prof-agent (settings),
# /etc/prof-agent/token (0600), /etc/init.d/prof-agent (+ rc?.d links) and
# /etc/systemd/system/prof-agent.service; ssh then enables and (re)starts the service.
# Build first: make BOARD=arndale-octa. Every remote step has a time bound.
set -euo pipefail
# usage: the comment block above, up to its first line that is not a comment
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
agent=${AGENT:-$top/build/arndale-octa/agent.stripped}
cl_lib_dir=${CL_LIB_DIR:-$top/build/arndale-octa/lib}
mode=${1:-}
case "$mode" in
-h | --help) usage; exit 0 ;;
ssh | root | adb) ;;
'') usage >&2; exit 2 ;;
*) echo "deploy: say ssh USER@BOARD, root DIR or adb (got '$mode'; --help for more)" >&2; exit 2 ;;
esac
shift
target=
case "$mode" in
ssh | root) target=${1:?$mode needs a target}; shift ;;
adb) ;;
*) echo "deploy: mode is ssh, root or adb" >&2; exit 2 ;;
esac
collector='' token='' agent_id='' gpu=auto service=1
while [ $# -gt 0 ]; do
	case "$1" in
	--collector) collector=${2:?}; shift 2 ;;
	--token-file) token=${2:?}; shift 2 ;;
	--agent-id) agent_id=${2:?}; shift 2 ;;
	--gpu) gpu=${2:?}; shift 2 ;;
	--no-service) service=0; shift ;;
	*) echo "deploy: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
case "$gpu" in auto | yes | no) ;; *) echo "deploy: --gpu auto|yes|no" >&2; exit 2 ;; esac
[ -f "$agent" ] || { echo "deploy: no $agent: run make BOARD=arndale-octa first" >&2; exit 1; }
[ -z "$token" ] || [ -r "$token" ] || { echo "deploy: cannot read --token-file $token" >&2; exit 1; }

settings() { # $1: the board's paths prefix (Linux: none; Android: /data/local/tmp/prof-agent)
	echo "# prof-agent service settings (board/prof-agent-run.sh lists them all)"
	echo "COLLECTOR=$collector"
	[ -n "$token" ] && echo "TOKEN_FILE=${1:-/etc/prof-agent}/token"
	echo "AGENT_ID=$agent_id"
	echo "GPU=$gpu"
	if [ -n "${1:-}" ]; then
		echo "AGENT=$1/prof-agent"
		echo "SPOOL=$1/spool"
		echo "LOG=$1/prof-agent.log"
	fi
}

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
if [ "$mode" != adb ]; then
	for l in libprofcl_layer.so libprofcl_preload.so libprofcl_bridge.so prof-clhelper; do
		[ -f "$cl_lib_dir/$l" ] || { echo "deploy: no $cl_lib_dir/$l: run make BOARD=arndale-octa first" >&2; exit 1; }
	done
	install -D -m 0755 "$agent" "$stage/usr/local/bin/prof-agent"
	install -d -m 0755 "$stage/usr/local/lib/profcl" "$stage/var/spool/prof-agent"
	install -m 0644 "$cl_lib_dir"/libprofcl_{layer,preload,bridge}.so "$stage/usr/local/lib/profcl/"
	install -m 0755 "$here/../prof-agent-run.sh" "$stage/usr/local/lib/profcl/prof-agent-run"
	install -m 0755 "$cl_lib_dir/prof-clhelper" "$stage/usr/local/lib/profcl/prof-clhelper"
	if [ "$service" = 1 ]; then
		install -D -m 0755 "$here/prof-agent.init" "$stage/etc/init.d/prof-agent"
		install -D -m 0644 "$here/prof-agent.service" "$stage/etc/systemd/system/prof-agent.service"
	fi
	[ -n "$token" ] && install -D -m 0600 "$token" "$stage/etc/prof-agent/token"
	if [ -n "$collector" ]; then
		install -d "$stage/etc/default"
		settings >"$stage/etc/default/prof-agent"
	fi
fi

case "$mode" in
root)
	mkdir -p "$target"
	[ -n "$collector" ] || [ -f "$target/etc/default/prof-agent" ] ||
		{ echo "deploy: --collector HOST:PORT is needed (no settings in $target yet)" >&2; exit 2; }
	tar -C "$stage" -cf - . | tar -C "$target" -xf - --no-same-owner
	if [ "$service" = 1 ]; then # sysvinit links, as update-rc.d prof-agent defaults makes them
		for n in 2 3 4 5; do mkdir -p "$target/etc/rc$n.d"; ln -sfn ../init.d/prof-agent "$target/etc/rc$n.d/S99prof-agent"; done
		for n in 0 1 6; do mkdir -p "$target/etc/rc$n.d"; ln -sfn ../init.d/prof-agent "$target/etc/rc$n.d/K01prof-agent"; done
		[ -d "$target/etc/systemd/system/multi-user.target.wants" ] || mkdir -p "$target/etc/systemd/system/multi-user.target.wants"
		ln -sfn ../prof-agent.service "$target/etc/systemd/system/multi-user.target.wants/prof-agent.service"
	fi
	echo "deploy: installed into $target; the board starts the service at boot (/etc/init.d/prof-agent start)"
	;;
ssh)
	ssh_opts=(-o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=5 -o ServerAliveCountMax=3)
	start=:
	if [ "$service" = 1 ]; then
		start='if [ -d /run/systemd/system ]; then systemctl daemon-reload && systemctl enable prof-agent &&
			 systemctl restart prof-agent; else { command -v update-rc.d >/dev/null && update-rc.d prof-agent defaults ||
			 true; } && /etc/init.d/prof-agent restart; fi'
	fi
	tar -C "$stage" -czf - . | timeout 180 ssh "${ssh_opts[@]}" "$target" \
		"tar -C / -xzf - --no-same-owner && { [ -f /etc/default/prof-agent ] ||
		 { echo 'deploy: no /etc/default/prof-agent: give --collector HOST:PORT' >&2; exit 2; }; } &&
		 /usr/local/bin/prof-agent --features && $start"
	;;
adb)
	# Android 4.2's apps are bionic: the glibc capture libraries and helper cannot load there (not
	# copied); `prof-agent run` on an app still counts and samples it.
	command -v adb >/dev/null || { echo "deploy: no adb (apt-get install adb)" >&2; exit 1; }
	d=/data/local/tmp/prof-agent
	settings "$d" >"$stage/prof-agent.conf"
	timeout 30 adb wait-for-device
	timeout 30 adb shell mkdir -p "$d/spool"
	timeout 120 adb push "$agent" "$d/prof-agent"
	timeout 30 adb push "$here/../prof-agent-run.sh" "$d/prof-agent-run"
	[ -n "$collector" ] && timeout 30 adb push "$stage/prof-agent.conf" "$d/prof-agent.conf"
	[ -n "$token" ] && timeout 30 adb push "$token" "$d/token" && timeout 30 adb shell chmod 600 "$d/token"
	timeout 30 adb shell chmod 755 "$d/prof-agent" "$d/prof-agent-run"
	timeout 60 adb shell "$d/prof-agent" --features
	if [ "$service" = 1 ]; then
		echo "Android 4.2: add this to the board's init.rc (in the boot image), then reboot:"
		cat "$here/prof-agent.rc"
	fi
	;;
esac
