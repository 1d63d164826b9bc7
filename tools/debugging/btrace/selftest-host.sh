#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# btrace's checks for a machine with or without BTS: builds btrace and
# test/victim.c in a temporary directory and prints "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
# Only the script itself cleans up: bash also runs this trap in a
# subshell that a signal kills, such as the watchdogs below.
trap '[ "$BASHPID" = $$ ] && rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok - $1"; }
not_ok() { fail=$((fail + 1)); echo "not ok - $1"; }
check() { if eval "$2"; then ok "$1"; else not_ok "$1"; fi; }

make -s -C "$here" OUTPUT="$tmp/" > "$tmp/build.log" 2>&1 ||
	{ cat "$tmp/build.log"; echo "0 passed, 1 failed"; exit 1; }
gcc -O0 -g -o "$tmp/victim" "$here/test/victim.c" -lpthread || exit 1
gcc -O0 -g -shared -fPIC -DVICTIM_LIB -o "$tmp/libvictim.so" \
	"$here/test/victim.c" || exit 1
bt=$tmp/btrace
v=$tmp/victim

"$bt" --help > "$tmp/out" 2>&1
check "--help exits 0 and shows the usage" \
	"[ \$? = 0 ] && grep -q '^usage: btrace' $tmp/out"
"$bt" > /dev/null 2>&1
check "no program is a usage error (2)" "[ \$? = 2 ]"
"$bt" -p 1 -- true > /dev/null 2>&1
check "-p with a program is a usage error (2)" "[ \$? = 2 ]"
"$bt" -s 0 -- true > /dev/null 2>&1
check "-s 0 is a usage error (2)" "[ \$? = 2 ]"
"$bt" -n x -- true > /dev/null 2>&1
check "-n x is a usage error (2)" "[ \$? = 2 ]"
"$bt" -s 1152921504606846992K -- true > /dev/null 2>&1
check "-s that overflows with its suffix is a usage error (2)" "[ \$? = 2 ]"
"$bt" --all -s 8 -- true > /dev/null 2> "$tmp/err"
check "--all -s below the lossless minimum is a usage error (2)" \
	"[ \$? = 2 ] && grep -q 'with --all' $tmp/err"
# A header that claims 2^28 records of a file that has none.
{
	printf 'BTRACE\r\n\1\0\0\0\0\0\0\0\62\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0'
	printf '\1\0\0\0\1\0\0\0'
	printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0'
	printf '\0\0\0\20\0\0\0\0'
} > "$tmp/short.bt"
(ulimit -v 1000000; "$bt" report "$tmp/short.bt") > /dev/null 2> "$tmp/err"
check "report of a file shorter than its header says: 125, truncated" \
	"[ \$? = 125 ] && grep -q 'truncated or corrupt' $tmp/err"
# The same through a pipe, whose size is unknown: no room is made (on the
# heap or in TMPDIR) for records that do not come.
BTRACE_TEST_SPOOL=1 TMPDIR=$tmp/nodir "$bt" report /dev/stdin \
	< <(cat "$tmp/short.bt") > /dev/null 2> "$tmp/err"
check "report of a short trace through a pipe says: 125, truncated" \
	"[ \$? = 125 ] && grep -q 'truncated or corrupt' $tmp/err"
# Through a pipe, a length that claims gigabytes makes room only for the
# bytes that come: memory maps, epochs and events alike.
bt_header() { # nmapsets nthreads nevents, each as printf's octal bytes
	printf 'BTRACE\r\n\1\0\0\0\0\0\0\0\62\0\0\0%b%b%b' "$1" "$2" "$3"
}
none='\0\0\0\0' one='\1\0\0\0' huge='\0\0\0\360'
bt_header "$one" "$none" "$none" > "$tmp/maps.bt"
printf '\1\0\0\0\0\0\0\360\0\0\0\0\0\0\0\0' >> "$tmp/maps.bt"
{
	bt_header "$none" "$one" "$none"
	printf '\1\0\0\0\1\0\0\0'
	printf '\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0'
	printf '%b\0\0\0\0\0\0\0\0\0\0\0\0' "$huge"
} > "$tmp/epochs.bt"
bt_header "$none" "$none" "$huge" > "$tmp/events.bt"
for part in maps epochs events; do
	(ulimit -v 1000000; "$bt" report /dev/stdin \
		< <(cat "$tmp/$part.bt")) > /dev/null 2> "$tmp/err"
	check "report through a pipe of a trace that claims 4G of $part: 125, truncated" \
		"[ \$? = 125 ] && grep -q 'truncated or corrupt' $tmp/err"
done
"$bt" report "$tmp/none" > /dev/null 2>&1
check "report of a missing file exits 125" "[ \$? = 125 ]"
echo garbage > "$tmp/garbage"
"$bt" report "$tmp/garbage" > /dev/null 2>&1
check "report of a file that is not a trace exits 125" "[ \$? = 125 ]"
BTRACE_TEST_STEP=1 "$bt" -- "$tmp/none" > /dev/null 2> "$tmp/err"
check "a missing program exits 127 and says so" "[ \$? = 127 ] && grep -q 'cannot run' $tmp/err"

# Without the test mode: the hardware, or a clear refusal.
"$bt" -- "$v" exit > "$tmp/out" 2> "$tmp/err"
rc=$?
if [ $rc = 124 ]; then
	check "no BTS: exit 124 and a message saying what to do" \
		"grep -q -e 'no Branch Trace Store' \
			-e 'does not know PTRACE_BTS' $tmp/err &&
		 grep -q 'make run' $tmp/err"
	hw=0
else
	check "BTS: victim exit runs with its status (7)" "[ $rc = 7 ]"
	hw=1
fi

run() {	# run NAME ARGS...: a traced run of the victim, saved in NAME.bt
	local name=$1
	shift
	if [ $hw = 1 ]; then
		"$bt" -o "$tmp/$name.bt" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err"
	else
		BTRACE_TEST_STEP=1 "$bt" -o "$tmp/$name.bt" "$@" \
			> "$tmp/$name.out" 2> "$tmp/$name.err"
	fi
}

run crash -n 20 -- "$v" crash
check "crash: exits 139 (128 + SIGSEGV)" "[ \$? = 139 ]"
check "crash: says SIGSEGV at address 0x0" \
	"grep -q 'got SIGSEGV (Segmentation fault) at address 0x0' $tmp/crash.out"
fault=$(grep -n '^	\*p = victim_recurse' "$here/test/victim.c" | cut -d: -f1)
check "crash: the history ends in victim_fault, at its source line" \
	"grep -v '^btrace' $tmp/crash.out | tail -n 1 |
	 grep -q 'victim_fault.*victim.c:[0-9]*-$fault\$'"
check "crash: callees are indented below their callers" \
	"grep -q '^ *[0-9]*	    *victim_leaf' $tmp/crash.out"
"$bt" report "$tmp/crash.bt" > "$tmp/crash.rep" 2>&1
check "crash: report of the saved trace prints what the run printed" \
	"cmp -s $tmp/crash.out $tmp/crash.rep"
"$bt" report --branches -n 5 "$tmp/crash.bt" > "$tmp/crash.br" 2>&1
check "crash: --branches lists 5 branches, from -> to with symbol+offset" \
	"[ \$(grep -c ' -> ' $tmp/crash.br) = 5 ] &&
	 grep -q 'victim_recurse+0x[0-9a-f]* (.*victim.c:[0-9]*) -> ' \
		$tmp/crash.br"

run exit -n 10 --branches -- "$v" exit
check "exit: exits with the program's status (7)" "[ \$? = 7 ]"
check "exit: reports the thread at its exit with 10 branches" \
	"grep -q 'exited: the last 10 of' $tmp/exit.out &&
	 [ \$(grep -c ' -> ' $tmp/exit.out) = 10 ]"
"$bt" report -n 0 --branches "$tmp/exit.bt" > "$tmp/exit.all" 2>&1
check "exit: a system call reads [kernel]" "grep -q -- '-> \\[kernel\\]' $tmp/exit.all"

run threads -n 5 -- "$v" threads
check "threads: both threads are reported" \
	"[ \$(grep -c '^btrace: thread .* exited' $tmp/threads.out) = 2 ]"
run fork -n 5 -- "$v" fork
check "fork: exits with the program's status (3)" "[ \$? = 3 ]"
check "fork: parent and child are reported, symbolized" \
	"[ \$(grep -c '^btrace: thread .* exited' $tmp/fork.out) = 2 ] &&
	 ! grep -q unknown $tmp/fork.out"
run abort -n 5 -- "$v" abort
check "abort: exits 134 and reports SIGABRT" \
	"[ \$? = 134 ] && grep -q 'got SIGABRT' $tmp/abort.out"

run exec -n 0 --branches -- /bin/sh -c "exec $v crash"
check "exec: an [exec] record between two programs, all symbolized" \
	"[ \$? = 139 ] && grep -q '  \\[exec\\]' $tmp/exec.out &&
	 ! grep -q unknown $tmp/exec.out && grep -q 'victim_fault' $tmp/exec.out"

run all -n 5 --all -- "$v" threads
check "--all: both threads are reported" \
	"[ \$? = 7 ] && [ \$(grep -c '^btrace: thread .* exited' $tmp/all.out) = 2 ]"

# Records in a file of TMPDIR (spool.c) once a thread has more than
# 1024: the 1024 of the shell move there from the heap at its exec.
mkdir "$tmp/spool"
BTRACE_TEST_SPOOL=1 TMPDIR=$tmp/spool run spooled -n 0 --branches -s 1024 \
	-- /bin/sh -c "exec $v exit"
rc=$?
BTRACE_TEST_SPOOL=1 TMPDIR=$tmp/spool "$bt" report -n 0 --branches \
	"$tmp/spooled.bt" > "$tmp/spooled.rep" 2>&1
check "records in a file: kept in order across the move, reported as run" \
	"[ $rc = 7 ] && [ \$(grep -c ' -> ' $tmp/spooled.out) -gt 2000 ] &&
	 grep -q '^ *1  0x[0-9a-f]* .* -> ' $tmp/spooled.out &&
	 grep -q '^ *1025  \[exec\]' $tmp/spooled.out &&
	 ! grep -q 'record of kind' $tmp/spooled.out &&
	 cmp -s $tmp/spooled.out $tmp/spooled.rep &&
	 [ -z \"\$(ls -A $tmp/spool)\" ]"
BTRACE_TEST_SPOOL=1 TMPDIR=$tmp/nodir run nodir -n 5 --all -- "$v" exit
check "records with no directory for their file: exit 125, saying where" \
	"[ \$? = 125 ] && grep -q 'cannot keep the records in $tmp/nodir' \
	 $tmp/nodir.err"

run gp -n 5 -- "$v" gp
check "gp: a #GP SIGSEGV (SI_KERNEL) is reported without an address" \
	"[ \$? = 139 ] && grep -q 'got SIGSEGV (Segmentation fault):' $tmp/gp.out"
run ignore -n 5 -- "$v" ignore
check "ignore: an ignored SIGSEGV is no crash; the exit is reported" \
	"[ \$? = 7 ] && ! grep -q 'got SIGSEGV' $tmp/ignore.out &&
	 grep -q '^btrace: thread .* exited' $tmp/ignore.out"
run seccomp -n 5 -- "$v" seccomp
check "seccomp: the program's own RET_TRACE still gives ENOSYS (exit 7)" \
	"[ \$? = 7 ]"
run vdso -n 0 --branches -- "$v" vdso
check "vdso: its branches read [vdso+0x...], none [unknown]" \
	"[ \$? = 7 ] && grep -q '\\[vdso+0x' $tmp/vdso.out &&
	 ! grep -q unknown $tmp/vdso.out"
(ulimit -n 40; run forks -n 2 -- "$v" forks 15)
check "forks: 16 processes with 40 file descriptors, all symbolized" \
	"[ \$(grep -c '^btrace: thread .* exited' $tmp/forks.out) = 16 ] &&
	 ! grep -q unknown $tmp/forks.out"
cp "$v" "$tmp/other"
run buildid -n 5 -- "$tmp/other" exit
gcc -O0 -g -Wl,--build-id=0x0123456789abcdef -o "$tmp/other" \
	"$here/test/victim.c" -lpthread
"$bt" report "$tmp/buildid.bt" > /dev/null 2> "$tmp/buildid.rep"
check "report names a file whose build-id differs, once" \
	"[ \$(grep -c 'other is not the file that was traced' \
		$tmp/buildid.rep) = 1 ]"

# attached TRACER PID: wait (10 s at most) until TRACER traces a thread
# of PID, so that a SIGINT finds btrace attached however loaded the
# machine is.
attached() {
	for _ in $(seq 100); do
		grep -q "^TracerPid:[[:space:]]*$1\$" /proc/"$2"/task/*/status \
			2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}

# started PID: wait until the victim started in the background has
# executed (a loaded machine may not have got that far): attached before
# its exec, the test mode would single-step its dynamic loader instead.
started() {
	for _ in $(seq 100); do
		[ "$(cat /proc/"$1"/comm 2> /dev/null)" = victim ] && return 0
		sleep 0.1
	done
	return 1
}

# watchdog SECONDS PID: SIGKILL PID after SECONDS, unless "kill $dog"
# cancels it first.  Its output goes nowhere, so that the sleep which
# outlives a cancel holds no pipe of ours open.
watchdog() {
	(sleep "$1"; kill -KILL "$2") > /dev/null 2>&1 &
	dog=$!
}

# attach NAME SECONDS PID: attach to PID, SIGINT SECONDS after btrace has
# attached; sets $rc (137 if btrace hung and was killed).
attach() {
	local name=$1 secs=$2 pid=$3 tracer dog

	if [ $hw = 1 ]; then
		"$bt" -n 5 -p "$pid" > "$tmp/$name.out" 2> "$tmp/$name.err" &
	else
		BTRACE_TEST_STEP=1 "$bt" -n 5 -p "$pid" \
			> "$tmp/$name.out" 2> "$tmp/$name.err" &
	fi
	tracer=$!
	attached $tracer "$pid"
	sleep "$secs"
	kill -INT $tracer
	watchdog 10 $tracer
	wait $tracer
	rc=$?
	kill "$dog" 2> /dev/null
	sleep 0.2
}

# -p: attach to a running process, Ctrl-C (SIGINT) detaches and reports.
"$v" spin &
spin=$!
started $spin
if [ $hw = 1 ]; then
	"$bt" -n 5 -p $spin > "$tmp/attach.out" 2> "$tmp/attach.err" &
else
	BTRACE_TEST_STEP=1 "$bt" -n 5 -p $spin \
		> "$tmp/attach.out" 2> "$tmp/attach.err" &
fi
tracer=$!
attached $tracer $spin
sleep 1
kill -INT $tracer
wait $tracer
rc=$?
sleep 0.2
check "-p: SIGINT detaches (exit 0) with a report of the thread" \
	"[ $rc = 0 ] && grep -q 'detached: the last 5 of' $tmp/attach.out &&
	 grep -q victim_ $tmp/attach.out"
check "-p: the process runs on after the detach" "kill -0 $spin 2> /dev/null"
kill -KILL $spin 2> /dev/null
wait $spin 2> /dev/null

"$v" zombie 0 &
vpid=$!
started $vpid
sleep 0.3
attach zombie 1 $vpid
check "-p: a process whose main thread exited is attached to and detached" \
	"[ $rc = 0 ] && grep -q 'detached: the last 5 of' $tmp/zombie.out &&
	 grep -q victim_ $tmp/zombie.out && kill -0 $vpid 2> /dev/null"
kill -KILL $vpid 2> /dev/null
wait $vpid 2> /dev/null

"$v" zombie 1 &
vpid=$!
started $vpid
sleep 0.3
attach lateexit 2.5 $vpid
check "-p: SIGINT after the main thread exited detaches (no hang)" \
	"[ $rc = 0 ] && grep -q 'detached: the last 5 of' $tmp/lateexit.out &&
	 kill -0 $vpid 2> /dev/null"
kill -KILL $vpid 2> /dev/null
wait $vpid 2> /dev/null

"$v" spin &
vpid=$!
started $vpid
kill -STOP $vpid
sleep 0.2
attach stopped 1 $vpid
state=$(sed 's/.*) \(.\).*/\1/' /proc/$vpid/stat)
check "-p: a stopped process is not resumed, and stays stopped after" \
	"[ $rc = 0 ] && [ '$state' = T ] && grep -q detached $tmp/stopped.out"
kill -KILL $vpid 2> /dev/null
wait $vpid 2> /dev/null

# A job-control stop of a program btrace runs is kept until SIGCONT.
if [ $hw = 1 ]; then
	"$bt" -- "$v" selfstop > "$tmp/selfstop.out" 2> "$tmp/selfstop.err" &
else
	BTRACE_TEST_STEP=1 "$bt" -- "$v" selfstop \
		> "$tmp/selfstop.out" 2> "$tmp/selfstop.err" &
fi
tracer=$!
# Stopped: in a ptrace stop (t) in 20 samples in a row, where the test
# mode's single steps would show it running (R) in some.
vpid=
still=0
for _ in $(seq 600); do
	vpid=${vpid:-$(pgrep -P $tracer)}
	case $(sed 's/.*) \(.\).*/\1/' "/proc/${vpid:-0}/stat" 2> /dev/null) in
	t|T) still=$((still + 1)) ;;
	*) still=0 ;;
	esac
	[ $still = 20 ] && break
	sleep 0.1
done
check "a program's SIGSTOP stops it under btrace until SIGCONT" \
	"[ $still = 20 ] && ! grep -q continued $tmp/selfstop.out"
[ -n "$vpid" ] && kill -CONT "$vpid" 2> /dev/null
watchdog 30 $tracer
wait $tracer
rc=$?
kill "$dog" 2> /dev/null
check "... and SIGCONT resumes it to the end (7)" \
	"[ $rc = 7 ] && grep -q continued $tmp/selfstop.out"

"$v" dlopen "$tmp/libvictim.so" &
vpid=$!
started $vpid
sleep 0.3
attach dlopen 4 $vpid
check "-p: a library loaded after the attach is symbolized at the detach" \
	"[ $rc = 0 ] && grep -q victim_lib_spin $tmp/dlopen.out &&
	 ! grep -q unknown $tmp/dlopen.out"
kill -KILL $vpid 2> /dev/null
wait $vpid 2> /dev/null

echo "$pass passed, $fail failed"
[ $fail = 0 ]
