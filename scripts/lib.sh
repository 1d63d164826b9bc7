# SPDX-License-Identifier: GPL-2.0
# Shared settings for the harness scripts; sourced, never run.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$TOP/build}

# The base this series was last tested on.  deps.sh falls back to the
# newest 6.12 with a warning when Debian no longer serves this one.
LINUX_PKG=linux-source-6.12
LINUX_PKG_VERSION=6.12.117-1~deb12u1
LINUX_TARBALL=/usr/src/linux-source-6.12.tar.xz

# Top-level directories of ours that are laid over the kernel tree.
# scripts/ and Makefile at our root are the harness, not kernel files.
OVERLAY_DIRS="arch block Documentation drivers fs include init kernel lib mm samples security tools virt"

# SRC is the patched tree, always; KSRC is the tree the kernel is built
# from, which is SRC except for BASE=1.
SRC=$BUILD/linux
KSRC=$SRC
if [ "${BASE:-0}" = 1 ]; then
	# The unpatched base, for validation and benchmarks against it.
	# kbuild with O= writes nothing into the source tree, so building
	# the pristine unpacked base in place is safe.
	KSRC=$BUILD/base/$(cat "$BUILD/base-version" 2>/dev/null ||
		echo "$LINUX_PKG_VERSION")/linux-source-6.12
	OBJ=$BUILD/obj-base
	FLAVOUR=base
elif [ "${FLEXIBLE:-0}" = 1 ]; then
	# The base plus only the patches that make breakpoints flexible
	# (flexible_patches below): the other kernel of the breakpoint
	# benchmark's goal, which compares it with the base.
	SRC=$BUILD/linux-flexible
	KSRC=$SRC
	OBJ=$BUILD/obj-flexible
	FLAVOUR=flexible
elif [ "${DEBUG:-0}" = 1 ]; then
	OBJ=$BUILD/obj-debug
	FLAVOUR=debug
else
	OBJ=$BUILD/obj
	FLAVOUR=normal
fi
LOGS=$BUILD/logs/$FLAVOUR

# Fixed build identity, so ccache hits across clones and rebuilds.
export KBUILD_BUILD_TIMESTAMP="2024-11-17 00:00:00 UTC"
export KBUILD_BUILD_USER=dbgtrace
export KBUILD_BUILD_HOST=qemu
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$TOP")}
export CCACHE_DIR=${CCACHE_DIR:-$HOME/.cache/ccache}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-5G}

# Debian's python3 and perl first: checkpatch's spdxcheck.py wants
# python3-ply and python3-git, which deps.sh installs for Debian's python.
export PATH=/usr/bin:/bin:$PATH

JOBS=${JOBS:-$(nproc)}

say() { printf '==> %s\n' "$*" >&2; }
warn() { printf 'WARNING: %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# The QEMU BTS model: test infrastructure kept in this repository, but a
# QEMU change, not a kernel file.  It stays out of the kernel tree and of
# the exported kernel series; series.sh exports it as a QEMU series.
MODEL_DIR=tools/testing/qemu-bts

# Files of ours that belong in the kernel tree: tracked ones plus new
# files git does not ignore, so uncommitted work is built too.
overlay_files() {
	local d
	(cd "$TOP" && for d in $OVERLAY_DIRS; do
		if [ -d "$d" ]; then
			git ls-files -co --exclude-standard -- "$d"
		fi
	done) | grep -v "^$MODEL_DIR/" | sort -u
}

# The patches of patches/series, in order, comments and blanks dropped.
series_patches() {
	[ -f "$TOP/patches/series" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$TOP/patches/series" | grep -v '^$' || true
}

# The patches of the flexible kernel: flexible breakpoints themselves,
# without their tests and without the rest of the series.
flexible_patches() {
	series_patches | grep -x -E '(perf|x86)-hw_breakpoint-flexible\.patch|perf-hw_breakpoint-task-counters\.patch' || true
}

# The patches laid over the base in $SRC.
tree_patches() {
	if [ "$FLAVOUR" = flexible ]; then
		flexible_patches
	else
		series_patches
	fi
}

kmake() {
	make -C "$KSRC" O="$OBJ" -j"$JOBS" CC="ccache gcc" HOSTCC="ccache gcc" "$@"
}
