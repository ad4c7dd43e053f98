#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Instruction profile of one CPU from scripts/qemu-insns.c's counts.

Usage: insn-report.py SYSTEM_MAP RUN [BASE_RUN]
A RUN is the prefix of NAME.log (the guest's, with INSN-KSYM and INSN-RUN
lines) and NAME.txt (the plugin's "vaddr insns execs" lines).  Prints the
instructions per sample of each symbol, and with BASE_RUN those of
RUN minus BASE_RUN (per RUN's sample): where the extra time of a mode goes.
"""
import bisect
import collections
import sys


def symbols(system_map, log):
    syms = []
    with open(system_map) as f:
        for line in f:
            a, t, n = line.split()[:3]
            if t in "tTwW":
                syms.append((int(a, 16), n))
    with open(log, errors="replace") as f:
        for line in f:
            if line.startswith("INSN-KSYM "):
                p = line.split()
                if p[2] in "tT":
                    syms.append((int(p[1], 16), p[3] + " [mod]"))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def run(prefix, addrs, names):
    info = {}
    with open(prefix + ".log", errors="replace") as f:
        for line in f:
            if line.startswith("INSN-RUN "):
                p = line.split()
                info[p[1]] = int(p[2])
    per = collections.Counter()
    with open(prefix + ".txt") as f:
        for line in f:
            v, n, e = line.split()
            v = int(v, 16)
            if v < 1 << 47:
                name = "(user)"
            else:
                i = bisect.bisect_right(addrs, v) - 1
                name = names[i] if i >= 0 else "?"
            per[name] += int(n) * int(e)
    return info, per


def main():
    addrs, names = symbols(sys.argv[1], sys.argv[2] + ".log")
    info, per = run(sys.argv[2], addrs, names)
    samples = info.get("sample", 0) or 1
    if len(sys.argv) > 3:
        _, base = run(sys.argv[3], addrs, names)
        per = collections.Counter({k: per[k] - base.get(k, 0) for k in set(per) | set(base)})
    total = sum(per.values())
    print(f"# {sys.argv[2]}: {info}; instructions per sample, total {total / samples:.0f}")
    for name, n in sorted(per.items(), key=lambda kv: -abs(kv[1])):
        if abs(n) / samples < 5:
            break
        print(f"{n / samples:10.1f}  {name}")


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        sys.exit(0)
