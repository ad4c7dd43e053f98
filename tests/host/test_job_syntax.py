# SPDX-License-Identifier: GPL-2.0
"""The guest's shell scripts parse, with the guest's own shell (busybox
sh): a quote that ends an embedded awk program early (an apostrophe in
its comment) otherwise shows only after a build and a boot, as a suite
that reports no test at all."""
import glob
import os
import shutil
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = sorted(
    glob.glob(os.path.join(TOP, "tests", "jobs", "*.sh"))
    + glob.glob(os.path.join(TOP, "tests", "jobs", "perf", "*.sh"))
    + [os.path.join(TOP, "tests", "guest", "init")]
)


def busybox():
    """The guest's shell: busybox (scripts/setup installs busybox-static)."""
    for name in ("busybox", "/bin/busybox"):
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("no busybox: run scripts/setup")


def parse_error(path):
    """busybox sh -n's complaint about @path, or None."""
    r = subprocess.run([busybox(), "sh", "-n", path], capture_output=True, text=True)
    return None if r.returncode == 0 else (r.stderr.strip() or f"exit {r.returncode}")


class JobSyntax(unittest.TestCase):
    def test_every_guest_script_parses(self):
        self.assertGreater(len(SCRIPTS), 10)
        errors = [f"{os.path.relpath(p, TOP)}: {e}" for p in SCRIPTS if (e := parse_error(p))]
        self.assertEqual(errors, [])

    def test_control_apostrophe_in_awk_comment_fails(self):
        with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
            f.write("t() {\n\tset -- $(awk '\n\t\t# the sample's next\n"
                    "\t\t{ for (i = 1; i <= n; i++) s++ }' /dev/null)\n}\n")
        try:
            self.assertIsNotNone(parse_error(f.name))
        finally:
            os.unlink(f.name)


if __name__ == "__main__":
    unittest.main()
