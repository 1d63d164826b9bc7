#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run`: what this series gives a debugger, in three parts, each
# opened by a line that says what it shows.  The programs are in /demo/
# (scripts/demo/).  Exit non-zero if any part failed; init reports the
# status and run-guest.sh fails `make run` on it.

failed=

part() {
	printf '\n=== %s\n' "$*"
}

# run 'COMMAND LINE': show it as typed at a root shell, then run it.
run() {
	echo "# $*"
	eval "$*"
}

# fail PART REASON
fail() {
	echo "demo: $1 FAILED: $2"
	case "$failed " in
	*" $1 "*) ;;
	*) failed="$failed $1" ;;
	esac
}

# traced PATTERN: btrace's output, not crashme's own, has PATTERN.
traced() {
	grep -v '^crashme:' /tmp/btrace.out | grep -q -- "$1"
}

# Part 1: branch trace of a crashing program (PTRACE_BTS_*, DS arbiter).
demo_btrace() {
	part "1/3 btrace: the branch trace shows the calls and branches that led to a crash"
	echo "(crashme looks up \"pears\" in a list without it, and writes through NULL)"
	if [ ! -x /bin/btrace ]; then
		fail btrace "/bin/btrace is not in this initramfs (tools/debugging/btrace)"
		return
	fi
	[ "$bts" = yes ] ||
		echo "(this CPU has no BTS: boot the model QEMU, QEMU_KIND=model)"
	run "btrace -n 25 -- /demo/crashme" > /tmp/btrace.out 2>&1
	cat /tmp/btrace.out
	traced SIGSEGV && traced find_item ||
		fail btrace "no SIGSEGV after find_item() in the call history"
	echo
	run "btrace -n 20 --branches -- /demo/crashme" > /tmp/btrace.out 2>&1
	cat /tmp/btrace.out
	traced SIGSEGV && traced 'find_item.* -> ' ||
		fail btrace "no SIGSEGV after branches from find_item() in --branches"
}

# Part 2: the ksym tracer.
demo_ksym() {
	t=/sys/kernel/tracing

	part "2/3 ksym tracer: a watchpoint on the kernel variable overflowuid catches a write"
	if ! grep -qw ksym $t/available_tracers; then
		fail ksym "no ksym tracer in this kernel"
		return
	fi
	echo > $t/trace
	cd $t || return
	run "echo ksym > current_tracer"
	run "echo 'overflowuid:-w-' > ksym_trace_filter"
	v=$(cat /proc/sys/kernel/overflowuid)
	run "echo $v > /proc/sys/kernel/overflowuid"
	run "grep -v '^#' trace" > /tmp/ksym.out
	cat /tmp/ksym.out
	run "cat ksym_profile"
	grep -q 'overflowuid -w- ip=' /tmp/ksym.out ||
		fail ksym "the write to overflowuid was not traced"
	echo > ksym_trace_filter
	echo nop > current_tracer
	cd /
}

# Part 3: flexible breakpoints.
demo_flexible() {
	part "3/3 flexible breakpoints: 8 watchpoints of a task take turns on 4 debug registers"
	run /demo/watch_many || fail flexible "watch_many failed"
}

bts=no
grep -qw bts /proc/cpuinfo && bts=yes
echo "demo: $(uname -sr), $(nproc) CPUs, branch trace store (BTS): $bts"
demo_btrace
demo_ksym
demo_flexible

echo
if [ -n "$failed" ]; then
	echo "=== demo: FAILED:$failed"
	exit 1
fi
echo "=== demo: all three parts worked"
