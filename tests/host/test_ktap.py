# SPDX-License-Identifier: GPL-2.0
"""The KTAP summariser: what makes a guest run fail."""
import os
import subprocess
import sys
import tempfile
import unittest

KTAP = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "ktap.py")

CLEAN = """1..2
ok 1 a
ok 2 b
UNWIND-RS-DMESG-BEGIN
[    0.1] unwind_deferred: deferred user unwinding ready
UNWIND-RS-DMESG-END
UNWIND-RS-DONE
"""


def summarise(log, *args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "log")
        counts = os.path.join(d, "counts")
        with open(path, "w") as f:
            f.write(log)
        p = subprocess.run([sys.executable, KTAP, path, "--counts", counts, *args],
                           capture_output=True, text=True)
        with open(counts) as f:
            return p.returncode, p.stdout, f.read().split()


def with_dmesg(line):
    return CLEAN.replace("UNWIND-RS-DMESG-END", line + "\nUNWIND-RS-DMESG-END")


class KtapTest(unittest.TestCase):
    def test_details_name_the_failed_test_and_the_crash(self):
        log = ("1..3\nok 1 a\n# a passed\n# b: 3 unmerged\nnot ok 2 b # exit 1\n"
               "# c's first line\n[ 9.1] Oops: int3: 0000 [#1] PREEMPT SMP\n"
               "[ 9.2] RIP: 0010:resume_user_mode_work+0x1c/0x30\n[ 9.3] Call Trace:\n")
        with tempfile.TemporaryDirectory() as d:
            details = os.path.join(d, "details")
            rc, _, counts = summarise(log, "--details", details, "--label", "k")
            with open(details) as f:
                text = f.read()
        self.assertEqual((rc, counts), (1, ["1", "3"]))
        self.assertIn("## k\nnot ok 2 b # exit 1\n# a passed\n# b: 3 unmerged\n", text)
        self.assertIn("RIP: 0010:resume_user_mode_work", text)
        self.assertNotIn("not ok 1", text)

    def test_details_of_a_nested_failure_are_its_own(self):
        log = ("1..1\n# ok 1 a\n# # b's line\n# not ok 2 b # exit 1\nnot ok 1 group # exit=1\n")
        with tempfile.TemporaryDirectory() as d:
            details = os.path.join(d, "details")
            summarise(log, "--details", details)
            with open(details) as f:
                text = f.read()
        self.assertIn("# not ok 2 b # exit 1\n# # b's line\n", text)
        self.assertNotIn("# ok 1 a", text)

    def test_nested_results_count_one_each(self):
        # Two programs: one whose three tests pass, one that failed after
        # its last nested result passed; a top-level result without any.
        log = ("1..3\nok 1 alone\n# 1..3\n# ok 1 a\n# # a's line\n# ok 2 b\n# ok 3 c\n"
               "ok 2 group1\n# ok 1 d\nnot ok 3 group2 # exit=1\n"
               "UNWIND-RS-DMESG-BEGIN\nUNWIND-RS-DMESG-END\n")
        rc, _, counts = summarise(log, "--nested")
        self.assertEqual((rc, counts), (1, ["7", "1"]))  # alone, a, b, c, d + 2
        rc, _, counts = summarise(log)
        self.assertEqual((rc, counts), (1, ["4", "1"]))  # alone, group1 + 2

    def test_nested_failure_and_skip_fail(self):
        log = ("1..1\n# ok 1 a\n# not ok 2 b\n# ok 3 c # SKIP no perf\nnot ok 1 g # exit=1\n"
               "UNWIND-RS-DMESG-BEGIN\nUNWIND-RS-DMESG-END\n")
        rc, _, counts = summarise(log, "--nested")
        self.assertEqual((rc, counts), (1, ["3", "3"]))  # a + 2; b, c, g

    def test_no_details_when_clean(self):
        with tempfile.TemporaryDirectory() as d:
            details = os.path.join(d, "details")
            rc, _, _ = summarise(CLEAN, "--details", details)
            self.assertEqual((rc, os.path.exists(details)), (0, False))

    def test_clean_run_passes(self):
        rc, out, counts = summarise(CLEAN)
        self.assertEqual(rc, 0)
        self.assertEqual(counts, ["4", "0"])
        self.assertTrue(out.rstrip().endswith("4 passed, 0 failed"))

    def test_kasan_report_fails(self):
        rc, out, counts = summarise(with_dmesg(
            "[    5.2] BUG: KASAN: slab-use-after-free in unwind_rs_process+0x1c/0x90"))
        self.assertEqual(rc, 1)
        self.assertEqual(counts, ["3", "1"])
        self.assertIn("not ok - dmesg_clean", out)
        self.assertIn("BUG: KASAN: slab-use-after-free", out)

    def test_kasan_without_bug_prefix_fails(self):
        rc, _, counts = summarise(with_dmesg("[    5.2] KASAN: null-ptr-deref in range"))
        self.assertEqual((rc, counts), (1, ["3", "1"]))

    def test_lockdep_and_warning_fail(self):
        for line in ("WARNING: CPU: 1 PID: 7 at kernel/foo.c:1 bar+0x1/0x2",
                     "WARNING: possible circular locking dependency detected",
                     "BUG: sleeping function called from invalid context",
                     "INFO: task rmmod:93 blocked for more than 120 seconds."):
            rc, _, counts = summarise(with_dmesg(line))
            self.assertEqual((rc, counts), (1, ["3", "1"]), line)

    def test_failed_result_fails(self):
        rc, _, counts = summarise(CLEAN.replace("ok 2 b", "not ok 2 b"))
        self.assertEqual((rc, counts), (1, ["3", "1"]))

    def test_skipped_result_fails(self):
        for line in ("ok 2 selftests: unwind_deferred: perf.sh # SKIP no perf",
                     "ok 2 b # skip"):
            rc, _, counts = summarise(CLEAN.replace("ok 2 b", line))
            self.assertEqual((rc, counts), (1, ["3", "1"]), line)

    def test_short_plan_fails(self):
        rc, out, counts = summarise(CLEAN.replace("1..2", "1..3"))
        self.assertEqual((rc, counts), (1, ["3", "1"]))
        self.assertIn("2 of 3 tests reported", out)

    def test_dead_guest_fails(self):
        rc, _, counts = summarise("1..2\nok 1 a\nKernel panic - not syncing\n", "--incomplete")
        self.assertEqual(rc, 1)
        self.assertEqual(counts[1], "2")

    def test_label_names_the_kernel(self):
        rc, out, _ = summarise(CLEAN, "--label", "kasan")
        self.assertEqual(rc, 0)
        self.assertTrue(out.startswith("# kernel: kasan\n"))
        self.assertTrue(out.rstrip().endswith("kasan: 4 passed, 0 failed"))


if __name__ == "__main__":
    unittest.main()
