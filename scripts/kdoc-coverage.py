#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Name every non-static function of a C file that has no kernel-doc.

Usage: kdoc-coverage.py FILE.c

kernel-doc -Wall checks the comments that exist; this checks that they
exist.  A definition is a line at column 0 that is not static, names a
function and is followed (after its parameter lines) by a lone "{".
Prints one line per undocumented function; exits 1 if there is any.
"""
import re
import sys

DEF = re.compile(r"^(?!static\b|typedef\b|struct\b.*;|#)[A-Za-z_][\w\s\*]*?\b(\w+)\(")
DOC = re.compile(r"^\s*\*\s+(\w+)\(\)\s+-")


def main():
    with open(sys.argv[1]) as f:
        lines = f.read().split("\n")
    documented = {m.group(1) for l in lines for m in [DOC.match(l)] if m}
    missing = []
    for i, line in enumerate(lines):
        m = DEF.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith((")", "{", ";")):
            j += 1
        if j + 1 < len(lines) and lines[j + 1].strip() == "{" and m.group(1) not in documented:
            missing.append(f"{sys.argv[1]}:{i + 1}: {m.group(1)}() is not static and has no kernel-doc")
    print("\n".join(missing), end="\n" if missing else "")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
