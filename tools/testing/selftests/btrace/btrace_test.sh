#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The btrace tool (tools/debugging/btrace) held against its documentation
# (btrace.1, its README, Documentation/arch/x86/ptrace-bts.rst "Using it
# from a debugger"), in the guest: /bin/btrace and the target programs of
# the Makefile, in the directory of this script with the "lines" file
# it wrote (NAME=LINE for each "MARK NAME" of the sources).
#
# Prints KTAP; exits 1 if a case failed, else 0.  On a CPU without BTS
# every case that needs it is skipped with the tool's own message, and
# the message itself is a case.

BTRACE=${BTRACE:-btrace}
# A bound for each run of btrace: a hang fails its case, not the suite.
LIMIT=${BTRACE_TEST_LIMIT:-150}
cd "$(dirname "$0")" || exit 1
if ! command -v "$BTRACE" > /dev/null; then
	# kselftest's exit code for a skipped test.
	echo "TAP version 13"
	echo "1..0 # SKIP no $BTRACE: build tools/debugging/btrace, or set BTRACE"
	exit 4
fi
# shellcheck source=/dev/null
. ./lines || { echo "Bail out! no ./lines (build with make)"; exit 1; }

tmp=$(mktemp -d /tmp/btrace_test.XXXXXX) || exit 1
spinner=
stopped=		# a bt_stop that a failed case may leave stopped
# Kill $stopped if it is still a bt_stop (in a group of its own, the
# timeout of its btrace does not reach it).
end_stopped() {
	[ -n "$stopped" ] && [ "$(cat "/proc/$stopped/comm" 2>/dev/null)" = bt_stop ] &&
		kill -9 "$stopped" 2>/dev/null
	stopped=
}
cleanup() {
	[ -n "$spinner" ] && kill -9 "$spinner" 2>/dev/null
	end_stopped
	rm -rf "$tmp"
}
trap cleanup EXIT

ntests=0
failed=0
nobts=			# the tool's message on a CPU without BTS
why=			# why the current case failed

# KTAP by hand rather than kselftest/ktap_helpers.sh, whose
# ktap_test_skip() takes no reason: every SKIP here says why.
ok() { ntests=$((ntests + 1)); echo "ok $ntests $1"; }
not_ok() {
	ntests=$((ntests + 1))
	failed=$((failed + 1))
	echo "not ok $ntests $1"
}
skip() { ntests=$((ntests + 1)); echo "ok $ntests $1 # SKIP $2"; }
fail() { why="$*"; return 1; }

# Show what a run printed, as KTAP diagnostics, when its case fails.
show() { # file [lines]
	echo "# --- $1 (last ${2:-40} lines)"
	tail -n "${2:-40}" "$1" | sed 's/^/# /'
}

# Run a case: name, needs-BTS (1/0), function.  The function sets $why
# and returns non-zero on failure.
run_case() { # name needs_bts function
	local t0=$SECONDS
	if [ "$2" = 1 ] && [ -n "$nobts" ]; then
		skip "$1" "$nobts"
		return
	fi
	why=
	if "$3"; then
		ok "$1"
	else
		echo "# $1: ${why:-failed} ($((SECONDS - t0)) s)"
		not_ok "$1"
	fi
}

# btrace with a bound; output (stdout and stderr) in $tmp/$1, status in $rc.
bt() { # outname args...
	local out=$tmp/$1
	shift
	timeout "$LIMIT" "$BTRACE" "$@" > "$out" 2>&1
	rc=$?
}

# The "at FILE:FIRST-LAST" range of a function-call-history line
# includes LINE of FILE (a basename).
range_has() { # history-line file line
	local r first last re
	re="s/.*at \([^ ]*\/\)\{0,1\}$2:\([0-9]*\)-\([0-9]*\).*/\2 \3/p"
	r=$(printf '%s\n' "$1" | sed -n "$re")
	[ -n "$r" ] || return 1
	read -r first last <<< "$r"
	[ "$first" -le "$3" ] && [ "$3" -le "$last" ]
}

# The last line of the history in $1 whose function is $2, with its line
# number in the file: "NR<TAB>line".  The function is the second
# tab-separated field, indented by call depth.
last_run_of() { # file function
	awk -F'\t' -v fn="$2" '
		{ f = $2; sub(/^ */, "", f) }
		f == fn { nr = NR; line = $0 }
		END { if (nr) printf "%d\t%s\n", nr, line }' "$1"
}

# Some run of function $2 in the history $1 spans LINE of FILE.
any_run_has() { # file function srcfile line
	local l
	awk -F'\t' -v fn="$2" '{ f = $2; sub(/^ */, "", f) } f == fn' "$1" > "$tmp/runs"
	while IFS= read -r l; do
		range_has "$l" "$3" "$4" && return 0
	done < "$tmp/runs"
	return 1
}

depth_of() { # history-line
	printf '%s\n' "$1" | awk -F'\t' '{ match($2, /^ */); print RLENGTH }'
}

# ---------------------------------------------------------------------

probe() {
	bt probe -- ./bt_crash 0
	if [ "$rc" = 124 ]; then
		nobts=$(grep -m1 -i 'branch trace store' "$tmp/probe")
		[ -n "$nobts" ] || nobts=$(grep -m1 . "$tmp/probe")
		nobts=${nobts//#/}
		echo "# no BTS: btrace says:"
		sed 's/^/#   /' "$tmp/probe"
	fi
}

# On a CPU without BTS: exit 124, a message that says the CPU has no
# Branch Trace Store and names `make run` (btrace.1, EXIT STATUS 124).
case_no_bts_message() {
	[ "$rc_probe" = 124 ] || fail "exit status $rc_probe, not 124"
	grep -qi -e 'no branch trace store' -e 'has no .*branch trace store' \
		-e 'without .*branch trace store' "$tmp/probe" ||
		{ show "$tmp/probe"; fail "no message that the CPU has no Branch Trace Store"; }
	grep -q 'make run' "$tmp/probe" ||
		{ show "$tmp/probe"; fail "the message does not mention 'make run'"; }
}

# main -> func_a -> func_b -> func_c, SIGSEGV at 0x1234 in func_c.
crash_run() {
	[ -f "$tmp/crash" ] && return 0
	bt crash -o "$tmp/crash.bt" -- ./bt_crash
	rc_crash=$rc
}

case_crash_signal() {
	local sig='^btrace: thread [0-9]+ \(bt_crash\) got SIGSEGV'
	crash_run
	grep -Eq "$sig"'.* at address 0x1234([^0-9a-fx]|$)' "$tmp/crash" ||
		{ show "$tmp/crash"; fail "no 'got SIGSEGV ... at address 0x1234' line"; }
}

case_crash_exit_status() {
	crash_run
	[ "$rc_crash" = 139 ] ||
		{ show "$tmp/crash" 5; fail "exit status $rc_crash, not 128 + SIGSEGV = 139"; }
}

case_crash_history() {
	local fn prev=0 prevdepth=-1 r nr line depth want rest
	crash_run
	for fn in main func_a func_b func_c; do
		case $fn in
		main) want=$MAIN_CALL ;;
		func_a) want=$A_CALL ;;
		func_b) want=$B_CALL ;;
		func_c) want=$C_FAULT ;;
		esac
		r=$(last_run_of "$tmp/crash" "$fn")
		[ -n "$r" ] || {
			show "$tmp/crash"
			fail "$fn is not in the function-call history"
			return
		}
		nr=${r%%	*}
		line=${r#*	}
		[ "$nr" -gt "$prev" ] || {
			show "$tmp/crash"
			fail "$fn is not after the previous function"
			return
		}
		depth=$(depth_of "$line")
		[ "$depth" -gt "$prevdepth" ] || {
			show "$tmp/crash"
			fail "$fn is not deeper than its caller: $line"
			return
		}
		range_has "$line" bt_crash.c "$want" || {
			show "$tmp/crash"
			fail "$fn: its range does not include bt_crash.c:$want: $line"
			return
		}
		prev=$nr
		prevdepth=$depth
	done
	# func_c is the last function of the history: the fault is the end.
	rest=$(sed -n "$((prev + 1)),\$p" "$tmp/crash" | grep -v '^btrace:' | grep -v '\[kernel\]')
	[ "$(grep -c . <<< "$rest")" = 0 ] ||
		{ show "$tmp/crash"; fail "functions after func_c"; }
}

# --branches: "from -> to", each "ADDR SYM+OFF (FILE:LINE)"; the last
# record of the crashing thread is func_c's fault, into [kernel].
case_crash_branches() {
	local f=$tmp/crash_br last
	bt crash_br --branches -o "$tmp/crash_br.bt" -- ./bt_crash
	[ "$rc" = 139 ] || { show "$f" 5; fail "exit status $rc, not 139"; return; }
	# s: an address; o: +offset and space; c: "(" and the file up to its line
	local s='0x[0-9a-f]+ ' o='\+0x[0-9a-f]+ ' c='\([^ ]*bt_crash\.c:'
	grep -Eq "${s}main${o}${c}$MAIN_CALL\) -> ${s}func_a\+0x0 ${c}[0-9]+\)" "$f" ||
		{ show "$f"; fail "no branch main (bt_crash.c:$MAIN_CALL) -> func_a+0x0"; return; }
	grep -Eq "${s}func_a${o}${c}$A_CALL\) -> ${s}func_b\+0x0 ${c}[0-9]+\)" "$f" ||
		{ show "$f"; fail "no branch func_a (bt_crash.c:$A_CALL) -> func_b+0x0"; return; }
	grep -Eq "${s}func_b${o}${c}$B_CALL\) -> ${s}func_c\+0x0 ${c}[0-9]+\)" "$f" ||
		{ show "$f"; fail "no branch func_b (bt_crash.c:$B_CALL) -> func_c+0x0"; return; }
	last=$(grep -E '^ *[0-9]+ +0x' "$f" | tail -n 1)
	grep -Eq "${s}func_c${o}${c}$C_FAULT\) -> \[kernel\]\$" <<< "$last" || {
		show "$f"
		fail "the last branch is not func_c (bt_crash.c:$C_FAULT) -> [kernel]: $last"
	}
}

# Exit status of a program that exits: its exit code.
case_exit_code() {
	bt exit3 -n 0 -- ./bt_crash 3
	[ "$rc" = 3 ] || { show "$tmp/exit3" 5; fail "exit status $rc, not 3"; return; }
	grep -q '^btrace: thread [0-9]* (bt_crash) exited' "$tmp/exit3" ||
		{ show "$tmp/exit3"; fail "no 'thread ... exited' report"; return; }
	r=$(last_run_of "$tmp/exit3" func_c)
	range_has "${r#*	}" bt_crash.c "$C_EXIT" || {
		show "$tmp/exit3"
		fail "func_c (bt_crash.c:$C_EXIT) is not in the exit's history"
	}
}

# Threads: each reported at its exit, each with its own function.
case_threads() {
	local f=$tmp/threads fn other
	bt threads -n 0 -o "$tmp/threads.bt" -- ./bt_threads
	[ "$rc" = 0 ] || { show "$f" 5; fail "exit status $rc, not 0"; return; }
	n=$(grep -c '^btrace: thread [0-9]* (bt_threads) exited' "$f")
	[ "$n" = 4 ] || { show "$f" 5; fail "$n threads reported, not 4"; return; }
	# Split the output into one file per thread report.
	awk -v d="$tmp" '/^btrace: thread /{ n++ } n { print > (d "/thr." n) }' "$f"
	for fn in thread_alpha thread_beta thread_gamma; do
		case $fn in
		thread_alpha) want=$ALPHA ;;
		thread_beta) want=$BETA ;;
		thread_gamma) want=$GAMMA ;;
		esac
		n=$(grep -l "	 *$fn	" "$tmp"/thr.* | wc -l)
		[ "$n" = 1 ] || { show "$f" 20; fail "$fn is in $n thread reports, not 1"; return; }
		t=$(grep -l "	 *$fn	" "$tmp"/thr.*)
		for other in thread_alpha thread_beta thread_gamma; do
			[ "$other" = "$fn" ] && continue
			! grep -q "	 *$other	" "$t" || {
				show "$t" 20
				fail "the thread of $fn also shows $other"
				return
			}
		done
		any_run_has "$t" "$fn" bt_threads.c "$want" ||
			{ show "$t" 20; fail "no run of $fn includes bt_threads.c:$want"; return; }
	done
}

# exec: the functions of both programs, the exec between them.
case_exec() {
	local f=$tmp/exec r1 r2 nx
	bt exec -n 0 -- ./bt_exec_first
	[ "$rc" = 7 ] || { show "$f" 5; fail "exit status $rc, not 7 (bt_exec_second's)"; return; }
	r1=$(last_run_of "$f" first_before_exec)
	r2=$(last_run_of "$f" second_after_exec)
	[ -n "$r1" ] || {
		show "$f"
		fail "first_before_exec (before the exec) is not symbolized"
		return
	}
	[ -n "$r2" ] || {
		show "$f"
		fail "second_after_exec (after the exec) is not symbolized"
		return
	}
	range_has "${r1#*	}" bt_exec_first.c "$FIRST_EXEC" || {
		fail "first_before_exec: range without bt_exec_first.c:$FIRST_EXEC: ${r1#*	}"
		return
	}
	range_has "${r2#*	}" bt_exec_second.c "$SECOND_EXIT" || {
		fail "second_after_exec: range without bt_exec_second.c:$SECOND_EXIT: ${r2#*	}"
		return
	}
	nx=$(grep -n '	 *\[exec\]' "$f" | head -n 1 | cut -d: -f1)
	{ [ -n "$nx" ] && [ "${r1%%	*}" -lt "$nx" ] && [ "$nx" -lt "${r2%%	*}" ]; } ||
		{ show "$f"; fail "no [exec] between first_before_exec and second_after_exec"; }
}

# -p PID, then SIGINT: btrace detaches, reports, exits 0; the target
# runs on.
case_attach() {
	local f=$tmp/attach btpid state
	./bt_loop spin &
	spinner=$!
	sleep 1
	timeout "$LIMIT" "$BTRACE" -p "$spinner" > "$f" 2>&1 &
	btpid=$!
	# Attached when the target has a tracer.
	for _ in $(seq 100); do
		grep -q '^TracerPid:[[:space:]]*[1-9]' "/proc/$spinner/status" 2>/dev/null && break
		sleep 0.2
	done
	sleep 3
	kill -INT "$btpid"
	wait "$btpid"
	rc=$?
	[ "$rc" = 0 ] || { show "$f"; fail "exit status $rc after SIGINT, not 0"; return; }
	grep -q '^btrace: thread [0-9]* (bt_loop)' "$f" ||
		{ show "$f"; fail "no report of the thread"; return; }
	grep -Eq '	 *(spin_step|spin_forever)	' "$f" ||
		{ show "$f"; fail "spin_step/spin_forever not in the report"; return; }
	any_run_has "$f" spin_step bt_loop.c "$SPIN_STEP" ||
		{ show "$f"; fail "no run of spin_step includes bt_loop.c:$SPIN_STEP"; return; }
	sleep 1
	kill -0 "$spinner" 2>/dev/null || { fail "the target is gone"; return; }
	grep -q '^TracerPid:[[:space:]]*0$' "/proc/$spinner/status" ||
		{ fail "the target is still traced"; return; }
	state=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$spinner/status")
	case $state in
	R|S) ;;
	*) fail "the target is in state $state, not running"; return ;;
	esac
	kill -9 "$spinner"
	wait "$spinner" 2>/dev/null
	spinner=
}

# The state of process $1 (R, S, T, t...), empty if it is gone.
state_of() { # pid
	sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/$1/status" 2>/dev/null
}

# The times process $1 was switched out, voluntarily or not: a stopped
# process does not run, so they do not change.
switches_of() { # pid
	awk '/^(non)?voluntary_ctxt_switches:/ { n += $2 } END { print n }' \
		"/proc/$1/status" 2>/dev/null
}

# A job-control stop of a traced process is kept until SIGCONT: bt_stop
# SIG says it is stopping and stops itself with SIG.  For $HOLD seconds
# it must stay stopped (T, or t: a stopped traced process is in a
# tracing stop) without running, and print nothing more, while btrace,
# its tracer, runs on without being stopped itself ("btrace itself stops
# only with Ctrl-Z").  After SIGCONT it goes on: it prints "continued",
# btrace exits with its status, 5, and its report has after_stop().
HOLD=3
stop_kept() { # signal: STOP, TSTP, TTIN or TTOU
	local sig=$1 f=$tmp/stop_$1 btpid pid tracer n0 n1 state r
	: > "$f"
	timeout "$LIMIT" "$BTRACE" -n 0 -- ./bt_stop "$sig" > "$f" 2>&1 &
	btpid=$!
	until grep -q '^bt_stop: [0-9]* stopping' "$f"; do
		kill -0 "$btpid" 2>/dev/null || break
		sleep 0.2
	done
	pid=$(sed -n 's/^bt_stop: \([0-9]*\) stopping.*/\1/p' "$f")
	if [ -z "$pid" ]; then
		wait "$btpid"
		rc=$?
		show "$f"
		fail "SIG$sig: bt_stop did not say it was stopping (btrace exited with $rc)"
		return
	fi
	stopped=$pid
	# Wait (at most 10 s) until it is stopped: T or t, and not running.
	for _ in $(seq 20); do
		grep -q '^bt_stop: [0-9]* continued' "$f" && break
		state=$(state_of "$pid")
		case $state in
		T|t) ;;
		'') break ;;
		*) sleep 0.5; continue ;;
		esac
		n0=$(switches_of "$pid")
		sleep 0.5
		[ "$(switches_of "$pid")" = "$n0" ] && break
	done
	n0=$(switches_of "$pid")
	for _ in $(seq $((HOLD * 5))); do
		state=$(state_of "$pid")
		case $state in
		T|t) ;;
		*) break ;;
		esac
		sleep 0.2
	done
	n1=$(switches_of "$pid")
	tracer=$(sed -n 's/^TracerPid:[[:space:]]*//p' "/proc/$pid/status" 2>/dev/null)
	if grep -q '^bt_stop: [0-9]* continued' "$f"; then
		why="SIG$sig: bt_stop went on before SIGCONT"
	elif [ "$state" != T ] && [ "$state" != t ]; then
		why="SIG$sig: bt_stop is in state '$state', not stopped (T or t)"
	elif [ "$n1" != "$n0" ]; then
		why="SIG$sig: bt_stop ran $((n1 - n0)) times in ${HOLD} s while stopped"
	elif [ "${tracer:-0}" = 0 ]; then
		why="SIG$sig: bt_stop is not traced"
	elif [ "$(state_of "$tracer")" = T ]; then
		why="SIG$sig: btrace (pid $tracer) is stopped too"
	fi
	if [ -n "$why" ]; then
		# Killing the target ends the run: btrace reports its death.
		end_stopped
		[ "${tracer:-0}" != 0 ] && kill -CONT "$tracer" 2>/dev/null
		wait "$btpid"
		grep -E '^(bt_stop|btrace):' "$f" > "$f.lines"
		show "$f.lines"
		return 1
	fi
	kill -CONT "$pid"
	wait "$btpid"
	rc=$?
	end_stopped
	[ "$rc" = 5 ] ||
		{ show "$f"; fail "SIG$sig: exit status $rc after SIGCONT, not 5"; return; }
	grep -q "^bt_stop: $pid continued" "$f" ||
		{ show "$f"; fail "SIG$sig: bt_stop did not go on after SIGCONT"; return; }
	grep -q "^btrace: thread $pid (bt_stop) exited" "$f" ||
		{ show "$f"; fail "SIG$sig: no 'thread $pid (bt_stop) exited' report"; return; }
	r=$(last_run_of "$f" after_stop)
	range_has "${r#*	}" bt_stop.c "$AFTER_STOP" || {
		show "$f"
		fail "SIG$sig: after_stop (bt_stop.c:$AFTER_STOP) is not in the exit's history"
	}
}

case_sigstop_kept() {
	stop_kept STOP
}

case_tty_stops_kept() {
	local sig
	for sig in TSTP TTIN TTOU; do
		stop_kept "$sig" || return
	done
}

# btrace report FILE prints exactly what the run printed.
same() { # live saved what
	cmp -s "$1" "$2" && return 0
	echo "# diff of the live run and the report ($3):"
	diff "$1" "$2" | head -n 20 | sed 's/^/# /'
	return 1
}

case_report_same() {
	crash_run
	bt crash_rep report "$tmp/crash.bt"
	[ "$rc" = 0 ] || { show "$tmp/crash_rep" 5; fail "report exit status $rc, not 0"; return; }
	same "$tmp/crash" "$tmp/crash_rep" crash || { fail "report of the crash differs"; return; }
	bt threads_rep report "$tmp/threads.bt"
	[ "$rc" = 0 ] ||
		{ show "$tmp/threads_rep" 5; fail "report exit status $rc, not 0"; return; }
	same "$tmp/threads" "$tmp/threads_rep" threads || fail "report of the threads differs"
}

case_report_same_branches() {
	[ -f "$tmp/crash_br.bt" ] || { fail "no trace saved by --branches -o"; return; }
	bt crash_br_rep report --branches "$tmp/crash_br.bt"
	[ "$rc" = 0 ] ||
		{ show "$tmp/crash_br_rep" 5; fail "report exit status $rc, not 0"; return; }
	same "$tmp/crash_br" "$tmp/crash_br_rep" "--branches" || fail "report --branches differs"
}

# "In both [views], a branch into the kernel reads [kernel]": every
# [kernel] run of the history of the saved crash is a record that the
# branch list of the same trace shows going to [kernel].
case_kernel_runs_agree() {
	local a bad=0
	crash_run
	bt hist_all report -n 0 "$tmp/crash.bt"
	bt br_all report -n 0 --branches "$tmp/crash.bt"
	# shellcheck disable=SC2013 # one record number a line
	for a in $(awk -F'\t' '$2 ~ /^ *\[kernel\]$/ { split($3, r, /[ ,]/); print r[2] }' \
			"$tmp/hist_all"); do
		grep -Eq "^ *$a +0x[0-9a-f]+ .* -> \[kernel\]\$" "$tmp/br_all" && continue
		echo "# history: [kernel] at record $a; branch list:"
		grep -E "^ *$a +0x" "$tmp/br_all" | sed 's/^/#   /'
		bad=$((bad + 1))
	done
	[ "$bad" = 0 ] || fail "$bad [kernel] runs of the history are not branches into the kernel"
}

# --all: lossless.  count_loop's back edge is taken exactly 99999 times:
# count the branches from count_loop to count_loop in the saved trace.
case_all_lossless() {
	local f=$tmp/all n s='0x[0-9a-f]+ ' c='\([^ ]*bt_loop\.c:'
	bt all --all -n 1 -o "$tmp/all.bt" -- ./bt_loop count
	[ "$rc" = 0 ] || { show "$f" 5; fail "exit status $rc, not 0"; return; }
	! grep -qi 'lost' "$f" || { show "$f"; fail "the run reports lost branches"; return; }
	bt all_br report --branches -n 0 "$tmp/all.bt"
	[ "$rc" = 0 ] || { show "$tmp/all_br" 5; fail "report exit status $rc, not 0"; return; }
	! grep -qi 'lost' "$tmp/all_br" || {
		grep -i lost "$tmp/all_br" | head -n 5 | sed 's/^/# /'
		fail "the report says branches were lost"
		return
	}
	n=$(grep -Ec "${s}count_loop\+${s}${c}[0-9]+\) -> ${s}count_loop\+" "$tmp/all_br")
	[ "$n" = 99999 ] || { fail "$n back edges of count_loop, not 99999"; return; }
	# The back edge goes from the loop's condition.
	n=$(grep -Ec "count_loop\+${s}${c}$BACK_EDGE\) -> ${s}count_loop\+" "$tmp/all_br")
	[ "$n" = 99999 ] || fail "$n back edges from bt_loop.c:$BACK_EDGE, not 99999"
}

# The files in directory $1, for a failure, as diagnostics.
show_dir() { # dir what
	echo "# $2:"
	# shellcheck disable=SC2012 # for reading, not parsing
	ls -lA "$1" | sed 's/^/#   /'
}

# --all and BTRACE_TEST_SPOOL=1: a thread's records go to an unlinked
# file in TMPDIR once there are more than 1024, removed when btrace
# exits.  bt_stop, with no signal, has thousands: with TMPDIR an empty
# directory, the run and the reports of its saved trace lose none of
# the 2999 back edges of stop_loop's 3000 iterations, the report prints
# what the run printed (but bt_stop's own line), and the directory is
# empty after each.
case_all_spooled() {
	local d=$tmp/spool f=$tmp/spool_run n s='0x[0-9a-f]+ ' c='\([^ ]*bt_stop\.c:'
	mkdir "$d" || { fail "cannot make $d"; return; }
	BTRACE_TEST_SPOOL=1 TMPDIR=$d bt spool_run --all -n 1 -o "$tmp/spool.bt" -- ./bt_stop
	[ "$rc" = 5 ] || { show "$f" 5; fail "exit status $rc, not 5"; return; }
	! grep -qi 'lost' "$f" || { show "$f"; fail "the run reports lost branches"; return; }
	[ -z "$(ls -A "$d")" ] ||
		{ show_dir "$d" TMPDIR; fail "the run left files in TMPDIR"; return; }
	BTRACE_TEST_SPOOL=1 TMPDIR=$d bt spool_rep report "$tmp/spool.bt"
	[ "$rc" = 0 ] || { show "$tmp/spool_rep" 5; fail "report exit status $rc, not 0"; return; }
	grep -v '^bt_stop: ' "$f" > "$tmp/spool_run.bt_only"
	same "$tmp/spool_run.bt_only" "$tmp/spool_rep" "spooled --all" ||
		{ fail "report of the spooled run differs"; return; }
	BTRACE_TEST_SPOOL=1 TMPDIR=$d bt spool_br report --branches -n 0 "$tmp/spool.bt"
	[ "$rc" = 0 ] || { show "$tmp/spool_br" 5; fail "report exit status $rc, not 0"; return; }
	! grep -qi 'lost' "$tmp/spool_br" || {
		grep -i lost "$tmp/spool_br" | head -n 5 | sed 's/^/# /'
		fail "the report says branches were lost"
		return
	}
	n=$(grep -Ec "stop_loop\+${s}${c}$STOP_EDGE\) -> ${s}stop_loop\+" "$tmp/spool_br")
	[ "$n" = 2999 ] || { fail "$n back edges from bt_stop.c:$STOP_EDGE, not 2999"; return; }
	[ -z "$(ls -A "$d")" ] ||
		{ show_dir "$d" TMPDIR; fail "the reports left files in TMPDIR"; }
}

# "a directory without room ends the run with exit status 125": TMPDIR
# a directory that does not exist; the message names it.
case_spool_no_dir() {
	local d=$tmp/no-such-dir f=$tmp/spool_nodir
	BTRACE_TEST_SPOOL=1 TMPDIR=$d bt spool_nodir --all -n 1 -- ./bt_stop
	[ "$rc" = 125 ] || { show "$f" 5; fail "exit status $rc, not 125"; return; }
	grep -v '^bt_stop: ' "$f" | grep -qF "$d" ||
		{ show "$f" 5; fail "no message names $d"; }
}

# Usage errors: exit 2 and the usage; the other documented codes.
case_usage_no_args() {
	bt usage0
	[ "$rc" = 2 ] || { show "$tmp/usage0" 5; fail "exit status $rc, not 2"; return; }
	grep -q '^usage: btrace' "$tmp/usage0" || { show "$tmp/usage0" 5; fail "no usage printed"; }
}

case_usage_bad_option() {
	bt usage1 --no-such-option -- ./bt_crash 0
	[ "$rc" = 2 ] || { show "$tmp/usage1" 5; fail "exit status $rc, not 2"; return; }
	grep -q 'no-such-option' "$tmp/usage1" ||
		{ show "$tmp/usage1" 5; fail "the bad option is not named"; return; }
	grep -q '^usage: btrace' "$tmp/usage1" || { show "$tmp/usage1" 5; fail "no usage printed"; }
}

case_usage_bad_number() {
	bt usage2 -n many -- ./bt_crash 0
	[ "$rc" = 2 ] || { show "$tmp/usage2" 5; fail "exit status $rc, not 2"; return; }
	grep -q "many" "$tmp/usage2" ||
		{ show "$tmp/usage2" 5; fail "the bad number is not named"; }
}

case_usage_size_too_big() {
	# -s: at most 524288 records.
	bt usage3 -s 524289 -- ./bt_crash 0
	[ "$rc" = 2 ] || { show "$tmp/usage3" 5; fail "exit status $rc for -s 524289, not 2"; }
}

case_help() {
	bt help --help
	[ "$rc" = 0 ] || { show "$tmp/help" 5; fail "exit status $rc, not 0"; return; }
	grep -q '^usage: btrace' "$tmp/help" || fail "no usage printed"
}

case_prog_not_found() {
	bt nf -- ./no-such-program
	[ "$rc" = 127 ] || { show "$tmp/nf" 5; fail "exit status $rc, not 127"; }
}

case_prog_not_executable() {
	bt nx -- ./lines
	[ "$rc" = 126 ] || { show "$tmp/nx" 5; fail "exit status $rc, not 126"; }
}

case_report_unreadable() {
	bt unr report "$tmp/no-such-trace"
	[ "$rc" = 125 ] || { show "$tmp/unr" 5; fail "exit status $rc, not 125"; }
}

# The probe, bt_crash 0 (exits with 0 before faulting): status 0.
case_probe_status() {
	[ "$rc_probe" = 0 ] || { show "$tmp/probe" 5; fail "exit status $rc_probe, not 0"; }
}

# ---------------------------------------------------------------------

echo "TAP version 13"
echo "1..26"
probe
rc_probe=$rc
if [ -n "$nobts" ]; then
	run_case "no BTS message" 0 case_no_bts_message
else
	skip "no BTS message" "the CPU has BTS (btrace exited with $rc_probe)"
fi
run_case "crash signal and address" 1 case_crash_signal
run_case "crash exit status" 1 case_crash_exit_status
run_case "crash function-call history" 1 case_crash_history
run_case "crash branches" 1 case_crash_branches
run_case "exit code" 1 case_exit_code
run_case "threads" 1 case_threads
run_case "exec" 1 case_exec
run_case "attach and SIGINT" 1 case_attach
run_case "SIGSTOP kept until SIGCONT" 1 case_sigstop_kept
run_case "SIGTSTP, SIGTTIN and SIGTTOU kept until SIGCONT" 1 case_tty_stops_kept
run_case "report equals live run" 1 case_report_same
run_case "report equals live run with --branches" 1 case_report_same_branches
run_case "all lossless" 1 case_all_lossless
run_case "all spooled to TMPDIR" 1 case_all_spooled
run_case "spool directory missing" 1 case_spool_no_dir
run_case "kernel runs agree with branches" 1 case_kernel_runs_agree
run_case "usage no arguments" 0 case_usage_no_args
run_case "usage unknown option" 0 case_usage_bad_option
run_case "usage bad number" 0 case_usage_bad_number
run_case "usage size too big" 0 case_usage_size_too_big
run_case "help" 0 case_help
run_case "program not found" 0 case_prog_not_found
run_case "program not executable" 0 case_prog_not_executable
run_case "report of unreadable file" 0 case_report_unreadable
run_case "probe run exit status" 1 case_probe_status

echo "# $ntests cases, $failed failed"
[ "$failed" = 0 ]
