# SPDX-License-Identifier: GPL-2.0
"""No speculative kernel read from a user-chosen address in the C loops
(src/unwind/user_loops.c): every later frame's address is checked and
masked by unwind_rs_user_slots() (access_ok() then mask_user_address()),
never by a bare access_ok().  scripts/build-tests checks the compiled
loops too (a cmov per check).  The controls below must be refused."""
import os
import re
import unittest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LOOPS = os.path.join(TOP, "src", "unwind", "user_loops.c")
LOOP_FNS = ("unwind_rs_memo_run", "unwind_rs_fp_frames")
HELPER = "unwind_rs_user_slots"


def bodies(text):
    """Each function definition's name and body (from its first '{' at
    column 0 to the matching '}' at column 0)."""
    out = {}
    for m in re.finditer(r"^[a-z][^\n;]*?\b(\w+)\(([^)]*)\)\s*\n\{\n(.*?)\n\}\n", text, re.S | re.M):
        out[m.group(1)] = m.group(3)
    return out


def offences(text):
    fns = bodies(text)
    errors = []
    for f in LOOP_FNS:
        if f not in fns:
            errors.append(f"{f}: not found")
            continue
        if re.search(r"\baccess_ok\(", fns[f]):
            errors.append(f"{f}: a bare access_ok() in the loop (use {HELPER}())")
        if not re.search(rf"\b{HELPER}\(", fns[f]):
            errors.append(f"{f}: no {HELPER}()")
    helper = fns.get(HELPER, "")
    if not re.search(r"\baccess_ok\(", helper) or not re.search(r"\bmask_user_address\(", helper):
        errors.append(f"{HELPER}: must check with access_ok() and mask with mask_user_address()")
    return errors


class NoSpec(unittest.TestCase):
    def setUp(self):
        with open(LOOPS) as f:
            self.text = f.read()

    def test_loops_mask_every_later_frame(self):
        self.assertEqual(offences(self.text), [])

    def mutated(self, old, new):
        self.assertIn(old, self.text, "user_loops.c changed: update this control")
        return offences(self.text.replace(old, new, 1))

    def test_control_bare_access_ok_in_fp_loop(self):
        errs = self.mutated("!unwind_rs_user_slots(b, 16, &b)", "!access_ok((void __user *)b, 16)")
        self.assertIn("unwind_rs_fp_frames: a bare access_ok() in the loop (use unwind_rs_user_slots())",
                      errs)

    def test_control_bare_access_ok_in_memo_loop(self):
        errs = self.mutated("!unwind_rs_user_slots(cfa - c.span, c.span, &lo))\n\t\t\t\tgoto stop;",
                            "!access_ok((void __user *)(cfa - c.span), c.span))\n\t\t\t\tgoto stop;")
        self.assertTrue(any(e.startswith("unwind_rs_memo_run: a bare access_ok()") for e in errs), errs)

    def test_control_helper_without_mask(self):
        errs = self.mutated("*masked = (unsigned long)mask_user_address((const void __user *)p);",
                            "*masked = p;")
        self.assertIn(f"{HELPER}: must check with access_ok() and mask with mask_user_address()", errs)


if __name__ == "__main__":
    unittest.main()
