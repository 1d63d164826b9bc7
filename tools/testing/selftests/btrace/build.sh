#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the target programs of the btrace selftest (btrace_test.sh),
# statically with -g -O0 (the guest has no libc; btrace must find their
# functions and lines), and write OUT_DIR/lines: "NAME=LINE" for each
# "MARK NAME" comment of the sources, the lines the test expects.
#
# Usage: build.sh OUT_DIR
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:?usage: build.sh OUT_DIR}
CC=${CC:-gcc}
flags=(-static -g -O0 -fno-inline -fno-omit-frame-pointer -Wall -Wextra)

mkdir -p "$out"
for p in bt_crash bt_exec_first bt_exec_second bt_loop; do
	$CC "${flags[@]}" -o "$out/$p" "$here/$p.c"
done
$CC "${flags[@]}" -pthread -o "$out/bt_threads" "$here/bt_threads.c"

: > "$out/lines.new"
for f in "$here"/bt_*.c; do
	grep -nE '/\* MARK [A-Z_]+ \*/' "$f" |
		sed -E 's/^([0-9]+):.*MARK ([A-Z_]+).*/\2=\1/' >> "$out/lines.new"
done
mv "$out/lines.new" "$out/lines"
