#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Insert our MAINTAINERS entries into the kernel's, in alphabetical order.

Usage: merge-maintainers.py TREE_MAINTAINERS OUR_MAINTAINERS [TREE_ROOT]

An entry is a title line followed by "X:\\t..." field lines, ended by a
blank line.  Ours are placed before the first upstream entry whose title
sorts after them, as the file's own note asks.  An entry whose title the
tree already has is an error: we add areas, we do not rewrite others'.

With TREE_ROOT, only the F: patterns that match a file of that tree are
kept, and an entry left with none is dropped: so each patch of the series
carries the MAINTAINERS lines of exactly the files it has added so far.
"""
import fnmatch
import os
import sys


def entries(lines):
    """Yield (start, end, title) of each entry in the list section."""
    i = 0
    while i < len(lines):
        if lines[i].strip() == "Maintainers List":
            break
        i += 1
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and len(nxt) > 2 and nxt[1] == ":" and nxt[2] == "\t":
            j = i + 1
            while j < len(lines) and lines[j].strip():
                j += 1
            yield i, j, line.strip()
            i = j
        i += 1


def parse_ours(text):
    blocks = [b.strip("\n") for b in text.split("\n\n") if b.strip()]
    return [b for b in blocks if not b.startswith("#")]


def tree_files(root):
    files = []
    for top, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            files.append(os.path.relpath(os.path.join(top, name), root))
    return files


def matches(pattern, files):
    """MAINTAINERS F: semantics: a trailing / is a directory, else a glob."""
    if pattern.endswith("/"):
        return any(f.startswith(pattern) for f in files)
    return any(fnmatch.fnmatchcase(f, pattern) for f in files)


def keep_existing(block, files):
    lines = block.split("\n")
    kept = [l for l in lines
            if not l.startswith("F:\t") or matches(l[3:].strip(), files)]
    if not any(l.startswith("F:\t") for l in kept):
        return None
    return "\n".join(kept)


def main():
    tree_path, ours_path = sys.argv[1:3]
    with open(tree_path) as f:
        lines = f.read().split("\n")
    with open(ours_path) as f:
        ours = parse_ours(f.read())
    if len(sys.argv) > 3:
        files = tree_files(sys.argv[3])
        ours = [b for b in (keep_existing(b, files) for b in ours) if b]
    for block in ours:
        title = block.split("\n", 1)[0].strip()
        pos = None
        for start, _end, other in entries(lines):
            if other.lower() == title.lower():
                sys.exit(f"MAINTAINERS already has an entry '{title}'")
            if other == "THE REST":
                pos = pos if pos is not None else start
                break
            if pos is None and other.lower() > title.lower():
                pos = start
        if pos is None:
            sys.exit(f"no place found for MAINTAINERS entry '{title}'")
        lines[pos:pos] = block.split("\n") + [""]
    with open(tree_path, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
