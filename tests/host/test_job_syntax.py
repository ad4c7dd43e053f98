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


def whole_job_names():
    """The tests of the guest's whole job, in order: tests/jobs/tests.sh
    up to its T_NAMES, run under busybox sh, which then prints them."""
    jobs = os.path.join(TOP, "tests", "jobs")
    with open(os.path.join(jobs, "tests.sh")) as f:
        lines = f.read().split("\n")
    # The T_NAMES= assignment and its continuation lines.
    end = next(i for i, l in enumerate(lines) if l.startswith("T_NAMES="))
    while lines[end].endswith("\\"):
        end += 1
    script = "\n".join(lines[: end + 1]) + '\nfor t in $T_NAMES; do echo $t; done\n'
    env = dict(os.environ, UNWIND_RS_JOBS=jobs)
    r = subprocess.run([busybox(), "sh", "-c", script], cwd=jobs, env=env,
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError(r.stderr)
    return r.stdout.split()


class JobSyntax(unittest.TestCase):
    def test_whole_job_runs_each_test_once_the_fuzzer_late(self):
        names = whole_job_names()
        self.assertGreater(len(names), 150)
        self.assertEqual(sorted(n for n in set(names) if names.count(n) > 1), [])
        i = names.index("t_fuzz_perf_attrs")
        self.assertEqual(names[i - 1:i + 2],
                         ["t_deferred_unload_1000", "t_fuzz_perf_attrs", "t_module_unload_all"])

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
