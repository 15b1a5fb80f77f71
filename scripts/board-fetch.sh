#!/usr/bin/env bash
# Fetch and unpack the Debian packages a cross board needs at build time, without
# installing them: the guest kernel (for the QEMU boards and, for arm64, its BTF as
# the CO-RE type source of the BPF programs) and the static busybox of the guest.
#
#   board-fetch.sh kernel  DEB_ARCH META_PKG OUTDIR   -> OUTDIR/{vmlinuz,release,modules/,config}
#                                                        and OUTDIR/vmlinux.btf (arm64: from the Image)
#   board-fetch.sh busybox DEB_ARCH OUTDIR            -> OUTDIR/busybox
#
# Packages come from Debian's mirror with `apt-get download` (multiarch lists: run
# `make deps BOARD=<board>` once), are kept in OUTDIR/../dl and unpacked with dpkg-deb -x.
# Idempotent: a stamp names the package file unpacked last; nothing is fetched again
# while it is current.
set -euo pipefail

die() {
	echo "board-fetch: $*" >&2
	exit 1
}

# Resolve a (meta) package to a versioned linux-image-<abi>-<flavour> package.
resolve_kernel() {
	local arch=$1 meta=$2 dep
	if [[ $meta =~ ^linux-image-[0-9] ]]; then
		echo "$meta"
		return
	fi
	dep=$(apt-cache depends "$meta:$arch" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^:]*\).*/\1/p' | head -n1)
	[ -n "$dep" ] || die "cannot resolve $meta:$arch (no multiarch package lists? run: make deps BOARD=<board>)"
	echo "$dep"
}

# download_all DL PKG:ARCH...: the same for a list, the .deb paths one a line in the list's order,
# with one apt-cache policy and one apt-get download for all that are missing (issue 43: one of
# each per package took ~4.6 s of CPU per package, 22 packages for PoCL)
download_all() {
	local dl=$1 line cur='' spec ver file
	shift
	local -A cand=()
	while IFS= read -r line; do # "NAME[:ARCH]:" then "  Candidate: VERSION"
		if [[ $line =~ ^([^[:space:]]+):$ ]]; then
			cur=${BASH_REMATCH[1]}
		elif [[ $line =~ ^[[:space:]]+Candidate:[[:space:]]+(.+)$ ]] && [ -n "$cur" ]; then
			cand[$cur]=${BASH_REMATCH[1]}
			cur=''
		fi
	done < <(apt-cache policy "$@" 2>/dev/null)
	local files=() missing=()
	for spec in "$@"; do
		ver=${cand[$spec]:-${cand[${spec%%:*}]:-}} # an :all package is listed by its name alone
		[ -n "$ver" ] && [ "$ver" != "(none)" ] || die "no candidate for $spec (run: make deps BOARD=<board>)"
		file=$(ls "$dl"/"${spec%%:*}"_*"${ver##*:}"_"${spec##*:}".deb 2>/dev/null | head -n1 || true)
		if [ -z "$file" ]; then
			echo "  FETCH   $spec ($ver)" >&2
			missing+=("$spec=$ver")
		fi
		files+=("${spec%%:*}_*${ver##*:}_${spec##*:}.deb")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		(cd "$dl" && timeout 600 apt-get download -q -o APT::Sandbox::User=root "${missing[@]}" >/dev/null) ||
			die "apt-get download ${missing[*]} failed"
	fi
	for file in "${files[@]}"; do
		# shellcheck disable=SC2086 # the pattern is meant to glob
		spec=$(ls "$dl"/$file 2>/dev/null | head -n1 || true)
		[ -n "$spec" ] || die "downloaded but cannot find $dl/$file"
		echo "$spec"
	done
}

# download PKG:ARCH into DL, print the .deb path
download() { download_all "$2" "$1"; }

# Raw BTF (.BTF section) from an uncompressed arm64 Image: find the BTF header
# (magic 0xeB9F, version 1, hdr_len 24, type_off 0) and cut header + types + strings.
extract_btf() {
	python3 - "$1" "$2" <<'EOF'
import struct, sys
data = open(sys.argv[1], 'rb').read()
if data[:2] == b'\x1f\x8b':
    import gzip
    data = gzip.decompress(data)
sig = b'\x9f\xeb\x01\x00\x18\x00\x00\x00\x00\x00\x00\x00'
best = None
i = data.find(sig)
while i >= 0:
    _, _, _, hl, to, tl, so, sl = struct.unpack_from('<HBBIIIII', data, i)
    end = i + hl + so + sl
    if so >= tl and end <= len(data) and (best is None or tl > best[1]):
        best = (i, tl, end)
    i = data.find(sig, i + 1)
if best is None:
    sys.exit('no BTF in ' + sys.argv[1])
open(sys.argv[2], 'wb').write(data[best[0]:best[2]])
EOF
}

what=${1:-}
case "$what" in
kernel)
	[ $# -eq 4 ] || die "usage: $0 kernel DEB_ARCH META_PKG OUTDIR"
	arch=$2 meta=$3 out=$4
	dl=$(dirname "$out")/dl
	mkdir -p "$dl" "$out"
	pkg=$(resolve_kernel "$arch" "$meta")
	deb=$(download "$pkg:$arch" "$dl")
	if [ "$(cat "$out/.stamp" 2>/dev/null)" = "$(basename "$deb")" ]; then
		exit 0
	fi
	echo "  UNPACK  $(basename "$deb")" >&2
	rm -rf "$out/root" && mkdir -p "$out/root"
	dpkg-deb -x "$deb" "$out/root"
	rel=$(ls "$out/root/lib/modules" | head -n1)
	[ -n "$rel" ] && [ -f "$out/root/boot/vmlinuz-$rel" ] || die "$deb: no /boot/vmlinuz-<release>"
	echo "$rel" >"$out/release"
	cp "$out/root/boot/vmlinuz-$rel" "$out/vmlinuz"
	cp "$out/root/boot/config-$rel" "$out/config"
	rm -rf "$out/modules" && mv "$out/root/lib/modules/$rel" "$out/modules"
	rm -rf "$out/root"
	rm -f "$out/vmlinux.btf"
	if [ "$arch" = arm64 ] && grep -q '^CONFIG_DEBUG_INFO_BTF=y' "$out/config"; then
		extract_btf "$out/vmlinuz" "$out/vmlinux.btf" || die "no BTF found in $out/vmlinuz"
	fi
	basename "$deb" >"$out/.stamp"
	;;
busybox)
	[ $# -eq 3 ] || die "usage: $0 busybox DEB_ARCH OUTDIR"
	arch=$2 out=$3
	dl=$(dirname "$out")/dl
	mkdir -p "$dl" "$out"
	deb=$(download "busybox-static:$arch" "$dl")
	if [ "$(cat "$out/.busybox-stamp" 2>/dev/null)" = "$(basename "$deb")" ] && [ -x "$out/busybox" ]; then
		exit 0
	fi
	tmp=$(mktemp -d)
	dpkg-deb -x "$deb" "$tmp"
	cp "$tmp/bin/busybox" "$out/busybox"
	rm -rf "$tmp"
	basename "$deb" >"$out/.busybox-stamp"
	;;
pocl)
	# Debian's PoCL (CPU OpenCL), clinfo and clpeak of the board's architecture with the libraries they
	# load, unpacked into OUTDIR as a root (usr/lib/<triplet>, etc/OpenCL/vendors/pocl.icd) for
	# qemu-user (scripts/board-opencl.sh). PoCL compiles kernels in-process with libclang-cpp15 and
	# libLLVM-15 of that architecture, from its headers in libpocl2-common (architecture all) and
	# its kernel library bitcode (libpocl2); the clang-15 program itself is not needed.
	[ $# -eq 3 ] || die "usage: $0 pocl DEB_ARCH OUTDIR"
	arch=$2 out=$3
	dl=$(dirname "$out")/dl
	mkdir -p "$dl" "$out"
	specs=()
	for p in pocl-opencl-icd libpocl2 clinfo clpeak ocl-icd-libopencl1 libhwloc15 libllvm15 libclang-cpp15 \
		libstdc++6 libgcc-s1 libffi8 libedit2 libz3-4 libtinfo6 libxml2 zlib1g libicu72 liblzma5 libbsd0 \
		libmd0 libudev1; do
		specs+=("$p:$arch")
	done
	debs_list=$(download_all "$dl" "${specs[@]}" libpocl2-common:all) || exit 1
	mapfile -t debs <<<"$debs_list"
	stamp=$(printf '%s\n' "${debs[@]}" | xargs -n1 basename | sort | md5sum | cut -c1-32)
	if [ "$(cat "$out/.pocl-stamp" 2>/dev/null)" = "$stamp" ]; then
		exit 0
	fi
	for d in "${debs[@]}"; do dpkg-deb -x "$d" "$out"; done
	echo "$stamp" >"$out/.pocl-stamp"
	;;
*)
	die "usage: $0 kernel DEB_ARCH META_PKG OUTDIR | busybox DEB_ARCH OUTDIR | pocl DEB_ARCH OUTDIR"
	;;
esac
