#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Configure (when a fragment changed) and build the guest kernel and the
# exported uapi headers.  kbuild itself decides what to rebuild.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

fragments=("$TOP/scripts/guest.config")
if [ "$FLAVOUR" = debug ]; then
	fragments+=("$KSRC/kernel/configs/x86_debug.config" "$TOP/scripts/guest-debug.config")
fi

mkdir -p "$OBJ" "$LOGS"
want=$(cat "${fragments[@]}" "$BUILD/base-version" | sha256sum | cut -d' ' -f1)
if [ ! -f "$OBJ/.config" ] || [ "$(cat "$OBJ/.fragments" 2>/dev/null)" != "$want" ]; then
	say "configuring $FLAVOUR kernel"
	kmake tinyconfig > "$LOGS/config.log"
	"$KSRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" \
		"${fragments[@]}" >> "$LOGS/config.log"
	kmake olddefconfig >> "$LOGS/config.log"
	# Every value our fragments ask for must have stuck: a silently
	# dropped option would make a test vanish instead of fail.  The
	# tree's x86_debug.config names options 6.12 no longer has
	# (DEBUG_SLAB, DEBUG_VM_VMACACHE); those are only logged.
	bad=0
	# The base and the flexible kernel have only part of the series.
	partial=0
	if [ "$FLAVOUR" = base ] || [ "$FLAVOUR" = flexible ]; then
		partial=1
	fi
	while IFS= read -r line; do
		key=${line%%=*}
		val=${line#*=}
		if [ "$val" = n ]; then
			grep -q "^$key=" "$OBJ/.config" || continue
		else
			grep -qxF "$line" "$OBJ/.config" && continue
		fi
		# A partial kernel lacks the series' other options: those
		# are expected.
		if [ "$partial" = 1 ] && ! grep -rqs -E "^(menu)?config ${key#CONFIG_}\$" \
			--include='Kconfig*' "$KSRC"; then
			echo "$FLAVOUR: no option $key" >> "$LOGS/config.log"
			continue
		fi
		warn "config: asked for $line, got '$(grep "^$key=" "$OBJ/.config" || echo unset)'"
		bad=1
	done < <(cat "${fragments[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=' |
		grep -v -x -F -f <(grep -E '^CONFIG_' "$KSRC/kernel/configs/x86_debug.config"))
	if [ "$FLAVOUR" = debug ]; then
		grep -E '^CONFIG_' "$KSRC/kernel/configs/x86_debug.config" |
			grep -v -x -F -f "$OBJ/.config" |
			sed 's/^/x86_debug.config: not in this kernel: /' >> "$LOGS/config.log" || true
	fi
	[ "$bad" = 0 ] || die "config fragments do not hold; see the lines above"
	printf '%s\n' "$want" > "$OBJ/.fragments"
fi

say "building $FLAVOUR kernel (log: $LOGS/build.log)"
start=$(date +%s)
if ! kmake bzImage > "$LOGS/build.log" 2>&1; then
	grep -E 'error|Error' "$LOGS/build.log" | head -n 40 >&2
	die "kernel build failed; see $LOGS/build.log"
fi
kmake headers_install >> "$LOGS/build.log" 2>&1 || die "headers_install failed"
# Warnings in the files we add or patch are errors: the series must build
# clean.  Match the in-tree path, not the base name: tools/debugging/btrace/
# trace.c is ours, kernel/trace/ftrace.c is not.
series_files() {
	overlay_files
	series_patches | while read -r p; do
		sed -n 's|^+++ b/||p' "$TOP/patches/$p"
	done
}
if [ "$FLAVOUR" != base ] && grep -E '(warning|error):' "$LOGS/build.log" |
	grep -E -f <(series_files | grep -E '\.[ch]$' | sort -u |
		sed -e 's/\./\\./g' -e 's|^|(^\|/)|' -e 's|$|:|' || echo '^@none@$') >&2; then
	die "the build warns in files of the series"
fi
say "kernel built in $(($(date +%s) - start)) s: $OBJ/arch/x86/boot/bzImage"
