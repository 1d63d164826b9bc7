#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# How fast "btrace report --branches" symbolizes, beside addr2line on the
# same addresses, measured in one run:
#
#   ./bench-symbolize.sh [BTRACE]     (RECORDS=N for another size)
#
# Builds btrace (unless given one) and a loop-heavy test program (-O2 -g,
# so with inlined functions), and writes a saved trace (README, FORMAT)
# of RECORDS branch records between the real branch instructions and
# targets of that program at the addresses of a real run of it: loops in
# functions chosen with a skewed (Zipf) law, so a few thousand distinct
# addresses repeat many times, as in the trace of a real program.  Then
# times, one after the other:
#   btrace report --branches FILE > /dev/null
#   addr2line -f -i -e PROG with both ends of every record on stdin
#   addr2line -f -i -e PROG with each distinct address once (what a
#     caching front end to it would cost)
# REPEAT rounds (3), and prints "BENCH NAME records_per_s N" for each
# (records of the trace per second of its best round) and a "BENCH-SAYS"
# line with the ratios.
set -euo pipefail
export LC_ALL=C	# "1.5" seconds from $EPOCHREALTIME and awk
here=$(cd "$(dirname "$0")" && pwd)
records=${RECORDS:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for tool in gcc make python3 objdump readelf addr2line; do
	command -v $tool > /dev/null || { echo "bench-symbolize: no $tool" >&2; exit 1; }
done

if [ $# -ge 1 ]; then
	bt=$1
else
	make -s -C "$here" OUTPUT="$tmp/" > "$tmp/build.log" 2>&1 ||
		{ cat "$tmp/build.log" >&2; exit 1; }
	bt=$tmp/btrace
fi
[ -x "$bt" ] || { echo "bench-symbolize: $bt is not executable" >&2; exit 1; }

# The test program and the trace, by one generator.
python3 - "$tmp" "$records" <<'EOF'
import bisect
import os
import random
import re
import struct
import subprocess
import sys

tmp, nrecs = sys.argv[1], int(sys.argv[2])
rng = random.Random(1)
NFUNCS = 240

# A program of many small loops: every function loops over a table with
# an if, a switch and an inlined helper, and calls a later function.
src = ["#include <stdio.h>", "#include <string.h>", ""]
for i in range(NFUNCS):
	src.append(f"static inline int mix{i}(int v)\n{{\n"
		   f"\treturn (v * {rng.randrange(3, 99)}) ^ (v >> {rng.randrange(1, 9)});\n}}\n")
for i in reversed(range(NFUNCS)):
	call = f"s += fn{i + 1}(a + 1, n >> 2);" if i + 1 < NFUNCS else "s--;"
	src.append(f"""__attribute__((noinline)) int fn{i}(const int *a, int n)
{{
	int s = {rng.randrange(100)}, i;

	for (i = 0; i < n; i++) {{
		int v = a[(i * {rng.randrange(1, 17)}) & 255];

		if (v & {rng.randrange(1, 64)})
			s += mix{i}(v);
		else
			s -= v >> 1;
		switch ((v ^ s) & 7) {{
		case 0: s ^= {rng.randrange(1000)}; break;
		case 1: {call} break;
		case 2: s = s * 3 + 1; break;
		case 3: if (s > {rng.randrange(50, 500)}) s -= {rng.randrange(1, 50)}; break;
		default: s++;
		}}
		while (s > 100000)
			s /= 3;
	}}
	return s;
}}
""")
src.append("int main(int argc, char **argv)\n{\n\tstatic int a[512];\n\tint i, s = 0;\n\n"
	   "\tif (argc > 1 && !strcmp(argv[1], \"maps\")) {\n"
	   "\t\tFILE *f = fopen(\"/proc/self/maps\", \"r\");\n\t\tchar l[4096];\n\n"
	   "\t\tprintf(\"main %p\\n\", (void *)main);\n"
	   "\t\twhile (f && fgets(l, sizeof(l), f))\n\t\t\tfputs(l, stdout);\n\t\treturn 0;\n\t}\n"
	   "\tfor (i = 0; i < 512; i++)\n\t\ta[i] = i * 7919;\n"
	   + "".join(f"\ts += fn{i}(a, 1000);\n" for i in range(NFUNCS))
	   + "\treturn s & 1;\n}\n")
prog = os.path.join(tmp, "loops")
with open(prog + ".c", "w") as f:
	f.write("\n".join(src))
subprocess.run(["gcc", "-O2", "-g", "-o", prog, prog + ".c"], check=True)

# Its branch instructions and their targets, from the disassembly.
funcs = {}		# name -> [(from, to or None, kind)]
starts = []
rets = []		# return addresses: the instruction after each call
name, prev_call = None, False
INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s*([0-9a-f]+)?")
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-j", ".text", prog],
		     check=True, capture_output=True, text=True).stdout
for line in dis.splitlines():
	m = re.match(r"^([0-9a-f]+) <(.*)>:$", line)
	if m:
		name = m.group(2)
		funcs[name] = []
		starts.append(int(m.group(1), 16))
		continue
	m = INSN.match(line)
	if not m or name is None:
		continue
	addr, op = int(m.group(1), 16), m.group(2)
	if prev_call and re.fullmatch(r"fn\d+|main", name):
		rets.append(addr)
	prev_call = op.startswith("call")
	if op.startswith("ret"):
		funcs[name].append((addr, None, "ret"))
	elif op.startswith(("j", "call")) and m.group(3):
		funcs[name].append((addr, int(m.group(3), 16), "direct"))
funcs = {k: v for k, v in funcs.items() if v and re.fullmatch(r"fn\d+|main", k)}

# Where the program is in a real run: its maps and the bias of main.
out = subprocess.run([prog, "maps"], check=True, capture_output=True, text=True).stdout
lines = out.splitlines()
bias = int(lines[0].split()[1], 16)
nm = subprocess.run(["nm", prog], check=True, capture_output=True, text=True).stdout
bias -= int(next(l.split()[0] for l in nm.splitlines() if l.endswith(" T main")), 16)
maps = [l for l in lines[1:] if len(l.split()) >= 6 and l.split()[5].startswith("/")]
maps.sort(key=lambda l: int(l.split("-")[0], 16))
buildids = []
for path in dict.fromkeys(l.split()[5] for l in maps):
	notes = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
	m = re.search(r"Build ID: ([0-9a-f]+)", notes)
	if m:
		buildids.append(f"{m.group(1)} {path}\n")
maps_txt = "".join(l + "\n" for l in maps).encode()
ids_txt = "".join(buildids).encode()

# The records: loops of 1 to 64 turns over the branches of a function,
# the functions drawn with weights 1/rank.
names = list(funcs)
rng.shuffle(names)
cum, total = [], 0.0
for r in range(len(names)):
	total += 1.0 / (r + 1)
	cum.append(total)
recs = bytearray()
static = []		# the addresses, as in the file, for addr2line
BRANCH = 1
n = 0
while n < nrecs:
	sites = funcs[names[bisect.bisect(cum, rng.random() * total)]]
	for _ in range(rng.randrange(1, 65)):
		for frm, to, kind in sites:
			if n == nrecs:
				break
			if to is None:
				to = rng.choice(rets)
			recs += struct.pack("<IIQQQ", BRANCH, 0, frm + bias, to + bias, 0)
			static.append(frm)
			static.append(to)
			n += 1

pid = 4242
with open(os.path.join(tmp, "trace.bt"), "wb") as f:
	f.write(b"BTRACE\r\n" + struct.pack("<IIIIII", 1, 0, 0, 1, 1, 1))
	f.write(struct.pack("<IIII", pid, len(maps_txt), len(ids_txt), 0) + maps_txt + ids_txt)
	f.write(struct.pack("<II16sIIQ", pid, pid, b"loops", 1, 0, nrecs))
	f.write(struct.pack("<I", 0) + recs)
	f.write(struct.pack("<IIIIQIIiiQiI", 1, 0, pid, 0, nrecs, 1, 0, 0, 0, 0, 0, 0))
with open(os.path.join(tmp, "addrs"), "w") as f:
	f.write("".join(f"{a:#x}\n" for a in static))
with open(os.path.join(tmp, "distinct"), "w") as f:
	f.write("".join(f"{a:#x}\n" for a in sorted(set(static))))
print(f"# {nrecs} records, {len(static)} addresses, {len(set(static))} distinct, "
      f"in {len(funcs)} functions of {prog}")
EOF

# Wall-clock seconds of a command, its output thrown away.
timed() {
	local t0=$EPOCHREALTIME

	"$@" > /dev/null
	echo "$t0 $EPOCHREALTIME" | awk '{ printf "%.3f", $2 - $1 }'
}
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 < b + 0 ? a : b) }'; }
rate() { awk -v n="$records" -v s="$1" 'BEGIN { printf "%d", (s > 0 ? n / s : 0) }'; }

# Check first that both read the file and the program as meant: btrace
# names a function and a line for both ends of the last records, and
# addr2line a line for all but a few of the addresses.
"$bt" report --branches -n 1000 "$tmp/trace.bt" > "$tmp/sample"
end='0x[0-9a-f]+ (fn[0-9]+|main)\+0x[0-9a-f]+ \(.*loops\.c:[0-9]+\)'
if [ "$(grep -c ' -> ' "$tmp/sample")" != 1000 ] ||
	[ "$(grep -c -E "^ *[0-9]+  $end -> $end\$" "$tmp/sample")" != 1000 ]; then
	echo "bench-symbolize: btrace did not symbolize the trace:" >&2
	grep ' -> ' "$tmp/sample" | grep -v -m 3 -E "^ *[0-9]+  $end -> $end\$" >&2
	exit 1
fi
addr2line -i -e "$tmp/loops" < "$tmp/distinct" > "$tmp/lines"
if [ "$(grep -c -v '^??:' "$tmp/lines")" -lt "$(($(wc -l < "$tmp/distinct") * 9 / 10))" ]; then
	echo "bench-symbolize: addr2line did not find the lines of the program" >&2
	exit 1
fi

# The best of REPEAT rounds (3) of the three, in turn: the machine may be
# busy with other work, which only ever adds time.
t_bt=1e9 t_a2l=1e9 t_a2ld=1e9
for _ in $(seq "${REPEAT:-3}"); do
	t=$(timed "$bt" report --branches "$tmp/trace.bt")
	t_bt=$(min "$t_bt" "$t")
	t=$(timed addr2line -f -i -e "$tmp/loops" < "$tmp/addrs")
	t_a2l=$(min "$t_a2l" "$t")
	t=$(timed addr2line -f -i -e "$tmp/loops" < "$tmp/distinct")
	t_a2ld=$(min "$t_a2ld" "$t")
done
echo "# seconds: btrace $t_bt, addr2line $t_a2l, addr2line on distinct addresses $t_a2ld"
echo "BENCH btrace_symbolize records_per_s $(rate "$t_bt")"
echo "BENCH addr2line records_per_s $(rate "$t_a2l")"
echo "BENCH addr2line_distinct records_per_s $(rate "$t_a2ld")"
awk -v b="$t_bt" -v a="$t_a2l" -v d="$t_a2ld" 'BEGIN {
	printf "BENCH-SAYS btrace_symbolize btrace/addr2line %.2f, ", a / b
	printf "btrace/addr2line-on-distinct-addresses %.2f (records/s ratios)\n", d / b
}'
