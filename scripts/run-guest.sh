#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot the built kernel and initramfs under QEMU with 2 vCPUs.
#
# Usage: run-guest.sh MODE   (run | check | probe; see guest/init)
#
# The console (first serial port) goes to $LOGS/console-MODE.log, and to
# the terminal for MODE=run; verdicts (second serial port) go to
# $LOGS/results-MODE.log.  A watchdog ends a guest that runs longer than
# GUEST_TIMEOUT seconds.  Exit 0 only if the guest reported DONE.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mode=${1:?usage: run-guest.sh run|check|probe}
kernel=$OBJ/arch/x86/boot/bzImage
initrd=$OBJ/initramfs.cpio.gz
[ -f "$kernel" ] && [ -f "$initrd" ] || die "build the kernel and initramfs first"

if [ "$FLAVOUR" = debug ]; then
	mem=2048
	default_timeout=5400
else
	mem=1024
	default_timeout=1800
fi
[ "$mode" = probe ] && default_timeout=60
timeout=${GUEST_TIMEOUT:-$default_timeout}
qemu=${QEMU:-qemu-system-x86_64}
mkdir -p "$LOGS"

# boot ACCEL CPU MODE TIMEOUT: one guest; console and results logs.
boot() {
	local accel=$1 cpu=$2 bmode=$3 limit=$4
	local console=$LOGS/console-$bmode.log results=$LOGS/results-$bmode.log
	local show=/dev/null rc=0

	: > "$console"
	: > "$results"
	[ "$bmode" = run ] && show=/dev/stdout
	timeout -k 10 "$limit" "$qemu" \
		-accel "$accel" -cpu "$cpu" -smp 2 -m "$mem" \
		-display none -monitor none -no-reboot \
		-serial "file:$console" -serial "file:$results" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 dbgtrace.mode=$bmode $GUEST_CMDLINE" \
		< /dev/null > "$LOGS/qemu-$bmode.log" 2>&1 &
	local qpid=$!
	if [ "$show" != /dev/null ]; then
		tail -n +1 -f "$console" --pid=$qpid &
	fi
	wait $qpid || rc=$?
	wait 2> /dev/null || true
	return $rc
}

GUEST_CMDLINE=${GUEST_CMDLINE:-}

# /dev/kvm may exist without working VMX (nested virtualisation off):
# use KVM only when a guest really boots with it.
accel=tcg
# No LA57: while identify_cpu() rebuilds the boot CPU's feature bits,
# pgtable_l5_enabled() reads false, and an interrupt in that window made
# KASAN report a wild access to a 5-level address (rcu_is_watching) at
# boot.  4-level paging is all the series needs.
cpu=max,la57=off
if [ "${ACCEL:-auto}" != tcg ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
	grep -q -w -E 'vmx|svm' /proc/cpuinfo; then
	if boot kvm host probe 30 && grep -q '^@@ BOOTED' "$LOGS/results-probe.log"; then
		accel=kvm
		cpu=host
	elif [ "${ACCEL:-auto}" = kvm ]; then
		die "ACCEL=kvm, but no guest boots with KVM (see $LOGS/qemu-probe.log)"
	fi
fi
[ "$mode" = probe ] && [ "$accel" = kvm ] && exit 0
say "booting $FLAVOUR guest ($mode) under $accel, 2 vCPUs, watchdog ${timeout}s"
# The machine's name, for scripts/emulator-limits: qemu-X.Y-ACCEL.
qver=$("$qemu" --version | sed -n '1s/.*version \([0-9]*\.[0-9]*\).*/\1/p')
echo "qemu-$qver-$accel" > "$LOGS/machine-$mode"

start=$(date +%s)
rc=0
boot "$accel" "$cpu" "$mode" "$timeout" || rc=$?
elapsed=$(($(date +%s) - start))
results=$LOGS/results-$mode.log

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	warn "watchdog: the guest did not finish within ${timeout}s and was killed"
	echo "@@ WATCHDOG $timeout" >> "$results"
fi
if ! grep -q '^@@ DONE' "$results"; then
	tail -n 40 "$LOGS/console-$mode.log" >&2
	die "the guest did not finish (qemu exit $rc after ${elapsed}s); console: $LOGS/console-$mode.log"
fi
say "guest finished in ${elapsed}s"
if [ "$mode" = run ]; then
	demo=$(sed -n 's/^@@ DEMO-EXIT //p' "$results" | tr -d '\r')
	[ "$demo" = 0 ] || die "the demonstration failed (exit ${demo:-none})"
fi
