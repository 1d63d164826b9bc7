#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the measurements of one `make bench` and their ratios.

Usage: bench-report.py LOGDIR

Reads runs-bench (label kernel qemu plan per line, see guest-runs.sh) and
each run's results-bench[-LABEL].log.  A benchmark reports "@@ BENCH NAME
KEY VALUE"; what else it printed comes as "@@ BENCH-SAYS NAME TEXT" and
is shown as it is (its own in-run ratios).

A kernel may boot several times on one QEMU: each key is shown for every
run, and the median of the kernel's runs stands for it.  For every key
measured on the base kernel and on another kernel on the same QEMU,
prints the ratio other/base of those medians.  Exits 1 when a run did
not finish or a benchmark failed.
"""
import os
import re
import statistics
import sys

from summary import read

BENCH = re.compile(r"^@@ BENCH (\S+) (\S+) (\S+)$")
SAYS = re.compile(r"^@@ BENCH-SAYS (\S+) ?(.*)$")
FAIL = re.compile(r"^@@ RESULT (\S+) FAIL (\S+)(?: # (.*))?$")


def read_run(logdir, label, values):
    """Collect one run's values into values[(name, key)][label]; return
    False when the run did not finish or a benchmark failed."""
    tag = "bench" if label == "main" else f"bench-{label}"
    lines = read(os.path.join(logdir, f"results-{tag}.log"))
    if lines is None or not any(l.startswith("@@ DONE") for l in lines):
        print(f"   run {label} did not finish; see console-{tag}.log")
        return False
    ok = True
    for line in lines:
        line = line.strip()
        m = BENCH.match(line)
        if m:
            name, key, value = m.groups()
            try:
                values.setdefault((name, key), {})[label] = float(value)
            except ValueError:
                print(f"   run {label}: {name} {key}: not a number: {value}")
                ok = False
            continue
        m = SAYS.match(line)
        if m:
            print(f"   run {label}, {m.group(1)}: {m.group(2)}")
            continue
        m = FAIL.match(line)
        if m:
            print(f"   run {label}: FAILED {m.group(1)} {m.group(2)}: {m.group(3) or ''}")
            ok = False
    return ok


def report(qemu, runs, values):
    """Print the values measured on one QEMU and the ratios to the base."""
    kernels = []
    for _, kernel, _ in runs:
        if kernel not in kernels:
            kernels.append(kernel)
    labels = [label for label, _, _ in runs]
    print(f"\n== {qemu} QEMU: every run")
    print("   " + " " * 36 + "".join(f"{l:>12}" for l in labels))
    runs_of = {}
    for (name, key), by_run in sorted(values.items()):
        if not any(l in by_run for l in labels):
            continue
        cells = "".join(f"{by_run[l]:>12.0f}" if l in by_run else f"{'-':>12}"
                        for l in labels)
        print(f"   {name + ' ' + key:<36}{cells}")
        for label, kernel, _ in runs:
            if label in by_run:
                runs_of.setdefault((name, key, kernel), []).append(by_run[label])
    median = {k: statistics.median(v) for k, v in runs_of.items()}

    others = [k for k in kernels if k != "base"]
    if "base" not in kernels or not others:
        return
    print(f"\n== {qemu} QEMU: median of each kernel's runs, and kernel/base")
    print("   " + " " * 36 + "".join(f"{k:>12}" for k in kernels)
          + "".join(f"{k + '/base':>16}" for k in others))
    for (name, key), _ in sorted(values.items()):
        ref = median.get((name, key, "base"))
        if not ref:
            continue
        cells = "".join(f"{median[(name, key, k)]:>12.0f}" if (name, key, k) in median
                        else f"{'-':>12}" for k in kernels)
        ratios = "".join(f"{median[(name, key, k)] / ref:>16.3f}" if (name, key, k) in median
                         else f"{'-':>16}" for k in others)
        print(f"   {name + ' ' + key:<36}{cells}{ratios}")


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
    print("== runs")
    for label, kernel, qemu, plan in runs:
        print(f"   {label}: {kernel} kernel, {qemu} QEMU, plan {plan}")
    for label, _, _, _ in runs:
        if not read_run(logdir, label, values):
            bad = 1

    qemus = []
    for _, _, qemu, _ in runs:
        if qemu not in qemus:
            qemus.append(qemu)
    for qemu in qemus:
        report(qemu, [(l, k, q) for l, k, q, _ in runs if q == qemu], values)
    return bad


if __name__ == "__main__":
    sys.exit(main())
