#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the measurements of one `make bench` and their ratios.

Usage: bench-report.py LOGDIR

Reads runs-bench (label kernel qemu plan per line, see guest-runs.sh) and
each run's results-bench[-LABEL].log.  A benchmark reports "@@ BENCH NAME
KEY VALUE"; what else it printed comes as "@@ BENCH-SAYS NAME TEXT" and is
shown as it is (its own in-run ratios).  For every NAME KEY measured on a
base-kernel run and a patched-kernel run on the same QEMU, prints the
ratio patched/base.  Exits 1 when a run did not finish or a benchmark
failed.
"""
import os
import re
import sys

from summary import read

BENCH = re.compile(r"^@@ BENCH (\S+) (\S+) (\S+)$")
SAYS = re.compile(r"^@@ BENCH-SAYS (\S+) ?(.*)$")
FAIL = re.compile(r"^@@ RESULT (\S+) FAIL (\S+)(?: # (.*))?$")


def main():
    logdir = sys.argv[1]
    runs = []
    for line in read(os.path.join(logdir, "runs-bench")) or []:
        fields = line.split()
        if len(fields) >= 4:
            runs.append(fields[:4])
    if not runs:
        print("bench: no runs (scripts/guest/benches lists none)")
        return 1

    bad = 0
    values = {}
    for label, kernel, qemu, plan in runs:
        tag = "bench" if label == "main" else f"bench-{label}"
        lines = read(os.path.join(logdir, f"results-{tag}.log"))
        print(f"\n== run {label}: {kernel} kernel, {qemu} QEMU, plan {plan}")
        if lines is None or not any(l.startswith("@@ DONE") for l in lines):
            print(f"   did not finish; see console-{tag}.log")
            bad = 1
            continue
        for line in lines:
            line = line.strip()
            m = BENCH.match(line)
            if m:
                name, key, value = m.groups()
                try:
                    values[(label, name, key)] = float(value)
                except ValueError:
                    print(f"   {name} {key}: not a number: {value}")
                    bad = 1
                    continue
                print(f"   {name:<20} {key:<32} {value:>14}")
                continue
            m = SAYS.match(line)
            if m:
                print(f"   {m.group(1)}: {m.group(2)}")
                continue
            m = FAIL.match(line)
            if m:
                print(f"   FAILED {m.group(1)} {m.group(2)}: {m.group(3) or ''}")
                bad = 1

    pairs = [(b, p) for b in runs for p in runs
             if b[1] == "base" and p[1] == "patched" and b[2] == p[2]]
    for base, patched in pairs:
        print(f"\n== patched/base: run {patched[0]} against run {base[0]}")
        for (label, name, key), value in sorted(values.items()):
            if label != patched[0]:
                continue
            ref = values.get((base[0], name, key))
            if ref:
                print(f"   {name:<20} {key:<32} {value / ref:>8.3f}")
    return bad


if __name__ == "__main__":
    sys.exit(main())
