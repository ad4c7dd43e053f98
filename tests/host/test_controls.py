# SPDX-License-Identifier: GPL-2.0
"""tests/controls/*.patch still apply to the tree and say what they run.

The controls (tests/controls/run, not in CI: about an hour) undo one fix
each and name the tests that must then fail.  A patch whose context the
tree has moved away from cannot be applied, and the control run stops
there; this check, in CI, finds such a patch at the change that moved
the code, not at the next control run."""
import os
import re
import subprocess
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONTROLS = os.path.join(TOP, "tests", "controls")


def patches():
    return sorted(f for f in os.listdir(CONTROLS) if f.endswith(".patch"))


class Controls(unittest.TestCase):
    def test_there_are_controls(self):
        self.assertGreaterEqual(len(patches()), 30)

    def test_every_control_applies(self):
        bad = []
        for name in patches():
            p = subprocess.run(["git", "apply", "--check", os.path.join(CONTROLS, name)],
                               cwd=TOP, capture_output=True, text=True)
            if p.returncode:
                bad.append(f"{name}: {p.stderr.strip()}")
        self.assertEqual(bad, [], "\n".join(bad))

    def test_every_control_names_its_tests(self):
        for name in patches():
            with open(os.path.join(CONTROLS, name)) as f:
                text = f.read()
            head = text[:text.index("diff --git")] if "diff --git" in text else text
            runs = re.search(r"^Runs: (.+)$", head, re.M)
            must = re.search(r"^Must fail: (.+)$", head, re.M)
            self.assertTrue(runs and must, f"{name}: no Runs:/Must fail: line")
            # Every test that must fail is one the control boots: the
            # guest greps its functions' names (t_NAME) for the regex
            # (tests/jobs/tests.sh) and always loads the modules first;
            # tests/ktap.py adds its checks to every boot, tests/run the
            # host tests to every run.
            always = ("module_load", "load_test", "dmesg_clean", "plan_complete")
            for t in must.group(1).split():
                self.assertTrue(t in always or t.startswith("host/")
                                or re.search(runs.group(1), "t_" + t),
                                f"{name}: {t} is not among the tests it runs")

    def test_a_stale_patch_is_caught(self):
        # The check's own control: a patch whose context is not in the tree.
        stale = ("--- a/src/unwind_rs.rs\n+++ b/src/unwind_rs.rs\n"
                 "@@ -1,2 +1,2 @@\n-no such line in the tree\n+x\n context either\n")
        with tempfile.NamedTemporaryFile("w", suffix=".patch") as f:
            f.write(stale)
            f.flush()
            p = subprocess.run(["git", "apply", "--check", f.name], cwd=TOP,
                               capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)


if __name__ == "__main__":
    unittest.main()
