#!/usr/bin/env python3
"""Usage: code-lines.py FILE.cg [FILE.cg ...]

The code a profiled run executed, as distinct 64-byte cache lines and 4 KiB pages, from a
callgrind file written with `--dump-instr=yes` (bench-verify-instructions.sh with
CALLGRIND_ARGS=--dump-instr=yes KEEP=DIR). A request that finds its code evicted (another
process ran in between, as on a shared machine) refetches every line it touches, so the lines
are a measure of what a cold request pays that instruction counts do not show. Prints one row
per file, split by object (the binary, libc, ...)."""
import collections, re, sys

def lines_of(path):
    positions, obj, names = ["line"], "?", {}
    lines, pages = collections.defaultdict(set), collections.defaultdict(set)
    last = [0, 0]
    skip_next = False
    for raw in open(path, errors="replace"):
        raw = raw.rstrip("\n")
        if raw.startswith("positions:"):
            positions = raw.split()[1:]
            continue
        if raw.startswith("ob="):
            m = re.match(r"ob=\((\d+)\)(?: (.*))?", raw)
            if m:
                if m.group(2):
                    names[m.group(1)] = m.group(2)
                obj = names.get(m.group(1), m.group(1))
            else:
                obj = raw[3:]
            continue
        if raw.startswith("calls="):
            skip_next = True  # the next line is the call's inclusive cost; its address is the call
            continue
        if not raw or not (raw[0].isdigit() or raw[0] in "+-*" or raw.startswith("0x")):
            continue
        fields = raw.split()
        if len(fields) < len(positions):
            continue
        vals = []
        for i, f in enumerate(fields[: len(positions)]):
            if f == "*":
                v = last[i]
            elif f[0] in "+-":
                v = last[i] + int(f, 0)
            else:
                v = int(f, 0)
            vals.append(v)
        last[: len(vals)] = vals
        if positions[0] != "instr":
            sys.exit(f"{path}: written without --dump-instr=yes")
        addr = vals[0]
        short = obj.rsplit("/", 1)[-1]
        lines[short].add(addr >> 6)
        pages[short].add(addr >> 12)
        skip_next = False
    return lines, pages

for path in sys.argv[1:]:
    lines, pages = lines_of(path)
    total_l = sum(len(v) for v in lines.values())
    total_p = sum(len(v) for v in pages.values())
    parts = ", ".join(f"{o} {len(lines[o])}" for o in sorted(lines, key=lambda o: -len(lines[o]))[:4])
    print(f"{path}: {total_l} code lines ({total_l * 64 / 1024:.1f} KiB), {total_p} pages; {parts}")
