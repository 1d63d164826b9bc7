#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the "clients" layer of the guest: Debian's own gdb and perf,
# unmodified, with every library ldd lists for them, the parts of
# Python gdb imports at startup, gdb's data directory, and the test
# program (prog.c, built -O0 -g -static) with the addresses of its
# globals from nm.  Output: $BUILD/clients/clients.cpio.xz, a cpio
# archive laid at / in the guest by /tests/clients.sh (see README).
#
# Rebuilt only when an input changed (the binaries, libraries and
# modules it copies, prog.c or this script): a warm run costs
# two ldd calls and one gdb startup.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"

here=$TOP/scripts/clients
out=$BUILD/clients
layer=$out/layer
archive=$out/clients.cpio.xz
mkdir -p "$out"
# One builder at a time (make check DEBUG=1 beside a plain one).
exec 9> "$out/.lock"
flock 9

command -v gdb > /dev/null || die "gdb is missing; run scripts/deps.sh"

is_elf() {
	[ "$(head -c 4 "$1" 2> /dev/null | od -An -c | tr -d ' ')" = '177ELF' ]
}

# Debian's /usr/bin/perf is either the binary of linux-perf itself
# (bookworm's 6.1, which diverts linux-base's wrapper) or a wrapper
# script that execs /usr/bin/perf_VERSION: copy the real binary.
perf_binary() {
	local p
	if is_elf /usr/bin/perf; then
		echo /usr/bin/perf
		return
	fi
	for p in $(ls -d /usr/bin/perf_[0-9]* 2> /dev/null | sort -V -r); do
		if is_elf "$p"; then
			echo "$p"
			return
		fi
	done
	die "no perf binary (install linux-perf; scripts/deps.sh does)"
}
perf=$(perf_binary)

# The files of the layer, as absolute host paths.  Libraries keep the
# path ldd gives (/lib/x86_64-linux-gnu/..., /lib64/ld-linux...), the
# guest having no merged /usr.
files=$(mktemp)
trap 'rm -f "$files"' EXIT
{
	echo /usr/bin/gdb
	echo "$perf"
	ldd /usr/bin/gdb "$perf" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\/.*[^:]$/ { print $1 }'
	# Not needed to start, but warned about when missing: gdb loads
	# libthread_db for a threaded inferior and converts names with
	# glibc's iconv modules; Python moves the C locale to C.UTF-8; the
	# guest's TERM is linux.
	ls /lib/x86_64-linux-gnu/libthread_db.so.1 \
		/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache \
		/usr/lib/x86_64-linux-gnu/gconv/UTF-32.so \
		/usr/lib/x86_64-linux-gnu/gconv/ISO8859-1.so \
		/lib/terminfo/d/dumb /lib/terminfo/l/linux 2> /dev/null || true
	find /usr/lib/locale/C.utf8 -type f 2> /dev/null || true
	# gdb cannot start without Python's stdlib (it exits "Python not
	# initialized"): the modules a session like the guest's imports,
	# in the guest's environment (no locale), with their bytecode.
	env -i PATH=/usr/bin:/bin HOME=/tmp gdb -nx -batch \
		-ex 'python import sys
for m in list(sys.modules.values()):
    for a in ("__file__", "__cached__"):
        f = getattr(m, a, None)
        if f:
            print(f)' 2> /dev/null | grep '^/usr/lib/python3' || true
} | sort -u > "$files"
pyver=$(grep -m1 -o '^/usr/lib/python3\.[0-9]*' "$files") ||
	die "gdb imported nothing from /usr/lib/python3* (no Python in gdb?)"
# Python finds its prefix from this landmark.
echo "$pyver/os.py" >> "$files"

# The stamp: every input's path, size and time, and our own files.
stamp=$( (xargs -r stat -L -c '%n %s %Y' < "$files"
	find /usr/share/gdb -type f -printf '%p %s %T@\n' | sort
	sha256sum "$here/prog.c" "$here/build-layer.sh") | sha256sum | cut -d' ' -f1)
if [ -f "$archive" ] && [ "$(cat "$out/stamp" 2> /dev/null)" = "$stamp" ]; then
	exit 0
fi

say "building the clients layer (gdb, $perf and their libraries)"
rm -rf "$layer"
mkdir -p "$layer"
while read -r f; do
	[ -e "$f" ] || continue
	mkdir -p "$layer$(dirname "$f")"
	cp -L "$f" "$layer$f"
done < "$files"
# Debian's real perf binary under the name every caller uses.
[ "$perf" = /usr/bin/perf ] || mv "$layer$perf" "$layer/usr/bin/perf"
mkdir -p "$layer$pyver/lib-dynload" "$layer/usr/share"
cp -a /usr/share/gdb "$layer/usr/share/gdb"
find "$layer/usr/share/gdb" -name __pycache__ -prune -exec rm -rf {} +

# The test program, and what nm says of it for the watchpoint cases.
mkdir -p "$layer/clients"
gcc -O0 -g -static -fno-builtin-gamma -Wall -Werror \
	-o "$layer/clients/prog" "$here/prog.c"
nm "$layer/clients/prog" |
	awk '$3 ~ /^(counter|slots|alpha|beta|gamma|calls|done|spin)$/ { print $3, "0x" $1 }' \
	> "$layer/clients/prog.nm"
{
	echo "gdb $(dpkg-query -W -f='${Version}' gdb 2> /dev/null || echo unknown)"
	echo "perf $perf $(dpkg-query -S "$perf" 2> /dev/null | grep -v '^diversion' |
		cut -d: -f1 | head -n1 |
		xargs -r dpkg-query -W -f='${Package} ${Version}')"
} > "$layer/clients/versions"

(cd "$layer" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) |
	nice xz -T1 -0 --check=crc32 > "$archive.new"
mv "$archive.new" "$archive"
echo "$stamp" > "$out/stamp"
say "clients layer: $archive ($(du -h "$archive" | cut -f1), $(du -sh "$layer" | cut -f1) unpacked)"
