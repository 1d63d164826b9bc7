#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: boot the runs of scripts/guest/benches in bench mode and
# print every measurement and the patched/base ratios.  Benchmarks make
# no claim of their own: they print numbers measured side by side.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

# On the host, before the guests take the cores: btrace's symbolization
# beside addr2line (tools/debugging/btrace/bench-symbolize.sh), its
# lines kept as "@@ BENCH" lines in results-bench-host.log beside the
# guest runs' results, and printed after their report.
host=$LOGS/results-bench-host.log
host_rc=0
mkdir -p "$LOGS" "$BUILD/btrace-host"
{
	make -s -C "$TOP/tools/debugging/btrace" OUTPUT="$BUILD/btrace-host/" &&
		"$TOP/tools/debugging/btrace/bench-symbolize.sh" "$BUILD/btrace-host/btrace"
} 2>&1 | sed -e 's/^BENCH/@@ BENCH/' > "$host" || host_rc=1
echo "@@ DONE" >> "$host"

"$TOP/scripts/guest-runs.sh" bench "$TOP/scripts/guest/benches"
python3 "$TOP/scripts/bench-report.py" "$LOGS"
rc=$?

echo
echo "== host: btrace symbolization beside addr2line (results-bench-host.log)"
sed -n -e 's/^@@ BENCH-SAYS [^ ]* /   /p' -e 's/^@@ BENCH \([^ ]* [^ ]*\) /   \1 /p' "$host"
if [ "$host_rc" != 0 ]; then
	grep -v '^@@' "$host" | tail -n 5 | sed 's/^/   /'
	echo "   FAILED: tools/debugging/btrace/bench-symbolize.sh"
	rc=1
fi
exit $rc
