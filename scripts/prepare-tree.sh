#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Lay the series over the base kernel in $BUILD/linux, or with FLEXIBLE=1
# only the flexible breakpoint patches in $BUILD/linux-flexible.
#
# The base is unpacked once per package version.  Each run builds the
# wanted tree in a hard-linked staging copy (new files, patches, our
# MAINTAINERS entries) and then copies only files whose content differs
# into $BUILD/linux, so kbuild rebuilds exactly what changed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

version=$(dpkg-query -W -f='${Version}' "$LINUX_PKG" 2>/dev/null) ||
	die "$LINUX_PKG is not installed; run scripts/deps.sh"
base=$BUILD/base/$version
if [ ! -f "$base/.unpacked" ]; then
	say "unpacking $LINUX_PKG $version"
	rm -rf "$base"
	mkdir -p "$base"
	tar -C "$base" -xf "$LINUX_TARBALL"
	touch "$base/.unpacked"
fi

staging=$BUILD/staging-$FLAVOUR
rm -rf "$staging"
cp -al "$base/linux-source-6.12" "$staging"

# New files: rsync replaces each one by rename, breaking the hard link.
# The flexible patches add none.
if [ "$FLAVOUR" = flexible ]; then
	: > "$staging.overlay"
else
	overlay_files > "$staging.overlay"
	cp "$staging.overlay" "$BUILD/overlay.list"
fi
if [ -s "$staging.overlay" ]; then
	rsync -r --files-from="$staging.overlay" "$TOP/" "$staging/"
fi

while read -r p; do
	[ -f "$TOP/patches/$p" ] || die "patches/series names missing patch $p"
	# Only the patch's header may lack hunks (a patch that only adds
	# new files); patch(1) would call that garbage.
	grep -q '^--- ' "$TOP/patches/$p" || continue
	patch -d "$staging" -p1 -s -f --no-backup-if-mismatch \
		-i "$TOP/patches/$p" || die "patch $p does not apply"
done < <(tree_patches)

# The BTS model's conformance suite (tools/testing/qemu-bts/conformance)
# is built into the test kernels as KUnit suite bts_model: test
# infrastructure of the model, neither a file of the series nor exported,
# laid here beside the x86 code with a Kconfig entry and a Makefile line
# of its own.  A kernel without BTS (stock QEMU) skips it.  The staging
# files are hard links into the base: write new files, never append.
if [ "$FLAVOUR" != flexible ]; then
	conf=$TOP/$MODEL_DIR/conformance
	install -m 0644 "$conf/bts_model_kunit.c" "$staging/arch/x86/kernel/"
	f=$staging/arch/x86/Kconfig.debug
	cat "$f" "$conf/Kconfig" > "$f.new"
	mv "$f.new" "$f"
	f=$staging/arch/x86/kernel/Makefile
	{ cat "$f"; echo 'obj-$(CONFIG_BTS_MODEL_KUNIT_TEST) += bts_model_kunit.o'; } > "$f.new"
	mv "$f.new" "$f"
fi

if [ "$FLAVOUR" != flexible ] && [ -f "$TOP/MAINTAINERS" ]; then
	cp "$staging/MAINTAINERS" "$staging/MAINTAINERS.new"
	python3 "$TOP/scripts/merge-maintainers.py" "$staging/MAINTAINERS.new" \
		"$TOP/MAINTAINERS" "$staging"
	mv "$staging/MAINTAINERS.new" "$staging/MAINTAINERS"
fi

# The base must not have been written through a hard link.
if [ -n "$(find "$base/linux-source-6.12" -newer "$base/.unpacked" -type f -print -quit)" ]; then
	die "base tree $base was modified; remove it and rerun"
fi

mkdir -p "$SRC"
# No -t: a file whose content changed gets the current time, one whose
# content did not keeps its old time and is not rebuilt.
rsync -rlpc --delete "$staging/" "$SRC/"
say "tree ready: $SRC ($version + $(tree_patches | wc -l) patches, $(wc -l < "$staging.overlay") files)"
rm -rf "$staging" "$staging.overlay"
printf '%s\n' "$version" > "$BUILD/base-version"
