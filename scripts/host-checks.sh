#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Checks that run on the host, reported like guest results in
# $LOGS/results-host.log:
#   checkpatch --strict on every file and patch of ours and on the
#   harness's C (scripts/perf-bp),
#   kernel-doc -Wall on our C sources and headers, and kernel-doc present
#   on every non-static function (kdoc-coverage.py),
#   the exported uapi headers compiled by a 32- and a 64-bit compiler,
#   the export of the series (series.sh) with checkpatch on each patch,
#   and btrace built for the host with its host self-check (host:btrace).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$LOGS/results-host.log
mkdir -p "$LOGS"
: > "$out"
result() { # suite status case [reason]
	if [ -n "${4:-}" ]; then
		echo "@@ RESULT $1 $2 $3 # $4" >> "$out"
	else
		echo "@@ RESULT $1 $2 $3" >> "$out"
	fi
}

checkpatch() {
	perl "$SRC/scripts/checkpatch.pl" --strict --quiet --no-summary --color=never \
		--show-types "$@"
}

# Extra checkpatch options for one file of ours.  The C files of the
# debugger-side tools that use elfutils' libdw and libelf (btrace's
# sym.c and maps.c) name the libraries' types, Dwfl_Module, GElf_Sym
# and the like, which are CamelCase by the libraries' API: for those
# files, and for that check only, CAMELCASE is not reported.
checkpatch_opts() {
	case $1 in
	tools/debugging/*.[ch])
		if grep -q -E '^#include <(elfutils/|gelf\.h|libelf\.h|dwarf\.h)' "$TOP/$1"; then
			echo --ignore CAMELCASE
		fi
		# btrace answers a seccomp RET_TRACE that is not its own as the
		# kernel does without a tracer, with ENOSYS, and its test checks
		# that: ENOSYS as the invalid system call it is.
		if grep -q -w ENOSYS "$TOP/$1"; then
			echo --ignore ENOSYS
		fi
		;;
	esac
}

# One line of output at most per finding, for the summary.
first_finding() {
	grep -m1 -E '^(ERROR|WARNING|CHECK)' || true
}

# btrace (tools/debugging/btrace), built for the host as its README says
# into $BUILD/btrace-host/, then its host self-check, selftest-host.sh,
# which needs no BTS (its test mode single-steps the tracees).  That
# takes most of a minute, mostly in ptrace stops, so it runs beside the
# checkpatch and kernel-doc loops below; its results join the others at
# the end.  selftest-host.sh builds its own copy of btrace from the same
# sources and Makefile: it takes no binary.
btrace_check() { # RESULTS: write the suite's results to RESULTS
	local dir=$TOP/tools/debugging/btrace bin=$BUILD/btrace-host
	local log=$LOGS/btrace-host.log rc=0 st name

	out=$1
	: > "$out"
	if [ "$(uname -m)" != x86_64 ]; then
		result host:btrace SKIP build "btrace is x86-64 only; this host is $(uname -m)"
		return
	fi
	if ! printf '#include <elfutils/libdwfl.h>\n' | gcc -E -x c - > /dev/null 2>&1; then
		result host:btrace SKIP build "no elfutils/libdwfl.h: libdw-dev is not installed"
		return
	fi
	mkdir -p "$bin"
	if ! make -C "$dir" OUTPUT="$bin/" > "$log" 2>&1; then
		result host:btrace FAIL build \
			"$(grep -m1 -E 'error|Error' "$log" || tail -n 1 "$log")"
		return
	fi
	result host:btrace PASS build
	"$dir/selftest-host.sh" > "$LOGS/btrace-selftest-host.log" 2>&1 || rc=$?
	while read -r st name; do
		name=$(printf '%s\n' "$name" |
			sed -e 's/[^A-Za-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//')
		case $st in
		ok) result host:btrace PASS "$name" ;;
		*) result host:btrace FAIL "$name" "see btrace-selftest-host.log" ;;
		esac
	done < <(sed -n -e 's/^ok - /ok /p' -e 's/^not ok - /not-ok /p' \
		"$LOGS/btrace-selftest-host.log")
	# A self-check that stopped early, or whose build failed, has no
	# "not ok" line to show for it.
	if [ "$rc" != 0 ] || ! grep -q -E '^[0-9]+ passed, 0 failed$' \
		"$LOGS/btrace-selftest-host.log"; then
		result host:btrace FAIL selftest-host \
			"exit $rc: $(tail -n 1 "$LOGS/btrace-selftest-host.log")"
	fi
}
btrace_results=$BUILD/btrace-host.results
btrace_check "$btrace_results" &
btrace_pid=$!

overlay_files > "$BUILD/overlay.list"
while read -r f; do
	case $f in
	*.c|*.h|*.rst|*.S|*/Kconfig*|*/Makefile|*.tc|*.sh|*.config)
		;;
	*)
		continue
		;;
	esac
	# shellcheck disable=SC2046 # options, split on purpose
	log=$(cd "$SRC" && checkpatch $(checkpatch_opts "$f") -f "$f" 2>&1) && rc=0 || rc=$?
	if [ "$rc" = 0 ] && [ -z "$log" ]; then
		result host:checkpatch PASS "$f"
	else
		printf '%s\n' "$log" > "$LOGS/checkpatch-$(echo "$f" | tr / _).log"
		result host:checkpatch FAIL "$f" "$(printf '%s\n' "$log" | first_finding)"
	fi
done < "$BUILD/overlay.list"

# The harness's own C: the shim around perf's breakpoint tests, and the
# BTS model's conformance suite (kernel-doc below too).
for f in "$TOP"/scripts/perf-bp/*.[ch] "$TOP/$MODEL_DIR"/conformance/*.[ch]; do
	name=${f#"$TOP"/}
	log=$(cd "$SRC" && checkpatch -f "$f" 2>&1) && rc=0 || rc=$?
	if [ "$rc" = 0 ] && [ -z "$log" ]; then
		result host:checkpatch PASS "$name"
	else
		printf '%s\n' "$log" > "$LOGS/checkpatch-$(echo "$name" | tr / _).log"
		result host:checkpatch FAIL "$name" "$(printf '%s\n' "$log" | first_finding)"
	fi
done

while read -r p; do
	# A patch that only adds files of ours has no diff here for
	# checkpatch to read: the files were checked above, and the
	# exported patch, with its diff, by host:series.
	if ! grep -q '^--- ' "$TOP/patches/$p"; then
		result host:checkpatch PASS "patches/$p"
		continue
	fi
	log=$(cd "$SRC" && checkpatch "$TOP/patches/$p" 2>&1) && rc=0 || rc=$?
	if [ "$rc" = 0 ] && [ -z "$log" ]; then
		result host:checkpatch PASS "patches/$p"
	else
		printf '%s\n' "$log" > "$LOGS/checkpatch-$p.log"
		result host:checkpatch FAIL "patches/$p" "$(printf '%s\n' "$log" | first_finding)"
	fi
done < <(series_patches)

while read -r f; do
	case $f in *.c|*.h) ;; *) continue ;; esac
	log=$(cd "$SRC" && perl scripts/kernel-doc -none -Wall "$f" 2>&1) || true
	case $f in
	*.c) log=$log$(python3 "$TOP/scripts/kdoc-coverage.py" "$SRC/$f") || true ;;
	esac
	if [ -z "$log" ]; then
		result host:kernel-doc PASS "$f"
	else
		result host:kernel-doc FAIL "$f" "$(printf '%s\n' "$log" | head -n 1)"
	fi
done < "$BUILD/overlay.list"
for f in "$TOP/$MODEL_DIR"/conformance/*.c; do
	name=${f#"$TOP"/}
	log=$(cd "$SRC" && perl scripts/kernel-doc -none -Wall "$f" 2>&1) || true
	log=$log$(python3 "$TOP/scripts/kdoc-coverage.py" "$f") || true
	if [ -z "$log" ]; then
		result host:kernel-doc PASS "$name"
	else
		result host:kernel-doc FAIL "$name" "$(printf '%s\n' "$log" | head -n 1)"
	fi
done

# uapi: the headers the series adds or edits, and the ABI it builds on.
uapi=$( {
	grep -E '^(include/uapi|arch/x86/include/uapi)/.*\.h$' "$BUILD/overlay.list" || true
	while read -r p; do
		# Not tools/include/uapi: perf's copies, which are not exported.
		sed -n -E 's@^\+\+\+ b/((arch/x86/)?include/uapi/.*\.h).*@\1@p' \
			"$TOP/patches/$p"
	done < <(series_patches)
	echo arch/x86/include/uapi/asm/ptrace-abi.h
	echo arch/x86/include/uapi/asm/ptrace.h
	echo arch/x86/include/uapi/asm/debugreg.h
	echo include/uapi/linux/perf_event.h
	echo include/uapi/linux/hw_breakpoint.h
} | sed -e 's|^include/uapi/||' -e 's|^arch/x86/include/uapi/||' | sort -u)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for h in $uapi; do
	for bits in 32 64; do
		printf '#include <%s>\n' "$h" > "$tmp/t.c"
		if log=$(gcc -m$bits -std=c99 -Wall -Werror -fsyntax-only \
			-isystem "$OBJ/usr/include" "$tmp/t.c" 2>&1); then
			result host:uapi-headers PASS "$h:m$bits"
		else
			result host:uapi-headers FAIL "$h:m$bits" "$(printf '%s\n' "$log" | grep -m1 error)"
		fi
	done
done
# `make series` must work from any checkout that passes `make check`: it
# exports what reviewers get, and checkpatch sees there what it does not
# see in patches/ (the whole of each new file, MAINTAINERS).
if log=$("$TOP/scripts/series.sh" 2>&1); then
	result host:series PASS export
else
	printf '%s\n' "$log" > "$LOGS/series-export.log"
	result host:series FAIL export "$(printf '%s\n' "$log" | grep -m1 -E 'ERROR|error|WARNING|CHECK')"
fi

wait "$btrace_pid" || true
if [ -s "$btrace_results" ]; then
	cat "$btrace_results" >> "$out"
else
	result host:btrace FAIL selftest-host "the check did not complete"
fi
rm -f "$btrace_results"

say "host checks: $(grep -c ' PASS ' "$out") passed, $(grep -c ' FAIL ' "$out") failed"
