#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# `make run`: show what this kernel offers debuggers so far.

section() {
	printf '\n=== %s\n' "$*"
}

section "kernel"
uname -a

section "branch trace and debug store hardware (CPUID)"
flags=$(grep -m1 '^flags' /proc/cpuinfo)
for f in ds dtes64 ds_cpl pdcm bts pebs; do
	case " ${flags#*:} " in
	*" $f "*) echo "$f: yes" ;;
	*) echo "$f: no" ;;
	esac
done

section "perf PMUs"
ls /sys/bus/event_source/devices/

section "hardware breakpoints (upstream hw_breakpoint KUnit suite)"
grep -E '^    (not )?ok ' /sys/kernel/debug/kunit/hw_breakpoint/results

section "a watchpoint at work (breakpoints/breakpoint_test, first cases)"
/selftests/breakpoints/breakpoint_test 2>&1 | head -n 8

section "tracers"
cat /sys/kernel/tracing/available_tracers

section "the ksym tracer: who writes kernel.overflowuid"
t=/sys/kernel/tracing
if grep -qw ksym $t/available_tracers; then
	echo ksym > $t/current_tracer
	echo 'overflowuid:-w-' > $t/ksym_trace_filter
	cat $t/ksym_trace_filter
	v=$(cat /proc/sys/kernel/overflowuid)
	echo "$v" > /proc/sys/kernel/overflowuid
	grep -v '^#' $t/trace
	cat $t/ksym_profile
	echo > $t/ksym_trace_filter
	echo nop > $t/current_tracer
else
	echo "no ksym tracer in this kernel"
fi
