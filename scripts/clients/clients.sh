#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Real clients in the guest: Debian's gdb and perf, unmodified, on the
# test program prog.c (scripts/clients/README).  One group of cases per
# call, printed as TAP for the plan's kselftest lines:
#
#   clients.sh gdb         gdb's "record btrace bts": format, call history
#   clients.sh bts         perf record -e intel_bts//u, perf script: calls
#   clients.sh mem-record  perf record on a mem: event: a sample per write
#   clients.sh mem-stat    perf stat on four mem: events, then on eight
#   clients.sh pmu         perf stat and perf record on counting counters
#
# The first call lays the clients layer (/clients/clients.cpio.xz) at /.
# Exit 0 with every case reported; a failed case is a "not ok" line.

PROG=/clients/prog
TMP=/tmp/clients
n=0

ok() { # name [comment]
	n=$((n + 1))
	echo "ok $n $1${2:+ # $2}"
}

not_ok() { # name reason
	n=$((n + 1))
	echo "not ok $n $1 # $2"
}

# ok if status is 0: "[ A ] && [ B ]; verdict $? NAME REASON".
verdict() { # status name reason
	if [ "$1" = 0 ]; then
		ok "$2"
	else
		not_ok "$2" "$3"
	fi
}

# Whether value is within percent of want.
within() { # value want percent
	case $1 in '' | *[!0-9]*) return 1 ;; esac
	d=$(($1 - $2))
	[ $d -lt 0 ] && d=$((-d))
	[ $((d * 100)) -le $(($2 * $3)) ]
}

# Show a file's lines as TAP diagnostics.
show() { # file [max lines]
	head -n "${2:-60}" "$1" | sed 's/^/# /'
}

# The address nm gave for a symbol of prog.
addr() { # symbol
	awk -v s="$1" '$1 == s { print $2 }' /clients/prog.nm
}

layer() {
	[ -x /usr/bin/gdb ] && [ -x /usr/bin/perf ] && return 0
	echo "# unpacking the clients layer"
	[ -f /clients/clients.cpio.xz ] || return 1
	(cd / && xzcat /clients/clients.cpio.xz | cpio -i -d -m -u 2> /dev/null) &&
		[ -x /usr/bin/gdb ] && [ -x /usr/bin/perf ]
}

# gdb's record btrace bts on "prog calls": recording starts at calls()
# and stops at done(), so the recorded functions are exactly
# calls alpha beta gamma beta alpha calls done.
case_gdb() {
	out=$TMP/gdb.out
	gdb -nx -batch \
		-ex 'break calls' -ex run \
		-ex 'record btrace bts' \
		-ex 'break done' -ex continue \
		-ex 'info record' \
		-ex 'echo @@ history\n' \
		-ex 'record function-call-history' \
		-ex 'echo @@ end\n' \
		-ex 'record stop' -ex kill \
		--args "$PROG" calls > "$out" 2>&1
	rc=$?
	show "$out" 80
	[ "$rc" = 0 ]
	verdict $? gdb_runs "gdb exit status $rc"
	if grep -q '^Recording format: Branch Trace Store\.' "$out"; then
		ok record_format_bts
	else
		not_ok record_format_bts "info record: $(grep -m1 -i -E 'record|btrace|branch' "$out")"
	fi
	rec=$(grep -m1 '^Recorded [0-9]* instructions in [0-9]* functions' "$out")
	insns=$(echo "$rec" | sed -n 's/^Recorded \([0-9]*\) instructions.*/\1/p')
	if [ -n "$insns" ] && [ "$insns" -gt 0 ]; then
		ok recorded_instructions "$rec"
	else
		not_ok recorded_instructions "no 'Recorded N instructions' with N > 0"
	fi
	want="calls alpha beta gamma beta alpha calls done"
	got=$(awk -F '\t' '/^@@ history$/ { on = 1; next } /^@@ end$/ { on = 0 }
		on && /^[0-9]+\t/ { printf "%s%s", sep, $2; sep = " " }' "$out")
	[ "$got" = "$want" ]
	verdict $? function_call_history "got '$got', want '$want'"
}

# perf record on intel_bts, user space only, then perf script: each
# branch is "FROM_IP FROM_SYM => TO_ADDR TO_SYM".  The calls of prog
# calls must be there in order, each to its callee's first instruction.
case_bts() {
	data=$TMP/bts.data
	perf record --per-thread -e intel_bts//u -o "$data" -- "$PROG" calls \
		> "$TMP/bts-record.out" 2>&1
	rc=$?
	show "$TMP/bts-record.out"
	[ "$rc" = 0 ]
	verdict $? perf_record_intel_bts "perf record exit status $rc"
	perf script -i "$data" -F ip,sym,addr > "$TMP/bts.script" 2> "$TMP/bts-script.err"
	rc=$?
	show "$TMP/bts-script.err"
	lines=$(wc -l < "$TMP/bts.script")
	echo "# perf script: $lines branches; those of prog's functions:"
	grep -E ' (calls|alpha|beta|gamma|done) ' "$TMP/bts.script" | show - 40
	echo "# trace errors perf script reports, the first:"
	grep -i 'error' "$TMP/bts.script" | show - 10
	[ "$rc" = 0 ] && [ "$lines" -gt 0 ]
	verdict $? perf_script_branches "perf script exit $rc, $lines lines"
	calls=$(awk -v a="$(addr alpha)" -v b="$(addr beta)" -v g="$(addr gamma)" \
		-v d="$(addr "done")" '
		function hex(s) { sub(/^0x0*/, "", s); sub(/^0*/, "", s); return tolower(s) }
		BEGIN { t[hex(a)] = "alpha"; t[hex(b)] = "beta"; t[hex(g)] = "gamma"
			t[hex(d)] = "done" }
		$3 == "=>" && (hex($4) in t) { printf "%s%s>%s", sep, $2, t[hex($4)]; sep = " " }
		' "$TMP/bts.script")
	want="calls>alpha alpha>beta beta>gamma calls>done"
	[ "$calls" = "$want" ]
	verdict $? intel_bts_calls "calls to the entries of alpha, beta, gamma, done: got '$calls', want '$want'"
}

# Watchpoints through perf's mem: events, user mode only (:u): the
# kernel's zeroing of the tail of prog's .data page at exec, after perf
# enabled the event, is a write to the same words.  A write watchpoint
# on the global "counter" samples every one of prog's writes to it.
case_mem_record() {
	writes=1000
	data=$TMP/watch.data
	perf record -c 1 -e "mem:$(addr counter)/8:w:u" -o "$data" -- "$PROG" writes "$writes" \
		> "$TMP/watch-record.out" 2>&1
	rc=$?
	show "$TMP/watch-record.out"
	perf script -i "$data" -F ip,sym > "$TMP/watch.script" 2> "$TMP/watch-script.err"
	show "$TMP/watch-script.err"
	samples=$(wc -l < "$TMP/watch.script")
	in_writes=$(grep -c ' writes$' "$TMP/watch.script")
	echo "# $samples samples, $in_writes in writes(); the first:"
	show "$TMP/watch.script" 3
	[ "$rc" = 0 ] && [ "$samples" = "$writes" ] && [ "$in_writes" = "$writes" ]
	verdict $? mem_w_samples \
		"perf record exit $rc, $samples samples ($in_writes in writes()), want $writes"
}

# Four counting watchpoints on the words of "slots" count their writes
# exactly.  Eight on one task: Debian's perf does not set
# perf_event_attr::bp_flexible, so the fifth gets ENOSPC, on 6.12 and on
# this series alike (a breakpoint without the bit keeps 6.12's
# behaviour, see Documentation/arch/x86/flexible-breakpoints.rst), and
# perf stat gives up with that error.
case_mem_stat() {
	per_slot=100
	slots=$(addr slots)
	events=
	i=0
	while [ $i -lt 8 ]; do
		events="$events${events:+,}mem:$(printf '%#x' $((slots + 8 * i)))/8:w:u"
		i=$((i + 1))
	done
	four=$(echo "$events" | cut -d, -f1-4)
	perf stat -x, -e "$four" -- "$PROG" slots "$per_slot" > "$TMP/stat4.out" 2>&1
	rc=$?
	show "$TMP/stat4.out"
	counts=$(awk -F, '$3 ~ /^mem:/ { printf "%s%s", sep, $1; sep = " " }' "$TMP/stat4.out")
	[ "$rc" = 0 ] && [ "$counts" = "$per_slot $per_slot $per_slot $per_slot" ]
	verdict $? mem_w_stat_4 "perf stat exit $rc, counts '$counts', want 4 x $per_slot"

	perf stat -x, -e "$events" -- "$PROG" slots "$per_slot" > "$TMP/stat8.out" 2>&1
	rc=$?
	show "$TMP/stat8.out"
	if [ "$rc" != 0 ] && grep -q '(No space left on device)' "$TMP/stat8.out"; then
		ok mem_w_stat_8_enospc "no bp_flexible in Debian's perf: ENOSPC, as 6.12"
	else
		not_ok mem_w_stat_8_enospc "want perf stat to fail with ENOSPC as on 6.12, got exit $rc"
	fi
}

# The counting counters, through perf stat and perf record: spin(N) is
# 2 N instructions and N branches; the rest of prog (a static binary)
# adds a few thousand of each.
case_pmu() {
	loops=10000000
	perf stat -x, -e instructions:u,branches:u -- "$PROG" spin "$loops" \
		> "$TMP/pmu-stat.out" 2>&1
	rc=$?
	show "$TMP/pmu-stat.out"
	insns=$(awk -F, '$3 ~ /^instructions/ { print $1 }' "$TMP/pmu-stat.out")
	branches=$(awk -F, '$3 ~ /^branches/ { print $1 }' "$TMP/pmu-stat.out")
	# Within 5% of 2 N instructions, within 1% of N branches.
	within "$insns" $((2 * loops)) 5
	verdict $? stat_instructions \
		"perf stat exit $rc: instructions:u '$insns', want $((2 * loops)) +-5%"
	within "$branches" "$loops" 1
	verdict $? stat_branches "perf stat exit $rc: branches:u '$branches', want $loops +-1%"

	data=$TMP/cycles.data
	perf record -e cycles:u -o "$data" -- "$PROG" spin $((5 * loops)) \
		> "$TMP/cycles-record.out" 2>&1
	rc=$?
	show "$TMP/cycles-record.out"
	# perf script prints a symbol only after its address.
	perf script -i "$data" -F ip,sym 2> "$TMP/cycles-script.err" |
		awk '{ print $2 }' > "$TMP/cycles.script"
	show "$TMP/cycles-script.err"
	samples=$(wc -l < "$TMP/cycles.script")
	in_spin=$(grep -c -x 'spin' "$TMP/cycles.script")
	echo "# $samples samples, $in_spin in spin(); by symbol:"
	sort "$TMP/cycles.script" | uniq -c | sort -r -n | show - 10
	# At least 10 samples, nine in ten of them in spin().
	[ "$rc" = 0 ] && [ "$samples" -ge 10 ] && [ $((in_spin * 10)) -ge $((samples * 9)) ]
	verdict $? record_cycles "perf record exit $rc, $samples samples, $in_spin in spin()"
}

mkdir -p "$TMP"
cd "$TMP" || exit 1
echo "TAP version 13"
if ! layer; then
	not_ok "${1:-none}" "the clients layer is missing or does not unpack"
	echo "1..$n"
	exit 0
fi
sed 's/^/# /' /clients/versions
case $1 in
gdb) case_gdb ;;
bts) case_bts ;;
mem-record) case_mem_record ;;
mem-stat) case_mem_stat ;;
pmu) case_pmu ;;
*) not_ok "${1:-none}" "unknown group: want gdb, bts, mem-record, mem-stat or pmu" ;;
esac
echo "1..$n"
exit 0
