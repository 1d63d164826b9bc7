#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot a built kernel and the initramfs under QEMU with 2 vCPUs.
#
# Usage: run-guest.sh MODE   (run | check | bench | probe; see guest/init)
#
# One guest run, described by the environment (scripts/guest/runs has a
# line per run of `make check`):
#   RUN_LABEL    the run's name; "main" (the default) or another label L
#   KERNEL_KIND  patched (default); base: the unpatched kernel of
#                `make kernel BASE=1`; flexible: the base with only the
#                flexible breakpoint patches (scripts/lib.sh)
#   QEMU_KIND    stock: Debian's QEMU; model: the BTS model of
#                tools/testing/qemu-bts (built, or taken from its cache,
#                by qemu-bts.sh); the default is model for MODE=run, whose
#                demonstration traces branches, stock otherwise; either
#                with "+icount": TCG
#                with a guest clock that counts instructions, see below;
#                the model with "+cpl-source" or "+cpl-destination"
#   PLAN         the plan file under scripts/guest/ (default "plan")
#   EXTRA_CMDLINE  more kernel command line
# The console (first serial port) goes to $LOGS/console-TAG.log, and to
# the terminal for MODE=run; verdicts (second serial port) go to
# $LOGS/results-TAG.log, where TAG is MODE for the main run and MODE-L
# otherwise.  A watchdog ends a guest that runs longer than GUEST_TIMEOUT
# seconds.  Exit 0 only if the guest reported DONE.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mode=${1:?usage: run-guest.sh run|check|bench|probe}
label=${RUN_LABEL:-main}
tag=$mode
[ "$label" = main ] || tag=$mode-$label
kernel=$OBJ/arch/x86/boot/bzImage
case ${KERNEL_KIND:-patched} in
patched) ;;
base) kernel=$BUILD/obj-base/arch/x86/boot/bzImage ;;
flexible) kernel=$BUILD/obj-flexible/arch/x86/boot/bzImage ;;
*) die "KERNEL_KIND must be patched, base or flexible" ;;
esac
initrd=$OBJ/initramfs.cpio.gz
[ -f "$kernel" ] && [ -f "$initrd" ] || die "build the kernel ($kernel) and initramfs first"

if [ "$FLAVOUR" = debug ]; then
	mem=2048
	default_timeout=5400
else
	mem=1024
	default_timeout=1800
fi
# make stress: the 100000 operations of plan.stress, then the rest.
[ "$mode" = stress ] && default_timeout=7200
[ "$mode" = probe ] && default_timeout=60
timeout=${GUEST_TIMEOUT:-$default_timeout}
# No LA57: while identify_cpu() rebuilds the boot CPU's feature bits,
# pgtable_l5_enabled() reads false, and an interrupt in that window made
# KASAN report a wild access to a 5-level address (rcu_is_watching) at
# boot.  4-level paging is all the series needs.
cpu=max,la57=off
machine_kind=
# +icount: the guest clock advances one nanosecond per instruction the
# vCPUs execute, and skips idle time (sleep=off).  Under plain TCG the
# same kernel's timings differ by a fifth between boots, with the load of
# the host; counted this way, two kernels compare by the instructions
# their code paths execute.  QEMU then runs the vCPUs in turn on one
# host thread.
icount=()
qemu_log=()
# Options after the kind, each "+OPTION": icount (above); for the model,
# cpl-source or cpl-destination (the model's bts-cpl property: which end
# of a privilege crossing BTS_OFF_OS/USR look at; "either" without).
bts_cpl=either
default_qemu=stock
[ "$mode" = run ] && default_qemu=model
QEMU_KIND=${QEMU_KIND:-$default_qemu}
qemu_kind=$QEMU_KIND
IFS=+ read -r -a qemu_opts <<< "$qemu_kind"
qemu_kind=${qemu_opts[0]}
for opt in "${qemu_opts[@]:1}"; do
	case $opt in
	icount)
		icount=(-icount shift=0,sleep=off)
		machine_kind=icount-
		ACCEL=tcg
		;;
	cpl-source | cpl-destination)
		[ "$qemu_kind" = model ] || die "+$opt needs the model QEMU"
		bts_cpl=${opt#cpl-}
		;;
	*) die "unknown QEMU option +$opt in QEMU_KIND=$QEMU_KIND" ;;
	esac
done
case $qemu_kind in
stock)
	qemu=${QEMU:-qemu-system-x86_64}
	;;
model)
	qemu=$("$TOP/tools/testing/qemu-bts/qemu-bts.sh" path) ||
		die "the BTS model QEMU could not be built"
	cpu=$("$TOP/tools/testing/qemu-bts/qemu-bts.sh" cpu)
	# Strict: the model reports, as guest errors, DS-area use that the
	# SDM leaves undefined (tools/testing/qemu-bts/README); the summary
	# fails the run on any.
	cpu=$cpu,bts-strict=on,bts-cpl=$bts_cpl
	qemu_log=(-d guest_errors -D "$LOGS/qemu-guest-errors-$tag.log")
	machine_kind=${machine_kind}bts-
	# The model is TCG code: KVM would bypass it.
	ACCEL=tcg
	;;
*) die "QEMU_KIND must be stock or model, with +OPTIONs" ;;
esac
plan=${PLAN:-plan}
mkdir -p "$LOGS"

# boot ACCEL CPU MODE TIMEOUT TAG: one guest; console and results logs.
boot() {
	local accel=$1 cpu=$2 bmode=$3 limit=$4
	local console=$LOGS/console-$5.log results=$LOGS/results-$5.log
	local show=/dev/null rc=0

	: > "$console"
	: > "$results"
	# A stale report of an earlier model run of this tag must not count.
	rm -f "$LOGS/qemu-guest-errors-$5.log"
	[ ${#qemu_log[@]} = 0 ] || : > "$LOGS/qemu-guest-errors-$5.log"
	[ "$bmode" = run ] && show=/dev/stdout
	timeout -k 10 "$limit" "$qemu" \
		-accel "$accel" "${icount[@]}" "${qemu_log[@]}" \
		-cpu "$cpu" -smp 2 -m "$mem" \
		-display none -monitor none -no-reboot \
		-serial "file:$console" -serial "file:$results" \
		-kernel "$kernel" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 dbgtrace.mode=$bmode dbgtrace.plan=$plan $GUEST_CMDLINE" \
		< /dev/null > "$LOGS/qemu-$5.log" 2>&1 &
	local qpid=$!
	if [ "$show" != /dev/null ]; then
		tail -n +1 -f "$console" --pid=$qpid &
	fi
	wait $qpid || rc=$?
	wait 2> /dev/null || true
	return $rc
}

GUEST_CMDLINE="${GUEST_CMDLINE:-} ${EXTRA_CMDLINE:-}"

# Under TCG the emulator itself can stall a vCPU for tens of seconds (seen
# in QEMU 7.2 on the S3 resume of step_after_suspend_test: HPET reads of
# over a millisecond, one hrtimer interrupt of 1.5 s, a 31 s soft lockup
# blamed on the suspending shell; the same resume takes 10 ms in a guest
# of its own).  Unlike KVM's pvclock, TCG tells the guest nothing of such
# stalls, so the soft lockup and RCU stall detectors, tuned for hardware,
# report the task that happened to be current.  Give both two minutes:
# a real hang is still reported, emulator slowness is not.
TCG_CMDLINE="watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=120"

# /dev/kvm may exist without working VMX (nested virtualisation off):
# use KVM only when a guest really boots with it.
accel=tcg
if [ "${ACCEL:-auto}" != tcg ] && [ -r /dev/kvm ] && [ -w /dev/kvm ] &&
	grep -q -w -E 'vmx|svm' /proc/cpuinfo; then
	if boot kvm host probe 30 probe && grep -q '^@@ BOOTED' "$LOGS/results-probe.log"; then
		accel=kvm
		cpu=host
	elif [ "${ACCEL:-auto}" = kvm ]; then
		die "ACCEL=kvm, but no guest boots with KVM (see $LOGS/qemu-probe.log)"
	fi
fi
[ "$mode" = probe ] && [ "$accel" = kvm ] && exit 0
say "booting ${KERNEL_KIND:-patched} $FLAVOUR kernel ($mode, run $label, plan $plan) on $QEMU_KIND QEMU, $accel, 2 vCPUs, watchdog ${timeout}s"
# The machine's name, for scripts/emulator-limits: qemu-X.Y-ACCEL.
qver=$("$qemu" --version | sed -n '1s/.*version \([0-9]*\.[0-9]*\).*/\1/p')
echo "qemu-$qver-$machine_kind$accel" > "$LOGS/machine-$tag"

start=$(date +%s)
rc=0
[ "$accel" = tcg ] && GUEST_CMDLINE="$GUEST_CMDLINE $TCG_CMDLINE"
boot "$accel" "$cpu" "$mode" "$timeout" "$tag" || rc=$?
elapsed=$(($(date +%s) - start))
results=$LOGS/results-$tag.log

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	warn "watchdog: the guest did not finish within ${timeout}s and was killed"
	echo "@@ WATCHDOG $timeout" >> "$results"
fi
if ! grep -q '^@@ DONE' "$results"; then
	tail -n 40 "$LOGS/console-$tag.log" >&2
	die "the guest did not finish (qemu exit $rc after ${elapsed}s); console: $LOGS/console-$tag.log"
fi
say "guest finished in ${elapsed}s"
if [ "$mode" = run ]; then
	demo=$(sed -n 's/^@@ DEMO-EXIT //p' "$results" | tr -d '\r')
	[ "$demo" = 0 ] || die "the demonstration failed (exit ${demo:-none})"
fi
