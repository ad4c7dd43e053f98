#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The table of scripts/bench --anchor: our production kernel against
upstream 7.3's, from the two guest logs of tests/jobs/anchor.sh.

    anchor-report.py OURS_LOG UPSTREAM_LOG

Medians over the rounds.  Guest time under -icount counts instructions:
compare ratios only.  "extra per sample" is (sampled CPU time - unsampled
CPU time) / samples, for the sampled thread (the perf tool's own work is
not in it).
"""
import re
import statistics
import sys

WORKLOADS = [("d8", "user, depth 8"), ("d64", "user, depth 64"),
             ("d256", "user, depth 256"), ("sys64", "getppid() loop, depth 64")]


def load(path):
    text = open(path, errors="replace").read().replace("\r", "")
    text = text.split("ANCHOR-MICRO", 1)[0]
    vals = {}
    for m in re.finditer(r"^ANCHOR (\S+) (\S+) (\S+) ([-\d.]+)$", text, re.M):
        vals.setdefault((m[1], m[2], m[3]), []).append(float(m[4]))
    info = re.findall(r"^ANCHOR-INFO (.*)$", text, re.M)
    failed = re.findall(r"^BENCH-FAILED.*$", text, re.M)
    rounds = len(re.findall(r"^ANCHOR-ROUND", text, re.M))
    return vals, info, failed, rounds


def med(vals, *key):
    v = vals.get(key)
    return statistics.median(v) if v else float("nan")


def extra(vals, w, mode):
    """Extra CPU time per sample of MODE over the unsampled run, in ns."""
    n = med(vals, w, mode, "sample")
    return (med(vals, w, mode, "cpu_ns") - med(vals, w, "none", "cpu_ns")) / n


def kernel_table(name, vals):
    print(f"\n{name}\n")
    print("| workload | unsampled ms | fp: samples, time vs unsampled, extra ns/sample "
          "| fp,defer: samples, deferred records, time vs unsampled, extra ns/sample "
          "| deferred / fp per sample |")
    print("| --- | --- | --- | --- | --- |")
    for w, label in WORKLOADS:
        base = med(vals, w, "none", "cpu_ns")
        cells = [f"{base / 1e6:.1f}"]
        for mode in ("fp", "fp,defer"):
            s = med(vals, w, mode, "sample")
            t = med(vals, w, mode, "cpu_ns")
            d = f"{med(vals, w, mode, 'callchain_deferred'):.0f}, " if mode != "fp" else ""
            cells.append(f"{s:.0f}, {d}{t / base:.3f}, {extra(vals, w, mode):.0f}")
        cells.append(f"{extra(vals, w, 'fp,defer') / extra(vals, w, 'fp'):.3f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


def main():
    ours, oinfo, ofail, orounds = load(sys.argv[1])
    up, uinfo, ufail, urounds = load(sys.argv[2])
    print(f"ours: {orounds} rounds; {'; '.join(oinfo)}")
    print(f"upstream: {urounds} rounds; {'; '.join(uinfo)}")
    print("\nCPU time of the sampled thread under QEMU -icount shift=0 (1 ns per "
          "instruction): compare ratios only.")
    kernel_table("Our production kernel (6.12 + patches + module)", ours)
    kernel_table("Upstream 7.3 (built-in deferred unwinder)", up)
    print("\n| workload | ours, extra ns per deferred sample | upstream 7.3 | ours / upstream "
          "| ours, fp extra ns/sample | upstream, fp | ours / upstream (fp) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for w, label in WORKLOADS:
        a, b = extra(ours, w, "fp,defer"), extra(up, w, "fp,defer")
        c, d = extra(ours, w, "fp"), extra(up, w, "fp")
        print(f"| {label} | {a:.0f} | {b:.0f} | {a / b:.3f} | {c:.0f} | {d:.0f} | {c / d:.3f} |")
    print("\n| workload | module loaded, idle / not loaded (ours, unsampled) |")
    print("| --- | --- |")
    for w, label in WORKLOADS:
        print(f"| {label} | {med(ours, w, 'none', 'cpu_ns') / med(ours, w, 'bare', 'cpu_ns'):.4f} |")
    bad = ofail + ufail
    for vals, name in ((ours, "ours"), (up, "upstream")):
        for w, _ in WORKLOADS:
            if not med(vals, w, "fp,defer", "callchain_deferred") > 0:
                bad.append(f"{name}: no deferred records for {w}")
            if med(vals, w, "fp", "lost") > 0 or med(vals, w, "fp,defer", "lost") > 0:
                bad.append(f"{name}: {w} lost events")
    if bad or not orounds or not urounds:
        print("\n".join(bad) or "no rounds ran", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
