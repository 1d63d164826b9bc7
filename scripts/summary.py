#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Collect the verdicts of one `make check` and print them.

Usage: summary.py LOGDIR [LIMITS [MODE]]

Reads results-host.log from LOGDIR and, for each guest run named in
runs-MODE (see guest-runs.sh; MODE check, the default, or stress), its
results, console and machine (results-MODE[-LABEL].log, console-...,
machine-...); `make stress` has no host checks.  LIMITS lists the
cases that fail because of a machine (scripts/emulator-limits).  Prints
a table per suite, every failure and skip with its reason, and last a
line "N passed, N failed, N skipped".  Exits 1 on any failure, on a
guest that did not finish, and on a kernel splat in a console log (a
splat is a failure even when every test passed).
"""
import collections
import os
import re
import sys

RESULT = re.compile(r"^@@ RESULT (\S+) (PASS|FAIL|SKIP) (\S+)(?: # (.*))?$")

# Kernel messages that mean something went wrong, whatever the tests say.
SPLAT = re.compile(
    r"(BUG:|WARNING:|KASAN:|UBSAN:|Kernel panic|Oops:|general protection fault"
    r"|possible circular locking|possible recursive locking"
    r"|inconsistent lock state|suspicious RCU usage|INFO: task .* blocked"
    r"|DEBUG_LOCKS_WARN_ON|unreferenced object|soft lockup|hard LOCKUP"
    r"|detected stall|kernel BUG at|Call Trace:|unchecked MSR access)")
# "[   12.345678] " and the optional "[    T1] " caller id before a message.
PRINTK_PREFIX = re.compile(r"^(\[\s*\d+\.\d+\]\s*)?(\[\s*[TC]\d+\]\s*)?")


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read().replace("\r", "").splitlines()
    except FileNotFoundError:
        return None


def read_limits(path, machine):
    """Map (suite, case) to the reason it cannot pass on this machine."""
    limits = {}
    for line in read(path) or []:
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split(None, 3)
        if len(fields) == 4 and fields[0] == machine:
            limits[(fields[1], fields[2])] = fields[3]
    return limits


def apply_limits(results, limits):
    out = []
    for suite, status, case, reason in results:
        why = limits.get((suite, case))
        if why and status == "FAIL":
            status, reason = "SKIP", f"machine limit: {why}"
        elif why and status == "PASS":
            status, reason = "FAIL", ("passes, so the emulator-limits entry "
                                      "no longer holds: remove it")
        out.append((suite, status, case, reason))
    return out


def read_runs(logdir, mode):
    """The guest runs of this `make MODE`: (label, tag) in order."""
    runs = []
    for line in read(os.path.join(logdir, f"runs-{mode}")) or ["main"]:
        if line.strip():
            label = line.split()[0]
            runs.append((label, mode if label == "main" else f"{mode}-{label}"))
    return runs


def guest_results(logdir, label, tag, limits_path):
    """The verdicts of one guest run, its suites prefixed by its label."""
    results = []
    guest = read(os.path.join(logdir, f"results-{tag}.log"))
    console = read(os.path.join(logdir, f"console-{tag}.log")) or []
    for line in guest or []:
        m = RESULT.match(line.strip())
        if m:
            results.append(m.groups())
    machine = (read(os.path.join(logdir, f"machine-{tag}")) or [""])[0].strip()
    if limits_path and machine:
        results = apply_limits(results, read_limits(limits_path, machine))

    finished = guest is not None and any(l.startswith("@@ DONE") for l in guest)
    if guest is not None and any(l.startswith("@@ WATCHDOG") for l in guest):
        results.append(("guest", "FAIL", "watchdog",
                        "the guest was killed by the watchdog"))
    if finished:
        results.append(("guest", "PASS", "finished", None))
    else:
        results.append(("guest", "FAIL", "finished",
                        f"the guest did not report DONE; see console-{tag}.log"))

    splats = []
    for line in console:
        msg = PRINTK_PREFIX.sub("", line)
        if SPLAT.search(msg):
            splats.append(msg.strip())
    if splats:
        for s in splats[:20]:
            results.append(("guest:dmesg", "FAIL", "splat", s))
    else:
        results.append(("guest:dmesg", "PASS", "no-splat", None))
    results += strict_model_results(logdir, tag)
    if label != "main":
        results = [(f"{label}/{r[0]}",) + tuple(r[1:]) for r in results]
    return results, machine


def strict_model_results(logdir, tag):
    """The BTS model's strict-mode reports of one run (model runs only):
    each is the OS breaking a DS-area rule the SDM leaves undefined."""
    log = read(os.path.join(logdir, f"qemu-guest-errors-{tag}.log"))
    if log is None:
        return []
    broken = [l.strip() for l in log if l.startswith("bts:")]
    if not broken:
        return [("model:strict", "PASS", "ds-rules", None)]
    return [("model:strict", "FAIL", "ds-rules", b) for b in broken[:20]]


# Suites whose every case is listed with its verdict in each run, side by
# side: upstream perf's breakpoint tests, where the base run says what the
# series must not change; the BTS model's conformance suite, which must
# pass on the model and skip on stock QEMU.
PER_CASE_SUITES = ("perf:bp", "bts_model", "kunit:bts_model")


def per_case_table(results, suite):
    """The verdict of each case of suite in each run that has it."""
    runs, verdicts = [], collections.OrderedDict()
    for name, status, case, _ in results:
        label, _, bare = name.rpartition("/")
        if bare != suite:
            continue
        label = label or "main"
        if label not in runs:
            runs.append(label)
        verdicts.setdefault(case, {})[label] = status
    if not verdicts:
        return []
    width = max(len(c) for c in verdicts)
    lines = [f"\n{suite} per case:",
             f"{'case':<{width}}  " + " ".join(f"{r:>5}" for r in runs)]
    for case, by_run in verdicts.items():
        lines.append(f"{case:<{width}}  " +
                     " ".join(f"{by_run.get(r, '-'):>5}" for r in runs))
    return lines


def main():
    logdir = sys.argv[1]
    limits_path = sys.argv[2] if len(sys.argv) > 2 else None
    mode = sys.argv[3] if len(sys.argv) > 3 else "check"
    results = []
    host = os.path.join(logdir, "results-host.log") if mode == "check" else ""
    for line in read(host) or []:
        m = RESULT.match(line.strip())
        if m:
            results.append(m.groups())
    machines = []
    for label, tag in read_runs(logdir, mode):
        run, machine = guest_results(logdir, label, tag, limits_path)
        results += run
        machines.append(f"{label}: {machine or 'unknown'}")

    suites = collections.OrderedDict()
    for suite, status, case, reason in results:
        suites.setdefault(suite, collections.Counter())[status] += 1

    width = max([len(s) for s in suites] + [5])
    print(f"\nguest machines: {', '.join(machines)}")
    print(f"{'suite':<{width}}  {'pass':>5} {'fail':>5} {'skip':>5}")
    print("-" * (width + 19))
    for suite, c in suites.items():
        print(f"{suite:<{width}}  {c['PASS']:>5} {c['FAIL']:>5} {c['SKIP']:>5}")

    for suite in PER_CASE_SUITES:
        for line in per_case_table(results, suite):
            print(line)

    notes = [r for r in results if r[1] != "PASS"]
    if notes:
        print()
    for suite, status, case, reason in notes:
        print(f"{status} {suite} {case}" + (f": {reason}" if reason else ""))

    total = collections.Counter(r[1] for r in results)
    print(f"\n{total['PASS']} passed, {total['FAIL']} failed, {total['SKIP']} skipped")
    return 1 if total["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
