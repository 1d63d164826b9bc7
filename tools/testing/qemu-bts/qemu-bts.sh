#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build and locate a QEMU that models Branch Trace Store under TCG.
#
# Usage: qemu-bts.sh path | cpu | build
#
#   path   print the absolute path of the patched qemu-system-x86_64,
#          building it first if it is not in the cache, or
#          $QEMU_BTS_BINARY if that is set
#   cpu    print the -cpu argument that turns the model on
#   build  build it (if not cached) and say where it is
#
# The patch (qemu-bts.patch beside this script) applies to Debian 12's
# QEMU 7.2 source package, the version of the installed qemu-system-x86.
# The result is cached in ~/.cache/dbgtrace-qemu/<hash>/, where <hash>
# covers the patch, this script and that Debian version, so CI builds it
# once per change.  Only stdout carries the answer; build output goes to
# stderr and to build.log in the cache directory.
#
# Needs root (or sudo) for apt-get when packages are missing, and only
# Debian's archive: the source comes through a private source list, the
# system's apt configuration is left alone.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATCH=$HERE/qemu-bts.patch
CACHE_ROOT=${DBGTRACE_QEMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dbgtrace-qemu}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
SUITE=bookworm
# Vendor Intel (Linux's Intel PMU, DS and BTS code), family 6 with a
# model no quirk list names; no LA57 (see scripts/run-guest.sh).
CPU_ARG="max,la57=off,vendor=GenuineIntel,family=6,model=107,stepping=1,bts=on"

# libfdt-dev: QEMU 7.2's x86_64-softmmu target requires fdt (meson stops
# with "fdt not available but required by targets x86_64-softmmu").
BUILD_DEPS="dpkg-dev xz-utils patch gcc make ninja-build meson pkg-config
python3 libglib2.0-dev libpixman-1-dev zlib1g-dev libfdt-dev qemu-system-x86
seabios ipxe-qemu"

say() { printf 'qemu-bts: %s\n' "$*" >&2; }
die() { printf 'qemu-bts: error: %s\n' "$*" >&2; exit 1; }

as_root() {
	if [ "$(id -u)" = 0 ]; then
		"$@"
	elif command -v sudo > /dev/null; then
		sudo "$@"
	else
		die "need root for: $*"
	fi
}

install_deps() {
	local p missing=

	for p in $BUILD_DEPS; do
		dpkg-query -W -f='${Status}\n' "$p" 2> /dev/null |
			grep -q 'install ok installed' || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	say "installing:$missing"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y \
		--no-install-recommends $missing >&2 ||
		{ as_root apt-get update >&2 &&
		  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y \
			--no-install-recommends $missing >&2; }
}

# The Debian source version of the QEMU the harness runs (no binNMU suffix).
debian_version() {
	dpkg-query -W -f='${source:Version}' qemu-system-x86 2> /dev/null ||
		die "qemu-system-x86 is not installed"
}

cache_dir() {
	local key

	key=$( { sha256sum < "$PATCH"; sha256sum < "${BASH_SOURCE[0]}";
		 debian_version; } | sha256sum | cut -c1-16)
	echo "$CACHE_ROOT/$key"
}

# apt-get with a private source list and private state: nothing of the
# system's apt configuration or caches is written.
private_apt() {
	local dir=$1

	shift
	apt-get -o Dir::Etc::SourceList="$dir/sources.list" \
		-o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$dir/lists" \
		-o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
		-o Debug::NoLocking=1 "$@"
}

fetch_source() {
	local work=$1 ver=$2 apt=$1/apt

	mkdir -p "$apt/lists/partial"
	cat > "$apt/sources.list" <<-EOF
	deb-src $MIRROR $SUITE main
	deb-src $MIRROR $SUITE-updates main
	deb-src $SECURITY_MIRROR $SUITE-security main
	EOF
	private_apt "$apt" update >&2
	(cd "$work" && { private_apt "$apt" source "qemu=$ver" >&2 ||
		{ say "qemu $ver is gone from the archive; using the newest"
		  private_apt "$apt" source qemu >&2; }; })
}

# Build into the cache unless it is there; set DIR to the cache directory
# (computed once: the answer must name what was built).
build() {
	local dir ver work src log start

	[ -f "$PATCH" ] || die "missing $PATCH"
	install_deps
	dir=$(cache_dir)
	DIR=$dir
	if [ -x "$dir/bin/qemu-system-x86_64" ]; then
		return 0
	fi
	mkdir -p "$dir"
	exec 9> "$dir/.lock"
	flock 9
	if [ -x "$dir/bin/qemu-system-x86_64" ]; then
		return 0
	fi
	ver=$(debian_version)
	log=$dir/build.log
	say "building QEMU $ver with the BTS model in $dir (log: $log)"
	start=$(date +%s)
	work=$dir/work
	rm -rf "$work"
	mkdir -p "$work"
	{
		fetch_source "$work" "$ver"
		src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'qemu-*')
		[ -n "$src" ] || die "no QEMU source in $work"
		patch -d "$src" -p1 --no-backup-if-mismatch < "$PATCH"
		mkdir -p "$src/b"
		(cd "$src/b" && ../configure --target-list=x86_64-softmmu \
			--without-default-features --without-default-devices \
			--with-devices-x86_64=bts \
			--disable-docs --disable-tools --disable-user \
			--disable-werror \
			--with-pkgversion="Debian $ver, dbgtrace bts" \
			--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu)
		ninja -C "$src/b" -j "$(nproc)" qemu-system-x86_64
		mkdir -p "$dir/bin.new"
		cp "$src/b/qemu-system-x86_64" "$dir/bin.new/"
	} > "$log" 2>&1 || { tail -n 40 "$log" >&2; die "build failed, see $log"; }
	rm -rf "$dir/bin"
	mv "$dir/bin.new" "$dir/bin"
	echo "$ver" > "$dir/debian-version"
	rm -rf "$work"
	say "built in $(( $(date +%s) - start ))s"
}

case ${1:-} in
path)
	# A model QEMU built elsewhere (a QEMU tree with these patches, while
	# working on them) instead of the cached one.
	if [ -n "${QEMU_BTS_BINARY:-}" ]; then
		[ -x "$QEMU_BTS_BINARY" ] || die "QEMU_BTS_BINARY=$QEMU_BTS_BINARY is not executable"
		echo "$QEMU_BTS_BINARY"
		exit 0
	fi
	build
	echo "$DIR/bin/qemu-system-x86_64"
	;;
cpu)
	echo "$CPU_ARG"
	;;
build)
	build
	say "$DIR/bin/qemu-system-x86_64"
	;;
*)
	echo "usage: $0 path|cpu|build" >&2
	exit 2
	;;
esac
