# SPDX-License-Identifier: GPL-2.0
"""The demo's cut_stacks (tests/jobs/lib.sh) on perf-script-like samples:
run by busybox's sh and awk, as in the guest, and by the host's sh and
awk (POSIX only)."""
import os
import shutil
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIB = os.path.join(TOP, "tests", "jobs", "lib.sh")
# scripts/build-tests copies this one into the guest (busybox-static).
BUSYBOX = "/bin/busybox"

GARBAGE = ("perl     212\n"
           "\t    55d0c1a2b3c4 Perl_pp_sort (/usr/bin/perl)\n"
           + "\t               0 [unknown] ([unknown])\n" * 130)
GOOD = ("perl     212\n"
        "\tffffffff8108f56b __x64_sys_getppid ([kernel.kallsyms])\n"
        + "".join(f"\t    55d0c1a2b3{i:02x} Perl_f{i} (/usr/bin/perl)\n" for i in range(39)))


def cut(text, *args, busybox=False):
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ)
        sh = "/bin/sh"
        if busybox:
            # busybox's own awk, not the host's, for the function's awk.
            os.symlink(BUSYBOX, os.path.join(d, "awk"))
            env["PATH"] = d + ":" + env["PATH"]
            sh = BUSYBOX
        cmd = [sh, "-c", '. "$0"; cut_stacks "$@"', LIB, *args]
        if busybox:
            cmd.insert(1, "sh")
        p = subprocess.run(cmd, input=text, capture_output=True, text=True, env=env)
        if p.returncode or p.stderr:
            raise AssertionError(f"{cmd}: exit {p.returncode}: {p.stderr}")
        return p.stdout


class CutStacksTest(unittest.TestCase):
    def each(self, text, *args):
        """cut_stacks's output, the same under busybox and the host's sh."""
        self.assertTrue(os.access(BUSYBOX, os.X_OK),
                        f"{BUSYBOX} missing: install busybox-static (scripts/setup)")
        out = cut(text, *args, busybox=True)
        self.assertEqual(cut(text, *args), out)
        return out

    def test_garbage_fp_stack_shows_its_first_8_and_the_count(self):
        out = self.each(GARBAGE + "\n")
        lines = out.split("\n")
        self.assertEqual(lines[:9], GARBAGE.split("\n")[:9])
        self.assertEqual(lines[9], "\t    ... 123 more frames")
        self.assertEqual(lines[10:], ["", ""])

    def test_stacks_of_40_frames_or_fewer_stay_whole(self):
        self.assertEqual(self.each(GOOD + "\n"), GOOD + "\n")

    def test_each_sample_is_cut_alone(self):
        # Samples end at a blank line or at the next header; no trailing
        # blank line at the end of the input.
        text = GOOD + GARBAGE + "\n" + GOOD + "\n" + GARBAGE
        out = self.each(text)
        self.assertEqual(out.count("... 123 more frames"), 2)
        self.assertEqual(out.count("Perl_f38"), 2)
        self.assertEqual(out.count("0 [unknown]"), 2 * 7)
        self.assertTrue(out.endswith("\t    ... 123 more frames\n"))

    def test_limits_are_arguments(self):
        out = self.each(GOOD, "10", "3")
        self.assertEqual(out.split("\n")[:4], GOOD.split("\n")[:4])
        self.assertEqual(out.split("\n")[4], "\t... 37 more frames")


if __name__ == "__main__":
    unittest.main()
