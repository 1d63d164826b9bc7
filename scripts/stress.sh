#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make stress`: boot the runs of scripts/guest/stress in stress mode (the
# plans' "stress" lines: long seeded random runs, see ptrace_bts_stress)
# and summarise them like `make check`.  Exits non-zero on any failure;
# a failing stress program prints its seed for a replay.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/guest-runs.sh" stress "$TOP/scripts/guest/stress"
python3 "$TOP/scripts/summary.py" "$LOGS" "$TOP/scripts/emulator-limits" stress
rc=$?
[ "$rc" = 0 ] || echo "make stress: FAILED; logs in $LOGS" >&2
exit $rc
