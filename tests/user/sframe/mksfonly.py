#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""An SFrame-only copy of a static program, for tables_sframe_by_function.

Usage: mksfonly.py PROGRAM OUT

The copy runs as the original (the loader needs neither), but the module
cannot find its .eh_frame: PT_GNU_EH_FRAME becomes PT_NULL and the
section headers, where a file without that header's .eh_frame is found,
are dropped.  Its SFrame section is then the only table of the file.
"""
import struct
import sys

PT_NULL = 0
PT_GNU_EH_FRAME = 0x6474E550
PT_GNU_SFRAME = 0x6474E554


def main():
    prog, out = sys.argv[1], sys.argv[2]
    b = bytearray(open(prog, "rb").read())
    phoff, = struct.unpack_from("<Q", b, 32)
    phentsize, phnum = struct.unpack_from("<HH", b, 54)
    kinds = []
    for i in range(phnum):
        at = phoff + i * phentsize
        kind, = struct.unpack_from("<I", b, at)
        kinds.append(kind)
        if kind == PT_GNU_EH_FRAME:
            struct.pack_into("<I", b, at, PT_NULL)
    if PT_GNU_SFRAME not in kinds:
        sys.exit(f"{prog}: no PT_GNU_SFRAME")
    # e_shoff, then e_shentsize, e_shnum, e_shstrndx.
    struct.pack_into("<Q", b, 40, 0)
    struct.pack_into("<HHH", b, 58, 0, 0, 0)
    with open(out, "wb") as f:
        f.write(b)
    sys.exit(0)


main()
