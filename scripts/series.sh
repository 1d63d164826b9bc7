#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Export the series as `git format-patch` files with a cover letter into
# $BUILD/series/, and checkpatch --strict every exported patch.  The QEMU
# BTS model ($MODEL_DIR) is not part of the kernel series: its patches go
# to $BUILD/series-qemu/, a series for QEMU of their own.
#
# A patch in patches/ is a mail: From:, Subject:, changelog, sign-offs,
# "---", then "Adds: PATH" lines naming the new files of ours that the
# patch adds (taken from our tree), then the diff of upstream files.
# Every file of ours must be added by exactly one patch.  Each patch
# also carries the lines of our MAINTAINERS entries that cover the files
# it adds (merge-maintainers.py with a tree root).
#
# The commits are made in $BUILD/series-git, which series-check.sh uses.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

version=$(cat "$BUILD/base-version")
repo=$BUILD/series-git
out=$BUILD/series

# Which file each patch adds; a file added twice or never is an error.
overlay_files > "$BUILD/overlay.list"
claims=$(while read -r p; do
	sed -n 's/^Adds: *//p' "$TOP/patches/$p" | sed "s|^|$p |"
done < <(series_patches))
dups=$(printf '%s\n' "$claims" | awk 'NF { print $2 }' | sort | uniq -d)
[ -z "$dups" ] || die "added by more than one patch: $dups"
cp "$BUILD/overlay.list" "$BUILD/ours.list"
unclaimed=$(printf '%s\n' "$claims" | awk 'NF { print $2 }' | sort | comm -13 - "$BUILD/ours.list")
[ -z "$unclaimed" ] || die "files of ours that no patch adds: $unclaimed"
unknown=$(printf '%s\n' "$claims" | awk 'NF { print $2 }' | sort | comm -23 - "$BUILD/ours.list")
[ -z "$unknown" ] || die "patches add files we do not have: $unknown"

stamp=$BUILD/series-git.base
if [ "$(cat "$stamp" 2>/dev/null)" != "$version" ]; then
	say "creating $repo from $version (once)"
	rm -rf "$repo"
	mkdir -p "$repo"
	tar -C "$repo" --strip-components=1 -xf "$LINUX_TARBALL"
	git -C "$repo" init -q
	# -f: Debian's tarball ignores everything at the top level.
	git -C "$repo" add -A -f
	git -C "$repo" -c user.name=base -c user.email=base@localhost \
		commit -q -m "Linux $version ($LINUX_PKG)"
	git -C "$repo" tag -f base > /dev/null
	echo "$version" > "$stamp"
fi
git -C "$repo" checkout -q -f -B series base
git -C "$repo" clean -q -fdx

# The changelog of a patch file: after the header, up to the first "---".
changelog() {
	awk 'body && /^---$/ { exit } body { print } /^$/ { body = 1 }' "$1"
}

export GIT_AUTHOR_DATE="2026-01-01T00:00:00Z" GIT_COMMITTER_DATE="2026-01-01T00:00:00Z"
n=0
while read -r p; do
	src=$TOP/patches/$p
	n=$((n + 1))
	# The mail header and changelog, up to the "---" line.
	from=$(sed -n '1,/^$/s/^From: *//p' "$src")
	subject=$(sed -n '1,/^$/s/^Subject: *\(\[PATCH[^]]*\] *\)\{0,1\}//p' "$src")
	[ -n "$from" ] && [ -n "$subject" ] || die "$p: no From: or Subject: header"
	{
		printf '%s\n\n' "$subject"
		changelog "$src"
	} > "$BUILD/series-msg"
	while read -r f; do
		mkdir -p "$repo/$(dirname "$f")"
		cp "$TOP/$f" "$repo/$f"
	done < <(sed -n 's/^Adds: *//p' "$src")
	if grep -q '^--- ' "$src"; then
		git -C "$repo" apply --whitespace=nowarn "$src" || die "$p does not apply"
	fi
	if [ -f "$TOP/MAINTAINERS" ]; then
		git -C "$repo" show base:MAINTAINERS > "$repo/MAINTAINERS"
		python3 "$TOP/scripts/merge-maintainers.py" "$repo/MAINTAINERS" \
			"$TOP/MAINTAINERS" "$repo"
	fi
	git -C "$repo" add -A -f
	git -C "$repo" -c user.name="${from% <*}" -c user.email="$(echo "$from" | sed 's/.*<\(.*\)>.*/\1/')" \
		commit -q --author="$from" -F "$BUILD/series-msg" || die "$p: nothing to commit"
done < <(series_patches)

rm -rf "$out"
mkdir -p "$out"
if [ "$n" = 0 ]; then
	say "the series is empty: nothing to export"
	exit 0
fi

first_from=$(sed -n '1,/^$/s/^From: *//p' "$TOP/patches/$(series_patches | head -n 1)")
git -C "$repo" -c user.name="${first_from% <*}" \
	-c user.email="$(echo "$first_from" | sed 's/.*<\(.*\)>.*/\1/')" format-patch -q --cover-letter --base=base -o "$out" base..series
cover=$(ls "$out"/0000-cover-letter.patch)
title=$(sed -n '1p' "$TOP/patches/cover-letter")
{
	sed -n '3,$p' "$TOP/patches/cover-letter"
	printf '\nBased on Linux %s (Debian %s).\n\nThe patches:\n\n' \
		"$(sed -n 's/^VERSION = //p;s/^PATCHLEVEL = /./p;s/^SUBLEVEL = /./p' "$SRC/Makefile" | tr -d '\n')" \
		"$LINUX_PKG $version"
	i=0
	while read -r p; do
		i=$((i + 1))
		s=$(sed -n '1,/^$/s/^Subject: *\(\[PATCH[^]]*\] *\)\{0,1\}//p' "$TOP/patches/$p")
		# What it does: the first paragraph of the changelog's solution,
		# which by convention is its last paragraph.
		what=$(changelog "$TOP/patches/$p" |
			grep -v -E '^(Signed-off-by|Reviewed-by|Acked-by|Tested-by|Cc):' |
			awk 'BEGIN { RS = ""; } { last = $0 } END { print last }' | fmt -w 70 | sed 's/^/     /')
		printf '  %d. %s\n%s\n\n' "$i" "$s" "$what"
	done < <(series_patches)
} > "$BUILD/cover-blurb"
python3 - "$cover" "$title" "$BUILD/cover-blurb" <<'PY'
import sys
path, title, blurb = sys.argv[1], sys.argv[2], open(sys.argv[3]).read().rstrip("\n")
text = open(path).read()
text = text.replace("*** SUBJECT HERE ***", title).replace("*** BLURB HERE ***", blurb)
open(path, "w").write(text)
PY

# A patch of a debugger-side tool that uses elfutils' libdw and libelf
# names their CamelCase types (Dwfl_Module, GElf_Sym), and btrace's
# answers a foreign seccomp RET_TRACE with ENOSYS as the kernel does
# without a tracer: as host-checks.sh does for those files, CAMELCASE
# and ENOSYS are not reported for such a patch, and only those.
patch_opts() {
	grep -q '^+++ b/tools/debugging/' "$1" || return 0
	if grep -q -E '^\+#include <(elfutils/|gelf\.h|libelf\.h|dwarf\.h)' "$1"; then
		echo --ignore CAMELCASE
	fi
	if grep -q -w ENOSYS "$1"; then
		echo --ignore ENOSYS
	fi
}

bad=0
for f in "$out"/*.patch; do
	case $f in */0000-cover-letter.patch) continue ;; esac
	# shellcheck disable=SC2046
	if ! (cd "$repo" && perl scripts/checkpatch.pl --strict --no-summary --terse \
		$(patch_opts "$f") "$f" > "$f.checkpatch" 2>&1) ||
		[ -s "$f.checkpatch" ]; then
		cat "$f.checkpatch" >&2
		bad=1
	fi
	rm -f "$f.checkpatch"
done
[ "$bad" = 0 ] || die "checkpatch --strict is not clean on the exported series"
say "series: $n patches and a cover letter in $out, checkpatch --strict clean"

# The model's patches are QEMU's, in QEMU's order: the files of
# $MODEL_DIR/patches/ by name, or the single patch of the model.
qout=$BUILD/series-qemu
rm -rf "$qout"
mkdir -p "$qout"
if [ -d "$TOP/$MODEL_DIR/patches" ]; then
	cp "$TOP/$MODEL_DIR"/patches/*.patch "$qout/"
else
	cp "$TOP/$MODEL_DIR"/*.patch "$qout/"
fi
say "QEMU series of the BTS model: $(find "$qout" -name '*.patch' | wc -l) patches in $qout"
