#!/usr/bin/env bash
# Deploy the static agent to an Arndale Octa, over ssh (Linux userland) or adb (Android 4.2).
#
#   board/arndale-octa/deploy.sh ssh USER@BOARD [--collector HOST:PORT] [--service]
#   board/arndale-octa/deploy.sh adb [--collector HOST:PORT] [--service]
#
# ssh: copies build/arndale-octa/agent.stripped to /usr/local/bin/prof-agent; --service also
#      installs the sysvinit script (prof-agent.init -> /etc/init.d/prof-agent) and writes
#      /etc/default/prof-agent with the collector address, then enables and starts it.
# adb: pushes it to /data/local/tmp/prof-agent (needs `adb root`, or a rooted shell); --service
#      prints the init.rc snippet to add (prof-agent.rc): Android 4.2 has no runtime service install.
# Build first: make BOARD=arndale-octa. Every remote step has a time bound.
set -euo pipefail
# usage: the comment block above, up to its first line that is not a comment
usage() { sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"; }
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
agent=${AGENT:-$top/build/arndale-octa/agent.stripped}
mode=${1:-}
case "$mode" in
-h | --help) usage; exit 0 ;;
ssh | adb) ;;
'') usage >&2; exit 2 ;;
*) echo "deploy: say ssh USER@BOARD or adb (got '$mode'; --help for more)" >&2; exit 2 ;;
esac
shift
target=
if [ "$mode" = ssh ]; then
	target=${1:?ssh needs USER@BOARD}
	shift
fi
collector='' service=0
while [ $# -gt 0 ]; do
	case "$1" in
	--collector) collector=${2:?}; shift 2 ;;
	--service) service=1; shift ;;
	*) echo "deploy: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ -f "$agent" ] || { echo "deploy: no $agent: run make BOARD=arndale-octa first" >&2; exit 1; }

case "$mode" in
ssh)
	ssh_opts=(-o ConnectTimeout=10 -o BatchMode=yes -o ServerAliveInterval=5 -o ServerAliveCountMax=3)
	timeout 120 scp "${ssh_opts[@]}" "$agent" "$target:/tmp/prof-agent.new"
	timeout 60 ssh "${ssh_opts[@]}" "$target" \
		'install -m 0755 /tmp/prof-agent.new /usr/local/bin/prof-agent && rm -f /tmp/prof-agent.new &&
		 /usr/local/bin/prof-agent --features'
	if [ "$service" = 1 ]; then
		[ -n "$collector" ] || { echo "deploy: --service needs --collector HOST:PORT" >&2; exit 2; }
		timeout 60 scp "${ssh_opts[@]}" "$here/prof-agent.init" "$target:/tmp/prof-agent.init"
		timeout 60 ssh "${ssh_opts[@]}" "$target" \
			"install -m 0755 /tmp/prof-agent.init /etc/init.d/prof-agent && rm -f /tmp/prof-agent.init &&
			 printf 'COLLECTOR=%s\n' '$collector' >/etc/default/prof-agent &&
			 { command -v update-rc.d >/dev/null && update-rc.d prof-agent defaults || true; } &&
			 /etc/init.d/prof-agent restart"
	fi
	;;
adb)
	command -v adb >/dev/null || { echo "deploy: no adb (apt-get install adb)" >&2; exit 1; }
	timeout 30 adb wait-for-device
	timeout 120 adb push "$agent" /data/local/tmp/prof-agent
	timeout 30 adb shell chmod 755 /data/local/tmp/prof-agent
	timeout 60 adb shell /data/local/tmp/prof-agent --features
	if [ "$service" = 1 ]; then
		echo "Android 4.2: add this to the board's init.rc (in the boot image), then reboot:"
		sed "s/COLLECTOR_HOST:PORT/${collector:-COLLECTOR_HOST:PORT}/" "$here/prof-agent.rc"
	fi
	;;
*)
	echo "deploy: mode is ssh or adb" >&2
	exit 2
	;;
esac
