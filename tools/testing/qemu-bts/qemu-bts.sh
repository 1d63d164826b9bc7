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
# The patches (patches/*.patch beside this script, applied in name order)
# apply to Debian 12's QEMU source package $QEMU_DEBIAN_VERSION, the version
# they were made against; the script stops if the archive no longer has
# it.  The result is cached in ~/.cache/dbgtrace-qemu/<hash>/, where <hash>
# covers every patch, this script and that Debian version, so CI builds it
# once per change.  Only stdout carries the answer; build output goes to
# stderr and to build.log in the cache directory.
#
# Needs root (or sudo) for apt-get when packages are missing, and only
# Debian's archive, at the mirrors the machine's apt configuration names
# (or $DEBIAN_MIRROR and $DEBIAN_SECURITY_MIRROR): the source comes
# through a private source list, the system's apt configuration is left
# alone.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PATCH_DIR=$HERE/patches
CACHE_ROOT=${DBGTRACE_QEMU_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dbgtrace-qemu}
SUITE=bookworm
# The Debian source version the patches were made against.
QEMU_DEBIAN_VERSION=1:7.2+dfsg-7+deb12u18
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

# The patches, in the order they apply (name order, C collation).
patches() {
	local p

	for p in "$PATCH_DIR"/*.patch; do
		[ -f "$p" ] || continue
		printf '%s\n' "$p"
	done | LC_ALL=C sort
}

debian_version() {
	echo "$QEMU_DEBIAN_VERSION"
}

cache_dir() {
	local key p

	key=$( { while read -r p; do
			 printf '%s ' "$(basename "$p")"; sha256sum < "$p"
		 done < <(patches)
		 sha256sum < "${BASH_SOURCE[0]}"
		 debian_version; } | sha256sum | cut -c1-16)
	echo "$CACHE_ROOT/$key"
}

# The Debian mirror serving RELEASE, from the machine's apt configuration
# (sources.list or deb822 .sources alike).
apt_mirror() {
	apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 2> /dev/null |
		awk -v rel="$1" '$2 == rel { print $1; exit }'
}

mirrors() {
	MIRROR=${DEBIAN_MIRROR:-$(apt_mirror "$SUITE")}
	SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-$(apt_mirror "$SUITE-security")}
	[ -n "$MIRROR" ] ||
		die "apt has no source for $SUITE; configure one or set DEBIAN_MIRROR"
	[ -n "$SECURITY_MIRROR" ] ||
		die "apt has no source for $SUITE-security; configure one or set DEBIAN_SECURITY_MIRROR"
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

	mirrors
	mkdir -p "$apt/lists/partial"
	cat > "$apt/sources.list" <<-EOF
	deb-src $MIRROR $SUITE main
	deb-src $MIRROR $SUITE-updates main
	deb-src $SECURITY_MIRROR $SUITE-security main
	EOF
	private_apt "$apt" update >&2 || die "apt-get update of $MIRROR failed"
	# Only the version the patches were made for: any other would need
	# the patches rebased, so stop rather than build something else.
	(cd "$work" && private_apt "$apt" source --only-source "qemu=$ver" >&2) ||
		die "cannot fetch Debian's qemu $ver source from $MIRROR or $SECURITY_MIRROR (gone from the archive?); the patches in $PATCH_DIR were made for that version: rebase them and update QEMU_DEBIAN_VERSION"
}

# Build into the cache unless it is there; set DIR to the cache directory
# (computed once: the answer must name what was built).
build() {
	local dir ver work src log start p

	[ -n "$(patches)" ] || die "no patches in $PATCH_DIR"
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
	# A subshell, so that a die inside ends up in the log and below;
	# set -e does not apply inside it (it is the left side of ||), hence
	# the explicit exits.
	(
		fetch_source "$work" "$ver" || exit 1
		src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'qemu-*')
		[ -n "$src" ] && [ "$(printf '%s\n' "$src" | wc -l)" = 1 ] ||
			die "expected one QEMU source tree in $work"
		while read -r p; do
			echo "applying $(basename "$p")"
			patch -d "$src" -p1 --no-backup-if-mismatch --batch < "$p" ||
				die "$(basename "$p") does not apply"
		done < <(patches)
		mkdir -p "$src/b"
		(cd "$src/b" && ../configure --target-list=x86_64-softmmu \
			--without-default-features --without-default-devices \
			--with-devices-x86_64=bts \
			--disable-docs --disable-tools --disable-user \
			--disable-werror \
			--with-pkgversion="Debian $ver, dbgtrace bts" \
			--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu) ||
			exit 1
		ninja -C "$src/b" -j "$(nproc)" qemu-system-x86_64 || exit 1
		mkdir -p "$dir/bin.new"
		cp "$src/b/qemu-system-x86_64" "$dir/bin.new/"
	) > "$log" 2>&1 || { tail -n 40 "$log" >&2; die "build failed, see $log"; }
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
