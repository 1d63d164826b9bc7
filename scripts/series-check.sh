#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build every prefix of the series exported by series.sh: each patch must
# leave a tree that configures and builds.  The build directory is
# shared by the prefixes, so each step rebuilds only what its patch
# touched.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

repo=$BUILD/series-git
obj=$BUILD/obj-series
commits=$(git -C "$repo" rev-list --reverse base..series)
[ -n "$commits" ] || { say "the series is empty: nothing to build"; exit 0; }
mkdir -p "$obj" "$LOGS"
i=0
total=$(echo "$commits" | wc -l)
for c in $commits; do
	i=$((i + 1))
	git -C "$repo" checkout -q -f "$c"
	subject=$(git -C "$repo" log -1 --format=%s "$c")
	log=$LOGS/series-check-$i.log
	{
		make -C "$repo" O="$obj" tinyconfig
		"$repo/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$TOP/scripts/guest.config"
		make -C "$repo" O="$obj" olddefconfig
		make -C "$repo" O="$obj" -j"$JOBS" CC="ccache gcc" HOSTCC="ccache gcc" bzImage
	} > "$log" 2>&1 || die "prefix $i/$total ($subject) does not build; see $log"
	say "prefix $i/$total builds: $subject"
done
git -C "$repo" checkout -q -f series
say "every prefix of the series builds"
