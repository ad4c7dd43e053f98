#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile copies of an SFrame v2 program for sframe_hostile.

Usage: mkhostile.py PROGRAM OUTDIR

Each copy still runs (the program headers the kernel's ELF loader uses
are untouched), but its .sframe section or its PT_GNU_SFRAME header
lies.  The module must fall back to frame pointers or end the walk
cleanly on every one: no oops, bounded work.  The name says what is
wrong; copies whose section still validates (a shifted address) give
wrong rules, which the walk must survive too.
"""
import os
import random
import struct
import sys

PT_GNU_SFRAME = 0x6474E554


def phdr_of_sframe(b):
    phoff, = struct.unpack_from("<Q", b, 32)
    phentsize, phnum = struct.unpack_from("<HH", b, 54)
    for i in range(phnum):
        at = phoff + i * phentsize
        if struct.unpack_from("<I", b, at)[0] == PT_GNU_SFRAME:
            return at
    sys.exit("no PT_GNU_SFRAME")


def main():
    prog, out = sys.argv[1], sys.argv[2]
    orig = open(prog, "rb").read()
    ph = phdr_of_sframe(orig)
    off, vaddr = struct.unpack_from("<QQ", orig, ph + 8)
    filesz, = struct.unpack_from("<Q", orig, ph + 32)
    ver = orig[off + 2]
    if ver != 2:
        sys.exit(f"not SFrame v2: {ver}")
    auxhdr = orig[off + 7]
    num_fdes, num_fres, fre_len, fdeoff, freoff = struct.unpack_from("<5I", orig, off + 8)
    fdes = off + 28 + auxhdr + fdeoff
    fres = off + 28 + auxhdr + freoff
    rng = random.Random(12)
    cases = {}

    def case(name, edit):
        b = bytearray(orig)
        edit(b)
        cases[name] = b

    case("sframe-magic", lambda b: struct.pack_into("<H", b, off, 0))
    case("sframe-version", lambda b: b.__setitem__(off + 2, 9))
    case("sframe-fdes-huge", lambda b: struct.pack_into("<I", b, off + 8, 0xFFFFFFFF))
    case("sframe-fres-count-lie", lambda b: struct.pack_into("<I", b, off + 12, num_fres + 1))
    case("sframe-fre-len-huge", lambda b: struct.pack_into("<I", b, off + 16, 0xFFFFFFF0))
    case("sframe-fre-random", lambda b: b.__setitem__(
        slice(fres, fres + fre_len), bytes(rng.randrange(256) for _ in range(fre_len))))

    def fde_sizes_1(b):
        for i in range(num_fdes):
            struct.pack_into("<I", b, fdes + 20 * i + 4, 1)
    case("sframe-fre-past-function", fde_sizes_1)

    def unsorted(b):
        a, z = fdes, fdes + 20 * (num_fdes - 1)
        b[a:a + 20], b[z:z + 20] = orig[z:z + 20], orig[a:a + 20]
    case("sframe-unsorted", unsorted)

    def overlap(b):
        for i in range(num_fdes):
            size, = struct.unpack_from("<I", b, fdes + 20 * i + 4)
            struct.pack_into("<I", b, fdes + 20 * i + 4, size + 0x1000)
    case("sframe-overlapping", overlap)
    case("sframe-fre-offset-huge", lambda b: struct.pack_into("<I", b, fdes + 8, 0x7FFFFFFF))
    case("sframe-pcmask-rep0", lambda b: (b.__setitem__(fdes + 16, b[fdes + 16] | 0x10),
                                          b.__setitem__(fdes + 17, 0)))
    case("phdr-offset-past-eof", lambda b: struct.pack_into("<Q", b, ph + 8, len(orig) + 0x100000))
    case("phdr-offset-overflow", lambda b: struct.pack_into("<Q", b, ph + 8, 2**64 - 16))
    case("phdr-filesz-short", lambda b: struct.pack_into("<Q", b, ph + 32, 28))
    case("phdr-filesz-huge", lambda b: struct.pack_into("<Q", b, ph + 32, 2**63))
    case("phdr-vaddr-shifted", lambda b: struct.pack_into("<Q", b, ph + 16, vaddr + 0x40))
    case("phdr-vaddr-far", lambda b: struct.pack_into("<Q", b, ph + 16, 2**63))

    os.makedirs(out, exist_ok=True)
    for name, b in cases.items():
        p = os.path.join(out, name)
        with open(p, "wb") as f:
            f.write(b)
        os.chmod(p, 0o755)


if __name__ == "__main__":
    main()
