#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# `make bench`: boot the runs of scripts/guest/benches in bench mode and
# print every measurement and the patched/base ratios.  Benchmarks make
# no claim of their own: they print numbers measured side by side.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

"$TOP/scripts/guest-runs.sh" bench "$TOP/scripts/guest/benches"
python3 "$TOP/scripts/bench-report.py" "$LOGS"
