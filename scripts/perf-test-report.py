#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""perf's own test suite on our kernel against upstream 7.3's, from the
guest logs of tests/jobs/perf_suite.sh (scripts/perf-test-compare).

    perf-test-report.py OURS_LOG UPSTREAM_LOG [DEBIAN_LOG]

DEBIAN_LOG is the run on Debian's own 6.12 kernel.  Prints each kernel's
counts, then every test whose result differs between ours and upstream,
as a Markdown table for the README.  Exits 1 if a test that passes on
upstream fails on ours (FAIL, TIMEOUT, no result) and does not fail the
same way on Debian's 6.12, if a run did not finish, or if our kernel's
log has a kernel report (oops, BUG, WARNING, KASAN, lockdep).  A test
that skips itself on ours is listed, not counted: perf's tests skip
where the environment does not suit them (timing under TCG included).
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
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: perf-test-report.py OURS_LOG UPSTREAM_LOG [DEBIAN_LOG]")
    runs = [("ours", sys.argv[1]), ("upstream 7.3", sys.argv[2])]
    if len(sys.argv) == 4:
        runs.append(("Debian's 6.12", sys.argv[3]))
    loaded = [(label,) + load(path) for label, path in runs]
    bad = 0
    for label, res, _, info, done, _ in loaded:
        print(f"{label}: {'; '.join(info)}")
        print(f"  {len(res)} results: {counts(res)}")
        if not done:
            print(f"  the run on {label} did not finish")
            bad = 1
    o_rep = loaded[0][5]
    if o_rep:
        print("kernel reports in our kernel's log:")
        for line in o_rep[:20]:
            print("  " + line)
        bad = 1
    ours, up = loaded[0][1], loaded[1][1]
    deb = loaded[2][1] if len(loaded) > 2 else None
    missing = ("missing", "", "", 0)
    ids = sorted(set(ours) | set(up), key=key)
    rows, regressed = [], []
    for tid in ids:
        o, u = ours.get(tid, missing), up.get(tid, missing)
        if o[0] == u[0]:
            continue
        d = deb.get(tid, missing) if deb is not None else None
        rows.append((tid, o[1] or u[1], u, o, d))
        if u[0] == "ok" and o[0] not in ("ok", "skip") and not (d and d[0] == o[0]):
            regressed.append(tid)
    print()
    if not rows:
        print("Every test has the same result on ours and upstream.")
    else:
        fmt = lambda x: f"{x[0]} ({x[2]})" if x[2] and x[0] not in ("ok", "skip") else x[0]
        head = "| test | upstream 7.3 | ours |" + (" Debian's 6.12 |" if deb is not None else "")
        print(head)
        print("|" + " --- |" * (head.count("|") - 1))
        for tid, name, u, o, d in rows:
            line = f"| {tid} {name} | {fmt(u)} | {fmt(o)} |"
            if d is not None:
                line += f" {fmt(d)} |"
            print(line)
    if regressed:
        print()
        print("passes on upstream, fails on ours only: " + " ".join(regressed))
        bad = 1
    sys.exit(bad)


if __name__ == "__main__":
    main()
