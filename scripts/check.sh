#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check` after the kernel and initramfs are built: host checks, the
# guest runs of scripts/guest/runs, then one summary of all.  Exits
# non-zero on any failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

rm -f "$LOGS"/results-host.log
"$TOP/scripts/host-checks.sh" || warn "host checks did not complete"
"$TOP/scripts/guest-runs.sh" check "$TOP/scripts/guest/runs"
python3 "$TOP/scripts/summary.py" "$LOGS" "$TOP/scripts/emulator-limits"
rc=$?
[ "$rc" = 0 ] || echo "make check: FAILED; logs in $LOGS" >&2
exit $rc
