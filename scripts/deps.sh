#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Install what the pipeline needs from Debian's registry.  Only installs
# what is missing, so a warm machine pays one dpkg query.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

pkgs=(
	qemu-system-x86 busybox-static bash-static ccache
	build-essential gcc-multilib bc bison flex libelf-dev libssl-dev
	cpio rsync kmod xz-utils python3 python3-ply python3-git perl
	gdb linux-perf
	libdw-dev zlib1g-dev liblzma-dev libbz2-dev libzstd-dev
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done
have=$(dpkg-query -W -f='${Version}' "$LINUX_PKG" 2>/dev/null || true)
[ "$have" = "$LINUX_PKG_VERSION" ] || missing+=("$LINUX_PKG")

[ ${#missing[@]} = 0 ] && exit 0

sudo=
[ "$(id -u)" = 0 ] || sudo=sudo
say "installing: ${missing[*]}"
$sudo apt-get update -q > /dev/null
export DEBIAN_FRONTEND=noninteractive
inst() { $sudo apt-get install -y -q --no-install-recommends "$@" > /dev/null; }

for i in "${!missing[@]}"; do
	if [ "${missing[$i]}" = "$LINUX_PKG" ]; then
		unset "missing[$i]"
		if ! inst "$LINUX_PKG=$LINUX_PKG_VERSION"; then
			warn "$LINUX_PKG $LINUX_PKG_VERSION is no longer served;" \
				"falling back to the newest 6.12, which this series was not tested on"
			inst "$LINUX_PKG"
		fi
	fi
done
[ ${#missing[@]} = 0 ] || inst "${missing[@]}"
