# SPDX-License-Identifier: GPL-2.0
"""scripts/check-layers: the tree's imports go one way, and the check sees
an upward import, a circle and an upward include (its controls)."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECK = os.path.join(TOP, "scripts", "check-layers")


def run(src):
    p = subprocess.run([sys.executable, CHECK, src], capture_output=True, text=True)
    return p.returncode, p.stdout


class Layers(unittest.TestCase):
    def test_tree_imports_go_one_way(self):
        rc, out = run(os.path.join(TOP, "src"))
        self.assertEqual(rc, 0, out)

    def mutated(self, path, old, new):
        """Runs the check on a copy of src/ with `old` replaced in `path`."""
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "src")
            shutil.copytree(os.path.join(TOP, "src"), src)
            f = os.path.join(src, path)
            with open(f) as fh:
                text = fh.read()
            self.assertIn(old, text, f"{path} changed: update this control")
            with open(f, "w") as fh:
                fh.write(text.replace(old, new, 1))
            return run(src)

    def test_control_upward_import_fails(self):
        # The bottom layer naming the top one.
        rc, out = self.mutated("sys/stats.rs", "use kernel::c_str;",
                               "use kernel::c_str;\nuse crate::api::hooks::Registration;")
        self.assertEqual(rc, 1, out)
        self.assertIn("sys/stats.rs: upward import crate::api::hooks::Registration", out)

    def test_control_upward_inline_path_fails(self):
        # A path in code, not in a use line: the walk calling the protocol.
        rc, out = self.mutated("unwind/walk.rs", "use super::ffi;",
                               "use super::ffi;\nfn f() { crate::deferred::get_cookie(); }")
        self.assertEqual(rc, 1, out)
        self.assertIn("upward import crate::deferred::get_cookie (unwind < deferred)", out)

    def test_control_circle_fails(self):
        # The circle this check found first: section.rs <-> validate.rs.
        rc, out = self.mutated("unwind/sframe/section.rs", "use super::error::SframeError;",
                               "use super::error::SframeError;\n"
                               "use super::validate::MAX_FRES_PER_FDE;")
        self.assertEqual(rc, 1, out)
        self.assertIn("circle between unwind::sframe::section, unwind::sframe::validate", out)

    def test_control_upward_include_fails(self):
        rc, out = self.mutated("sys/context.c", '#include "sys.h"',
                               '#include "sys.h"\n#include "../unwind/unwind.h"')
        self.assertEqual(rc, 1, out)
        self.assertIn("src/sys/context.c: upward include ../unwind/unwind.h", out)

    def test_comments_do_not_count(self):
        rc, out = self.mutated("sys/stats.rs", "use kernel::c_str;",
                               "use kernel::c_str;\n// see crate::api::hooks::Registration\n")
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
