#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot every guest run of a runs file (scripts/guest/runs for `make
# check`, scripts/guest/benches for `make bench`) in MODE, building the
# base and flexible kernels first when a run needs them.  Writes the runs
# it booted to $LOGS/runs-MODE for the summary.  A run that fails to boot
# or finish is reported by the summary; the others still run.
#
# Usage: guest-runs.sh MODE RUNSFILE
set -uo pipefail
. "$(dirname "$0")/lib.sh"

mode=${1:?usage: guest-runs.sh MODE RUNSFILE}
runs=${2:?usage: guest-runs.sh MODE RUNSFILE}

lines=$(grep -v -E '^[[:space:]]*(#|$)' "$runs")
if grep -q -E '^[^ ]+ +base ' <<< "$lines"; then
	# The base kernel has its own object directory and configuration;
	# kbuild rebuilds it only when the base or the fragment changed.
	BASE=1 "$TOP/scripts/build-kernel.sh" ||
		warn "the base kernel did not build; its runs will fail"
fi
if grep -q -E '^[^ ]+ +flexible ' <<< "$lines"; then
	{ FLEXIBLE=1 "$TOP/scripts/prepare-tree.sh" &&
		FLEXIBLE=1 "$TOP/scripts/build-kernel.sh"; } ||
		warn "the flexible kernel did not build; its runs will fail"
fi

: > "$LOGS/runs-$mode"
while read -r label kernel qemu plan extra <&9; do
	tag=$mode
	[ "$label" = main ] || tag=$mode-$label
	rm -f "$LOGS/results-$tag.log" "$LOGS/console-$tag.log" "$LOGS/machine-$tag"
	printf '%s %s %s %s\n' "$label" "$kernel" "$qemu" "$plan" >> "$LOGS/runs-$mode"
	RUN_LABEL=$label KERNEL_KIND=$kernel QEMU_KIND=$qemu PLAN=$plan \
		EXTRA_CMDLINE="$extra" "$TOP/scripts/run-guest.sh" "$mode" ||
		warn "guest run '$label' did not complete"
done 9<<< "$lines"
