#!/usr/bin/env bash
# A fresh Debian 12 machine in a folder, to check the README's two commands as a new user
# would meet them (issue 23). Two kinds:
#   standard  what a stock install has: debootstrap's default (Priority required + important)
#             then every Priority: standard package with its Recommends, as tasksel's
#             "standard system utilities" installs them (man-db, apt-listchanges, ...)
#   minbase   debootstrap --variant=minbase: Essential and required only
#
# Usage:
#   fresh-root.sh make KIND ROOT            build the root (needs debootstrap and the network)
#   fresh-root.sh run ROOT REPO [CMD...]    in ROOT as root: apt-get install make git, git clone
#                                           REPO (a path or URL; a path is bind-mounted), then each
#                                           CMD (default: "make demo" "make check"), timed
#   fresh-root.sh shell ROOT                a shell in ROOT with /proc, /sys, /dev mounted
#   fresh-root.sh umount ROOT               undo the mounts (run does it on exit)
#
# Each CMD's output goes to ROOT/fresh-logs/N.log and a line "fresh-root: CMD: rc R in S s" to
# standard output; the exit status is the first failing command's. The profiler's tests need
# the host's kernel interfaces, so /proc, /sys (BPF, perf, tracefs), /dev and /dev/pts are
# bind-mounted; networking is the host's (loopback for the tests, the mirror for apt).
set -euo pipefail

MIRROR=${FRESH_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm

die() { echo "fresh-root: $*" >&2; exit 2; }
MOUNTED=
trap '[ -z "$MOUNTED" ] || do_umount "$MOUNTED"' EXIT
[ "$(id -u)" -eq 0 ] || die "run as root (debootstrap and chroot)"

mounts=(proc sys dev dev/pts)
do_mount() {
	local root=$1 m
	for m in "${mounts[@]}"; do
		mkdir -p "$root/$m"
		mountpoint -q "$root/$m" || mount --rbind "/$m" "$root/$m"
		mount --make-rslave "$root/$m"
	done
	cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
}
do_umount() {
	local root=$1 i
	for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
		mountpoint -q "$root/${mounts[i]}" && umount -R "$root/${mounts[i]}" || true
	done
	if mountpoint -q "$root/src"; then umount "$root/src"; fi
}
in_root() { local root=$1; shift; chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

# Priority: standard packages of the root's own package lists (native arch and all).
standard_packages() {
	local root=$1
	cat "$root"/var/lib/apt/lists/*_Packages | awk '
		/^Package:/ { p = $2 } /^Architecture:/ { a = $2 }
		/^Priority: standard/ { s = 1 }
		/^$/ { if (s && (a == arch || a == "all")) print p; s = 0 }
		END { if (s && (a == arch || a == "all")) print p }' arch="$(dpkg --print-architecture)" | sort -u
}

cmd_make() {
	local kind=$1 root=$2
	command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install debootstrap"
	[ ! -e "$root" ] || [ -z "$(ls -A "$root")" ] || die "$root exists and is not empty"
	case "$kind" in
	minbase) debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR" ;;
	standard) debootstrap "$SUITE" "$root" "$MIRROR" ;;
	*) die "kind '$kind': standard or minbase" ;;
	esac
	# As the installer writes it: the release, its updates and the security archive.
	cat >"$root/etc/apt/sources.list" <<-EOF
	deb $MIRROR $SUITE main
	deb $MIRROR $SUITE-updates main
	deb http://deb.debian.org/debian-security $SUITE-security main
	EOF
	do_mount "$root"
	MOUNTED=$root
	in_root "$root" apt-get update -qq
	if [ "$kind" = standard ]; then
		mapfile -t std < <(standard_packages "$root")
		[ ${#std[@]} -gt 20 ] || die "only ${#std[@]} Priority: standard packages found in the lists"
		echo "fresh-root: installing ${#std[@]} Priority: standard packages (with Recommends)"
		in_root "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${std[@]}" >/dev/null
	fi
	in_root "$root" apt-get upgrade -y -qq >/dev/null
	echo "fresh-root: $kind root in $root: $(in_root "$root" dpkg-query -W -f='${Status}\n' |
		grep -c 'install ok installed') packages installed$(in_root "$root" sh -c \
		'command -v mandb >/dev/null && echo ", man-db among them"')"
}

cmd_run() {
	local root=$1 repo=$2; shift 2
	[ $# -gt 0 ] || set -- "make demo" "make check"
	[ -x "$root/usr/bin/apt-get" ] || die "$root is not a root made by '$0 make'"
	do_mount "$root"
	MOUNTED=$root
	local url=$repo
	if [ -d "$repo" ]; then
		mkdir -p "$root/src"
		mount --bind "$(cd "$repo" && pwd)" "$root/src"
		url=/src
	fi
	local logs=$root/fresh-logs n=0 rc=0 first=0 t0
	mkdir -p "$logs"
	in_root "$root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq make git >"$logs/0.log" 2>&1 ||
		die "apt-get install make git failed: $logs/0.log"
	in_root "$root" rm -rf /root/profiler
	in_root "$root" git -c safe.directory="*" clone -q --no-hardlinks "$url" /root/profiler >>"$logs/0.log" 2>&1 ||
		die "git clone $repo failed: $logs/0.log"
	echo "fresh-root: cloned $(in_root "$root" git -C /root/profiler log -1 --format='%h %s' | cut -c1-72)"
	for c in "$@"; do
		n=$((n + 1))
		t0=$(date +%s)
		in_root "$root" sh -c "cd /root/profiler && $c" >"$logs/$n.log" 2>&1 || rc=$?
		echo "fresh-root: $c: rc $rc in $(( $(date +%s) - t0 )) s (log: $logs/$n.log)"
		tail -n 3 "$logs/$n.log" | sed 's/^/    /'
		[ $rc -ne 0 ] && [ $first -eq 0 ] && first=$rc
		rc=0
	done
	return $first
}

case "${1:-}" in
make) [ $# -eq 3 ] || die "usage: $0 make standard|minbase ROOT"; cmd_make "$2" "$3" ;;
run) [ $# -ge 3 ] || die "usage: $0 run ROOT REPO [CMD...]"; shift; cmd_run "$@" ;;
shell) [ $# -eq 2 ] || die "usage: $0 shell ROOT"; do_mount "$2"; MOUNTED=$2; in_root "$2" bash ;;
umount) [ $# -eq 2 ] || die "usage: $0 umount ROOT"; do_umount "$2" ;;
*) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
