#!/usr/bin/env bash
# Build the emulated board's initramfs (gzip'd newc cpio, no root or mknod needed):
#   /init (scripts/board-guest-init.sh), /bin/busybox (Debian busybox-static), /bin/agent
#   (the stripped static agent), /bin/busy (static busy-loop workload), /lib/modules/*.ko
#   (the virtio-mmio network modules of the guest kernel and their dependencies).
# With FAKEGPU_AGENT and SCRIPT also /bin/agent-fakegpu and /etc/fake_kbase.script (the
# Mali counter test on a fake device, mk/board.mk); with T6XX_SCRIPT also
# /etc/fake_kbase_t6xx.script (the t6xx r3p0 generation, issue 29).
# Usage: board-initramfs.sh OUT.cpio.gz BUSYBOX AGENT BUSY KERNEL_MODULES_DIR [FAKEGPU_AGENT SCRIPT [T6XX_SCRIPT]]
set -euo pipefail
[ $# -eq 5 ] || [ $# -eq 7 ] || [ $# -eq 8 ] ||
	{ echo "usage: $0 OUT.cpio.gz BUSYBOX AGENT BUSY KERNEL_MODULES_DIR [FAKEGPU_AGENT SCRIPT [T6XX_SCRIPT]]" >&2; exit 2; }
out=$1 busybox=$2 agent=$3 busy=$4 mods=$5
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,tmp,lib/modules}
install -m 0755 scripts/board-guest-init.sh "$root/init"
install -m 0755 "$busybox" "$root/bin/busybox"
install -m 0755 "$agent" "$root/bin/agent"
install -m 0755 "$busy" "$root/bin/busy"
# ---- issue 30: the hardware-counter loop of known length (mk/board.mk sets PMU_LOOP)
if [ -n "${PMU_LOOP:-}" ]; then
	install -m 0755 "$PMU_LOOP" "$root/bin/pmu_loop"
fi
if [ -n "${LINUX34:-}" ]; then # the Linux 3.4 personality (armhf)
	install -m 0755 "$LINUX34" "$root/bin/linux34"
fi
if [ -n "${SNAPSHOT_CHECK:-}" ]; then # issue 36: the trace snapshot in the guest's kernel
	install -m 0755 "$SNAPSHOT_CHECK" "$root/bin/snapshot_check"
fi
if [ -n "${ACC_DIR:-}" ]; then # issue 36: the sample kernels of scripts/board-accuracy.sh, and their run
	mkdir -p "$root/bin/acc"
	install -m 0755 "$ACC_DIR"/* "$root/bin/acc/"
	install -m 0755 scripts/board-guest-accuracy.sh "$root/bin/accuracy"
fi
chmod 0755 "$root" # mktemp -d made / 0700: the guest's non-root user could not run /bin/sh
# ---- end issue 30
if [ $# -ge 7 ]; then
	mkdir -p "$root/etc"
	install -m 0755 "$6" "$root/bin/agent-fakegpu"
	install -m 0644 "$7" "$root/etc/fake_kbase.script"
	[ $# -eq 8 ] && install -m 0644 "$8" "$root/etc/fake_kbase_t6xx.script"
fi
# The virtio-mmio network drivers and what they depend on (the depends= of .modinfo),
# in load order; /lib/modules/order lists them for /init. Built-in ones are not there.
order=()
add_module() {
	local m=$1 f d
	for d in "${order[@]}"; do [ "$d" = "$m" ] && return; done
	f=$(find "$mods" -name "$m.ko" | head -n1)
	[ -n "$f" ] || return 0
	for d in $(strings "$f" | sed -n 's/^depends=//p' | tr ',' ' '); do add_module "$d"; done
	cp "$f" "$root/lib/modules/"
	order+=("$m")
}
add_module virtio_mmio
add_module virtio_net
printf '%s\n' "${order[@]}" >"$root/lib/modules/order"
if [ ! -f "$root/lib/modules/virtio_net.ko" ] && ! grep -q '^CONFIG_VIRTIO_NET=y' "$mods/../config" 2>/dev/null; then
	echo "board-initramfs: virtio_net.ko not found under $mods" >&2
	exit 1
fi
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -6 -n >"$out.tmp"
mv "$out.tmp" "$out"
