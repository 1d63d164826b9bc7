#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the programs of `make run`'s demonstration (scripts/guest/demo.sh),
# statically: the guest has no libc.
#
# Usage: build.sh OUT_DIR [UAPI_INCLUDE_DIR]
#
# UAPI_INCLUDE_DIR is the series' exported headers (OBJ/usr/include):
# watch_many needs perf_event_attr::bp_flexible.  crashme is built with
# -g -O0 so that btrace can name its functions and lines, and every call
# in it is a real call; its lines are named from the top of the checkout
# (scripts/demo/crashme.c:57), wherever that is.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:?usage: build.sh OUT_DIR [UAPI_INCLUDE_DIR]}
inc=()
[ -z "${2:-}" ] || inc=(-isystem "$2")
CC=${CC:-gcc}

mkdir -p "$out"
$CC -static -g -O0 -fno-inline -fno-omit-frame-pointer -Wall -Wextra \
	-ffile-prefix-map="$top/"= -o "$out/crashme" "$here/crashme.c"
$CC -static -O2 -Wall -Wextra "${inc[@]}" \
	-o "$out/watch_many" "$here/watch_many.c"
