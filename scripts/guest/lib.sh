# SPDX-License-Identifier: GPL-2.0
# Helpers for the guest init: run each kind of test and report one
# "@@ RESULT <suite> <PASS|FAIL|SKIP> <case> [# reason]" line per case.

report() {
	echo "@@ $*" >&3
}

result() { # suite status case [reason]
	if [ -n "$4" ]; then
		report "RESULT $1 $2 $3 # $4"
	else
		report "RESULT $1 $2 $3"
	fi
}

# Turn the top-level (K)TAP "ok"/"not ok" lines of $2 into results of
# suite $1.  Prints how many it found.
tap_results() { # suite file indent
	awk -v suite="$1" -v indent="$3" '
	function emit(status, rest,    name, reason) {
		reason = ""
		if (match(rest, /[ \t]*#.*/)) {
			reason = substr(rest, RSTART, RLENGTH)
			rest = substr(rest, 1, RSTART - 1)
			sub(/^[ \t]*#[ \t]*/, "", reason)
		}
		sub(/^[0-9]+[ \t]*(-[ \t]*)?/, "", rest)
		gsub(/[ \t]+/, "_", rest)
		if (rest == "")
			rest = "case" n
		if (status == "PASS" && reason ~ /^(SKIP|skip)/)
			status = "SKIP"
		if (reason != "")
			printf "@@ RESULT %s %s %s # %s\n", suite, status, rest, reason
		else
			printf "@@ RESULT %s %s %s\n", suite, status, rest
		n++
	}
	{
		line = $0
		lead = match(line, /[^ ]/) - 1
		if (lead != indent)
			next
		line = substr(line, lead + 1)
		if (line ~ /^not ok /)
			emit("FAIL", substr(line, 8))
		else if (line ~ /^ok /)
			emit("PASS", substr(line, 4))
	}
	END { exit n == 0 }
	' "$2" >&3
}

# KUnit suites run at boot; their KTAP results are in debugfs.  A suite
# named in the plan that did not run is a failure, not a silent pass.
run_kunit() { # suite
	f=/sys/kernel/debug/kunit/$1/results
	if [ ! -f "$f" ]; then
		result "kunit:$1" FAIL suite-missing "not built into this kernel"
		return
	fi
	echo "### kunit $1"
	cat "$f"
	tap_results "kunit:$1" "$f" 4 ||
		result "kunit:$1" FAIL no-cases "the suite reported no cases"
}

# A kselftest program: TAP on stdout, exit 0 pass, 4 skip, else fail.
run_kselftest() { # suite program timeout [args...]
	suite=$1 prog=$2 limit=$3
	shift 3
	out=/tmp/out.$$
	echo "### kselftest $suite $prog $*"
	(cd "$(dirname "$prog")" && timeout "$limit" "./$(basename "$prog")" "$@") > "$out" 2>&1
	rc=$?
	set -- "$suite" "$prog" "$limit"
	cat "$out"
	name=$(basename "$2")
	if tap_results "$1" "$out" 0; then
		if grep -q '^not ok ' "$out"; then
			:
		elif [ "$rc" = 4 ]; then
			:
		elif [ "$rc" != 0 ]; then
			result "$1" FAIL "$name" "exit status $rc although no case failed"
		fi
	else
		case $rc in
		0) result "$1" PASS "$name" ;;
		4) result "$1" SKIP "$name" "$(grep -m1 -i 'skip' "$out" | sed 's/^[# ]*//')" ;;
		124|137|143) result "$1" FAIL "$name" "timed out after $3 s" ;;
		*) result "$1" FAIL "$name" "exit status $rc" ;;
		esac
	fi
	rm -f "$out"
}

# ftracetest cases, one per .tc file, in KTAP mode.
run_ftracetest() { # suite testfile timeout
	out=/tmp/out.$$
	echo "### ftracetest $2"
	(cd /selftests/ftrace && timeout "$3" ./ftracetest -K -vv "$2") > "$out" 2>&1
	rc=$?
	cat "$out"
	tap_results "$1" "$out" 0 ||
		result "$1" FAIL "$(basename "$2")" "ftracetest reported nothing (exit $rc)"
	rm -f "$out"
}

# A benchmark: not a test, so no verdict unless it fails.  Its stdout
# lines "BENCH KEY VALUE" go to the host as "@@ BENCH NAME KEY VALUE",
# its other lines as "@@ BENCH-SAYS NAME ..." (its own in-run ratios).
run_bench() { # name command...
	name=$1
	shift
	out=/tmp/out.$$
	echo "### bench $name $*"
	"$@" > "$out" 2>&1
	rc=$?
	cat "$out"
	sed -n -e "s/^BENCH \([^ ]*\) \([^ ]*\)\$/@@ BENCH $name \1 \2/p" \
		-e t -e "s/^/@@ BENCH-SAYS $name /p" "$out" >&3
	[ "$rc" = 0 ] || result "bench:$name" FAIL "$name" "exit status $rc"
	rm -f "$out"
}

# A plan: one line each, "kunit SUITE", "kselftest SUITE PATH TIMEOUT
# [ARGS...]", "ftracetest SUITE FILE TIMEOUT" (mode check), "bench NAME
# COMMAND ARGS..." (mode bench) or "stress SUITE PATH TIMEOUT [ARGS...]"
# (mode stress, a kselftest run long).  Lines of other modes are left out.
run_plan() { # plan mode
	kunit_done=" "
	while read -r kind a b c; do
		t0=$(cut -d. -f1 /proc/uptime)
		case $2:$kind in
		*:|*:'#'*) continue ;;
		check:kunit) run_kunit "$a"; kunit_done="$kunit_done $a " ;;
		check:kselftest|stress:stress) eval "run_kselftest $a $b $c" ;;
		check:ftracetest) run_ftracetest "$a" "$b" "$c" ;;
		bench:bench) eval "run_bench $a $b $c" ;;
		check:bench|check:stress|bench:kunit|bench:kselftest|bench:ftracetest|bench:stress) ;;
		stress:kunit|stress:kselftest|stress:ftracetest|stress:bench) ;;
		*) result plan FAIL "$kind" "unknown line in plan $1 ($2)" ;;
		esac
		# The console gets each line's time, to show where a run goes.
		echo "### took $(($(cut -d. -f1 /proc/uptime) - t0)) s: $kind $a"
	done < "$1"
	[ "$2" = check ] || return 0
	# A suite built into the kernel but missing from the plan still runs
	# at boot: report it too, so that no result goes unread.
	for d in /sys/kernel/debug/kunit/*/; do
		[ -d "$d" ] || continue
		suite=$(basename "$d")
		case "$kunit_done" in *" $suite "*) continue ;; esac
		run_kunit "$suite"
	done
}

finish() {
	if [ -f /sys/kernel/debug/kmemleak ]; then
		# Two scans: kmemleak reports only objects unreferenced twice.
		echo scan > /sys/kernel/debug/kmemleak
		sleep 1
		echo scan > /sys/kernel/debug/kmemleak
		cat /sys/kernel/debug/kmemleak
	fi
	report DONE
	sync
	# With -no-reboot QEMU exits instead of resetting.
	reboot -f
}
