#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build the guest userspace: busybox, bash (ftracetest needs it), the
# kselftests of scripts/kselftests.list linked statically, perf's
# breakpoint tests (scripts/perf-bp), ftracetest,
# and the init scripts of scripts/guest/.  Output: $OBJ/initramfs.cpio.gz
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ -x /bin/busybox ] || die "busybox-static is missing; run scripts/deps.sh"
[ -x /bin/bash-static ] || die "bash-static is missing; run scripts/deps.sh"
[ -d "$OBJ/usr/include" ] || die "no exported headers in $OBJ; build the kernel first"

root=$BUILD/initramfs-$FLAVOUR
rm -rf "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,tests,selftests}

cp /bin/busybox "$root/bin/busybox"
for applet in $(/bin/busybox --list); do
	[ -e "$root/bin/$applet" ] || ln -s busybox "$root/bin/$applet"
done
rm -f "$root/bin/bash"
cp /bin/bash-static "$root/bin/bash"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' > "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"

install -m 0755 "$TOP/scripts/guest/init" "$root/init"
install -m 0755 "$TOP/scripts/guest/demo.sh" "$root/tests/demo.sh"
install -m 0644 "$TOP/scripts/guest/lib.sh" "$root/tests/lib.sh"
for plan in "$TOP"/scripts/guest/plan "$TOP"/scripts/guest/plan.*; do
	[ -f "$plan" ] || continue
	grep -v '^#' "$plan" > "$root/tests/$(basename "$plan")"
done

# Static binaries: the guest has no libc, and a static 32-bit program
# runs on the 64-bit kernel through ia32 emulation as it is.
say "building kselftests"
mkdir -p "$LOGS"
while read -r dir progs; do
	case $dir in ''|'#'*) continue ;; esac
	out=$BUILD/selftests/$dir
	mkdir -p "$out"
	targets=$(for p in $progs; do printf '%s/%s ' "$out" "$p"; done)
	# shellcheck disable=SC2086
	if ! make -C "$SRC/tools/testing/selftests/$dir" OUTPUT="$out" \
		KHDR_INCLUDES="-isystem $OBJ/usr/include" CC="gcc -static" \
		$targets > "$LOGS/selftests-$dir.log" 2>&1; then
		tail -n 30 "$LOGS/selftests-$dir.log" >&2
		die "building selftests/$dir failed"
	fi
	mkdir -p "$root/selftests/$dir"
	for p in $progs; do
		install -m 0755 "$out/$p" "$root/selftests/$dir/$p"
	done
done < "$TOP/scripts/kselftests.list"

# Upstream perf's hardware breakpoint tests, unchanged, in a harness of
# ours (scripts/perf-bp): the series must keep them passing.
mkdir -p "$BUILD/perf-bp"
if ! make -C "$TOP/scripts/perf-bp" SRC="$SRC" OUTPUT="$BUILD/perf-bp" \
	CC="gcc -static" > "$LOGS/selftests-perf-bp.log" 2>&1; then
	tail -n 30 "$LOGS/selftests-perf-bp.log" >&2
	die "building perf's breakpoint tests failed"
fi
install -D -m 0755 "$BUILD/perf-bp/perf_bp" "$root/selftests/perf/perf_bp"

rsync -a "$SRC/tools/testing/selftests/ftrace/" "$root/selftests/ftrace/"

# Debian's gdb and perf for plan.clients (scripts/clients/README): an xz
# archive in the initramfs that the guest unpacks only when a plan uses it.
"$TOP/scripts/clients/build-layer.sh"
install -D -m 0644 "$BUILD/clients/clients.cpio.xz" "$root/clients/clients.cpio.xz"
install -m 0755 "$TOP/scripts/clients/clients.sh" "$root/tests/clients.sh"

# btrace, the debugger-side tool (tools/debugging/btrace), as /bin/btrace.
mkdir -p "$BUILD/btrace-$FLAVOUR"
if ! make -C "$TOP/tools/debugging/btrace" OUTPUT="$BUILD/btrace-$FLAVOUR/" \
	STATIC=1 KHDR_INCLUDES="-isystem $OBJ/usr/include" \
	> "$LOGS/btrace.log" 2>&1; then
	tail -n 30 "$LOGS/btrace.log" >&2
	die "building btrace failed"
fi
install -m 0755 "$BUILD/btrace-$FLAVOUR/btrace" "$root/bin/btrace"

# The BTS model's conformance suite (suite bts_model): its user test.
# Its KUnit part is built into the test kernels (scripts/prepare-tree.sh).
conf=$TOP/$MODEL_DIR/conformance
mkdir -p "$root/tests/bts_model"
if ! gcc -static -O2 -Wall -I "$SRC/tools/testing/selftests" \
	-isystem "$OBJ/usr/include" -o "$BUILD/bts_model_btf-$FLAVOUR" \
	"$conf/bts_model_btf.c" > "$LOGS/selftests-bts_model.log" 2>&1; then
	tail -n 30 "$LOGS/selftests-bts_model.log" >&2
	die "building the BTS model's conformance suite failed"
fi
install -m 0755 "$BUILD/bts_model_btf-$FLAVOUR" "$root/tests/bts_model/bts_model_btf"

# The programs of `make run`'s demonstration (scripts/guest/demo.sh).
if ! "$TOP/scripts/demo/build.sh" "$BUILD/demo-$FLAVOUR" "$OBJ/usr/include" \
	> "$LOGS/demo.log" 2>&1; then
	tail -n 30 "$LOGS/demo.log" >&2
	die "building the demonstration's programs (scripts/demo) failed"
fi
install -D -m 0755 -t "$root/demo" "$BUILD/demo-$FLAVOUR"/{crashme,watch_many}

# btrace's selftest (tools/testing/selftests/btrace), built by its
# kselftest Makefile: the script, its target programs and their lines.
bt=$BUILD/btrace-test-$FLAVOUR
mkdir -p "$bt"
if ! make -C "$SRC/tools/testing/selftests/btrace" OUTPUT="$bt" \
	CC="gcc -static" > "$LOGS/selftests-btrace.log" 2>&1; then
	tail -n 30 "$LOGS/selftests-btrace.log" >&2
	die "building btrace's selftest failed"
fi
install -D -m 0755 -t "$root/tests/btrace" \
	"$SRC/tools/testing/selftests/btrace/btrace_test.sh" \
	"$bt"/bt_{crash,exec_first,exec_second,loop,stop,threads}
install -m 0644 "$bt/lines" "$root/tests/btrace/lines"

(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --owner=0:0 --quiet) | gzip -1 > "$OBJ/initramfs.cpio.gz.new"
mv "$OBJ/initramfs.cpio.gz.new" "$OBJ/initramfs.cpio.gz"
say "initramfs: $OBJ/initramfs.cpio.gz ($(du -h "$OBJ/initramfs.cpio.gz" | cut -f1))"
