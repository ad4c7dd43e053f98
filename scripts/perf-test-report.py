#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""perf's own test suite on our kernel against upstream 7.3's, from the
two guest logs of tests/jobs/perf_suite.sh (scripts/perf-test-compare).

    perf-test-report.py OURS_LOG UPSTREAM_LOG

Prints each kernel's counts, then every test whose result differs, as a
Markdown table for the README.  Exits 1 if a test that passes on upstream
does not pass on ours, if either run did not finish, or if our kernel's
log has a kernel report (oops, BUG, WARNING, KASAN, lockdep).
"""
import re
import sys

REPORT = re.compile(r"(Oops|BUG:|WARNING:|KASAN|possible circular locking|"
                    r"general protection fault|Call Trace:)")


def load(path):
    text = open(path, errors="replace").read().replace("\r", "")
    res, order = {}, []
    for m in re.finditer(r"^PERFTEST (\S+) (\S+) (\d+)(?: (.*))?$", text, re.M):
        tid, r, name = m[1], m[2], m[4] or ""
        detail = ""
        d = re.match(r"(.*) \[(.*)\]$", name)
        if d:
            name, detail = d[1], d[2]
        if tid not in res:
            order.append(tid)
        res[tid] = (r, name, detail, int(m[3]))
    info = re.findall(r"^PERFTEST-INFO (.*)$", text, re.M)
    done = "PERFTEST-END" in text
    dmesg = text.split("UNWIND-RS-DMESG-BEGIN", 1)
    reports = [l for l in (dmesg[1] if len(dmesg) > 1 else "").splitlines()
               if REPORT.search(l)]
    return res, order, info, done, reports


def counts(res):
    c = {}
    for r, *_ in res.values():
        c[r] = c.get(r, 0) + 1
    return ", ".join(f"{k} {c[k]}" for k in sorted(c))


def key(tid):
    return [int(p) for p in tid.split(".")]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: perf-test-report.py OURS_LOG UPSTREAM_LOG")
    ours, o_order, o_info, o_done, o_rep = load(sys.argv[1])
    up, u_order, u_info, u_done, _ = load(sys.argv[2])
    bad = 0
    for label, res, info, done in (("ours", ours, o_info, o_done),
                                   ("upstream", up, u_info, u_done)):
        print(f"{label}: {'; '.join(info)}")
        print(f"  {len(res)} results: {counts(res)}")
        if not done:
            print(f"  the {label} run did not finish")
            bad = 1
    if o_rep:
        print("kernel reports in our kernel's log:")
        for l in o_rep[:20]:
            print("  " + l)
        bad = 1
    ids = sorted(set(ours) | set(up), key=key)
    rows = []
    for tid in ids:
        o = ours.get(tid, ("missing", "", "", 0))
        u = up.get(tid, ("missing", "", "", 0))
        if o[0] == u[0]:
            continue
        name = o[1] or u[1]
        rows.append((tid, name, u, o))
        if u[0] == "ok":
            bad = 1
    print()
    if not rows:
        print("Every test has the same result on both kernels.")
    else:
        print("| test | upstream 7.3 | ours |")
        print("| --- | --- | --- |")
        for tid, name, u, o in rows:
            fmt = lambda x: f"{x[0]} ({x[2]})" if x[2] and x[0] != "ok" else x[0]
            print(f"| {tid} {name} | {fmt(u)} | {fmt(o)} |")
    regressed = [r[0] for r in rows if r[2][0] == "ok"]
    if regressed:
        print()
        print("passes on upstream, not on ours: " + " ".join(regressed))
    sys.exit(bad)


if __name__ == "__main__":
    main()
