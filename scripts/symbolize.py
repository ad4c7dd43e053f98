#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print the demo's ftrace events stitched by cookie, frames symbolized.

Usage: symbolize.py GUEST_LOG BIN_DIR
Each unwind_ftrace:unwind_request event (the syscall, with its cookie) is
shown with the unwind_ftrace:unwind_stack event of the same cookie, its
frames resolved with addr2line against the program's own ELF.
"""
import re
import subprocess
import sys

REQ = re.compile(r"UT-TRACE\s+(\S+)-(\d+)\s.*?\s([\d.]+): unwind_request: "
                 r"cookie=([0-9a-f]+) syscall=(-?\d+) ret=(-?\d+)")
STK = re.compile(r"UT-TRACE\s+(\S+)-(\d+)\s.*?\s([\d.]+): unwind_stack: "
                 r"cookie=([0-9a-f]+) nr=(\d+) frames=\{([^}]*)\}")


def symbolize(binary, addrs):
    if not addrs:
        return []
    out = subprocess.run(["addr2line", "-f", "-s", "-e", binary] + addrs,
                         capture_output=True, text=True, check=False).stdout
    lines = out.split("\n")
    syms = []
    for i, addr in enumerate(addrs):
        fn, loc = lines[2 * i], lines[2 * i + 1]
        if fn == "??" and int(addr, 16) >= 0xf7000000:
            fn, loc = "[vdso]", ""
        syms.append((fn, loc))
    return syms


def main():
    log, bindir = sys.argv[1], sys.argv[2]
    text = open(log, errors="replace").read().replace("\r", "")
    prog, failed, shown = None, False, 0
    failed_cookies = []
    counters = ""
    demo_bin = None
    reqs, stacks = {}, {}
    order = []

    def flush():
        nonlocal shown
        others = 0
        for cookie in order:
            comm, pid, ts, nr, ret = reqs[cookie]
            # The program's own write(2)s; libc's syscalls are only counted.
            if nr not in ("1", "4"):
                others += 1
                if cookie not in stacks:
                    print(f"  syscall {nr}: no user stack for cookie {cookie}")
                    failed_cookies.append(cookie)
                continue
            print(f"\n{comm} pid {pid}: write(2) at {ts}s, cookie {cookie}"
                  f" (request returned {ret})")
            if cookie not in stacks:
                print("  no user stack arrived for this cookie")
                failed_cookies.append(cookie)
                continue
            frames = stacks[cookie]
            for i, (fn, loc) in enumerate(symbolize(f"{bindir}/{prog}", frames)):
                print(f"  #{i:<2} {frames[i]:>18}  {fn:<28} {loc}")
            shown += 1
        print(f"\n({others} more syscalls of {prog} traced, each with its stack)")
        reqs.clear()
        stacks.clear()
        order.clear()

    for line in text.split("\n"):
        if line.startswith("UT-PROGRAM "):
            if prog:
                flush()
            prog = line.split()[1]
            abi = "IA32 emulation" if prog.endswith("32") else "x86-64"
            print(f"\n===== {prog} ({abi}) =====")
        elif m := REQ.search(line):
            reqs[m[4]] = (m[1], m[2], m[3], m[5], m[6])
            order.append(m[4])
        elif m := STK.search(line):
            stacks[m[4]] = [f.strip() for f in m[6].split(",") if f.strip()]
        elif line.startswith("UT-COUNTERS"):
            counters = line[len("UT-COUNTERS "):]
        elif line.startswith("UT-SECTION "):
            if prog:
                flush()
                prog = None
            if counters:
                print(f"\nunwind_deferred counters: {counters}")
                counters = ""
            print(f"\n===== {line[len('UT-SECTION '):]} =====")
        elif line.startswith("UT-OUT"):
            out = line[len("UT-OUT "):]
            # trace-cmd report's stack event: the addresses, symbolized.
            m = re.search(r"unwind_stack:\s+cookie=\S+ nr=\d+ frames=\{([^}]*)\}", out)
            if m and demo_bin:
                print(out[:m.start(1)].rstrip("{").rstrip())
                frames = [f.strip() for f in m[1].split(",") if f.strip()]
                for i, (fn, loc) in enumerate(symbolize(demo_bin, frames)):
                    print(f"  #{i:<2} {frames[i]:>18}  {fn:<28} {loc}")
            else:
                print(out)
        elif line.startswith("UT-DEMO-BIN "):
            demo_bin = f"{bindir}/{line.split()[1]}"
        elif "UT-DEMO-FAILED" in line:
            failed = True
    if prog:
        flush()
    if counters:
        print(f"\nunwind_deferred counters: {counters}")
    if failed or not shown or failed_cookies:
        print("demo failed: no stitched user stack", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
