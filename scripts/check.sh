#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make check` after the kernel and initramfs are built: host checks, the
# guest's tests, then one summary of both.  Exits non-zero on any failure.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

rm -f "$LOGS"/results-check.log "$LOGS"/results-host.log
"$TOP/scripts/host-checks.sh" || warn "host checks did not complete"
"$TOP/scripts/run-guest.sh" check || warn "the guest run did not complete"
python3 "$TOP/scripts/summary.py" "$LOGS" "$TOP/scripts/emulator-limits"
rc=$?
[ "$rc" = 0 ] || echo "make check: FAILED; logs in $LOGS" >&2
exit $rc
