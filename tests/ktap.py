#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarise a guest log: the KTAP results plus a scan of the guest's dmesg.

Prints every result line, then "N passed, N failed".  Exits 0 only if
nothing failed.  With --label NAME the results are headed by the kernel's
name and the count line reads "NAME: N passed, N failed"; --counts FILE
appends "passed failed" to FILE for tests/run to add up; --details FILE
appends each failed test's diagnostics and the kernel's report of a
crash (its RIP, code and call trace), which tests/run prints last, where a
reader of the output's tail sees them.  A dmesg with BUG:, WARNING:,
Oops, a lockdep report or "possible recursive locking" is one more failed
test (dmesg_clean), and so is a plan that was not completed
(plan_complete).  A skipped result
(`# SKIP`) counts as failed: the guest provides what every test needs.
With --nested, a kselftest program's own results ("# ok N name", one
level down) count one each, and the program's result counts only if it
failed (a program that died after its last nested result): the kselftest
package runs the whole suite, and its count is that of the suite's tests.
"""
import re
import sys

BAD = re.compile(r"BUG:|WARNING:|Oops|possible recursive locking|"
                 r"possible circular locking|inconsistent lock state|"
                 r"suspicious RCU usage|DEBUG_LOCKS_WARN_ON|"
                 r"lockdep: |INFO: lockdep is turned off|"
                 r"INFO: task .* blocked|general protection|"
                 r"Kernel panic|UBSAN|KASAN|refcount_t:|list_add corruption|"
                 r"list_del corruption|rcu_sched detected stall|"
                 r"self-detected stall|watchdog: BUG|Call Trace:")
RESULT = re.compile(r"^(not ok|ok) (\d+) (\S+)(.*)$")
SKIP = re.compile(r"#\s*SKIP", re.IGNORECASE)
# A failed test's own diagnostics kept for the details, and a crash
# report's lines after its first BAD line.
DIAG_LINES = 40
REPORT_LINES = 80


def option(name):
    """The value after `name` on the command line, or None."""
    if name in sys.argv[:-1]:
        return sys.argv[sys.argv.index(name) + 1]
    return None


def main():
    path = sys.argv[1]
    incomplete = "--incomplete" in sys.argv
    nested = "--nested" in sys.argv
    nested_seen = 0  # nested results since the last top-level one
    label = option("--label")
    counts = option("--counts")
    details = []
    if label:
        print(f"# kernel: {label}")
    text = open(path, errors="replace").read().replace("\r", "")
    lines = text.split("\n")
    passed = failed = seen = 0
    plan = None
    diag = []
    for line in lines:
        m = re.match(r"^1\.\.(\d+)$", line)
        if m:
            plan = int(m.group(1))
            diag = []
            continue
        m = RESULT.match(line)
        if not m:
            n = re.match(r"^# (not ok|ok) \d+ \S+(.*)$", line)
            if nested and n:
                nested_seen += 1
                if n.group(1) == "ok" and not SKIP.search(n.group(2)):
                    passed += 1
                else:
                    failed += 1
            # A kselftest program's own failed tests, nested under it.
            if re.match(r"^#\s+not ok \d+ ", line):
                print(line)
                details.append(f"{line}\n" + "".join(
                    f"{d}\n" for d in diag[-DIAG_LINES:]))
            if re.match(r"^#\s+(not )?ok \d+ ", line) or not line.startswith("#"):
                diag = []  # a nested result ends its test's diagnostics
            else:
                diag.append(line)
            continue
        seen += 1
        print(line)
        counted, nested_seen = nested_seen, 0
        if m.group(1) == "ok" and not SKIP.search(m.group(4)):
            if not counted:
                passed += 1
        else:
            # The guest provides everything a test needs: a skip is a
            # test that did not run.
            failed += 1
            details.append(f"{line}\n" + "".join(
                f"{d}\n" for d in diag[-DIAG_LINES:]))
        diag = []

    if "UNWIND-RS-DMESG-BEGIN" in text:
        dmesg = text.split("UNWIND-RS-DMESG-BEGIN", 1)[1].split(
            "UNWIND-RS-DMESG-END", 1)[0].split("\n")
    else:
        dmesg = lines  # the guest died: scan its console instead
    bad = [line for line in dmesg if BAD.search(line)]
    if bad or incomplete:
        failed += 1
        print("not ok - dmesg_clean")
        for line in bad[:40]:
            print("#   " + line.strip())
        if bad:
            first = dmesg.index(bad[0])
            details.append("dmesg_clean: the kernel's first report\n" + "".join(
                f"#   {d.strip()}\n" for d in dmesg[first:first + REPORT_LINES]))
    else:
        passed += 1
        print("ok - dmesg_clean")

    if plan is None or seen < plan:
        failed += 1
        print(f"not ok - plan_complete # {seen} of {plan} tests reported")
    else:
        passed += 1
        print("ok - plan_complete")

    print(f"{label + ': ' if label else ''}{passed} passed, {failed} failed")
    if counts:
        with open(counts, "a") as f:
            f.write(f"{passed} {failed}\n")
    path = option("--details")
    if path and details:
        with open(path, "a") as f:
            f.write(f"## {label or 'tests'}\n" + "".join(details))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
