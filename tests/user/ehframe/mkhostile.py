#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hostile copies of the static-pie .eh_frame program for ehframe_hostile.

Usage: mkhostile.py PROGRAM OUTDIR

Each copy still runs (the kernel's ELF loader and the program never read
.eh_frame: the leaf's oracle is off with "loose"), but its .eh_frame_hdr,
its .eh_frame or its PT_GNU_EH_FRAME header lies.  The module must fall
back to frame pointers or end the walk cleanly on every one: no oops,
bounded work.  The name says what is wrong.  FDE-level damage is done to
the FDE of chain(), the function every walk of "chain" goes through.
"""
import os
import struct
import sys

PT_GNU_EH_FRAME = 0x6474E550


def uleb(b, at):
    v = shift = 0
    while True:
        x = b[at]
        at += 1
        v |= (x & 0x7F) << shift
        shift += 7
        if x < 0x80:
            return v, at


class Elf:
    def __init__(self, b):
        self.b = b
        shoff, = struct.unpack_from("<Q", b, 40)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 58)
        self.sh = []
        for i in range(shnum):
            self.sh.append(struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize))
        stro = self.sh[shstrndx][4]
        self.secs = {}
        for s in self.sh:
            name = b[stro + s[0]:b.index(b"\0", stro + s[0])].decode()
            self.secs[name] = s  # (name, type, flags, addr, offset, size, link, info, align, entsize)
        phoff, = struct.unpack_from("<Q", b, 32)
        phentsize, phnum = struct.unpack_from("<HH", b, 54)
        self.ph_eh = None
        for i in range(phnum):
            at = phoff + i * phentsize
            if struct.unpack_from("<I", b, at)[0] == PT_GNU_EH_FRAME:
                self.ph_eh = at
        if self.ph_eh is None:
            sys.exit("no PT_GNU_EH_FRAME")

    def sec(self, name):
        s = self.secs[name]
        return s[3], s[4], s[5]  # addr, offset, size

    def symbol(self, want):
        _, symoff, symsize = self.sec(".symtab")
        _, stroff, _ = self.sec(".strtab")
        for at in range(symoff, symoff + symsize, 24):
            st_name, st_info, _, _, st_value, st_size = struct.unpack_from("<IBBHQQ", self.b, at)
            name = self.b[stroff + st_name:self.b.index(b"\0", stroff + st_name)]
            if name == want and st_info & 0xF == 2 and st_size:
                return st_value, st_size
        sys.exit(f"no function {want!r}")


def records(b, off, size, vaddr):
    """(offset, end, is_cie, cie_offset, pc_begin, pc_begin_at, insns_at) of each record."""
    cies = {}
    at = off
    out = []
    while at + 4 <= off + size:
        length, = struct.unpack_from("<I", b, at)
        if length == 0:
            break
        if length == 0xFFFFFFFF:
            sys.exit("64-bit .eh_frame record")
        end = at + 4 + length
        cid, = struct.unpack_from("<I", b, at + 4)
        if cid == 0:
            p = at + 9
            aug = b[p:b.index(b"\0", p)]
            p += len(aug) + 1
            _, p = uleb(b, p)                # code alignment
            _, p = uleb(b, p)                # data alignment (sleb: skip alike)
            p += 1                           # return address register (v1)
            enc = 0
            if aug.startswith(b"z"):
                alen, p = uleb(b, p)
                q = p
                for ch in aug[1:]:
                    if ch == ord("R"):
                        enc = b[q]
                        q += 1
                    elif ch == ord("P"):
                        penc = b[q]
                        q += 1 + {0x0B: 4, 0x1B: 4, 0x9B: 4, 0x03: 4, 0x00: 8}[penc & 0x7F]
                    elif ch == ord("L"):
                        q += 1
                p += alen
            cies[at] = (enc, aug)
            out.append((at, end, True, at, 0, 0, p))
        else:
            cie = at + 4 - cid
            enc, aug = cies[cie]
            if enc & 0x0F != 0x0B or enc & 0x70 not in (0x10, 0x00):
                sys.exit(f"FDE encoding {enc:#x}")
            field = at + 8
            v, = struct.unpack_from("<i", b, field)
            pc = (vaddr + field - off + v) if enc & 0x70 == 0x10 else v
            p = field + 8
            if aug.startswith(b"z"):
                alen, p = uleb(b, p)
                p += alen
            out.append((at, end, False, cie, pc & (2**64 - 1), field, p))
        at = end
    return out


def main():
    prog, out = sys.argv[1], sys.argv[2]
    orig = bytes(open(prog, "rb").read())
    e = Elf(orig)
    hv, ho, hs = e.sec(".eh_frame_hdr")
    fv, fo, fs = e.sec(".eh_frame")
    if orig[ho] != 1 or orig[ho + 3] != 0x3B or orig[ho + 2] != 0x03:
        sys.exit("unexpected .eh_frame_hdr encodings")
    count, = struct.unpack_from("<I", orig, ho + 8)
    table = ho + 12
    recs = records(orig, fo, fs, fv)
    fdes = [r for r in recs if not r[2]]
    chain_pc, chain_size = e.symbol(b"chain")
    cf = [r for r in fdes if r[4] == chain_pc]
    if len(cf) != 1:
        sys.exit("no FDE for chain()")
    c_at, c_end, _, c_cie, _, c_field, c_ins = cf[0]
    big = max(fdes, key=lambda r: r[1] - r[6])
    cases = {}

    def case(name, edit):
        b = bytearray(orig)
        edit(b)
        cases[name] = b

    # .eh_frame_hdr
    case("hdr-version", lambda b: b.__setitem__(ho, 2))
    case("hdr-table-enc-bad", lambda b: b.__setitem__(ho + 3, 0x37))
    case("hdr-count-enc-bad", lambda b: b.__setitem__(ho + 2, 0x07))
    case("hdr-count-huge", lambda b: struct.pack_into("<I", b, ho + 8, 0x7FFFFFFF))
    case("hdr-eh-frame-ptr-out", lambda b: struct.pack_into("<i", b, ho + 4, -0x40000000))

    def unsorted(b):
        ents = [orig[table + 8 * i:table + 8 * i + 8] for i in range(count)]
        b[table:table + 8 * count] = b"".join(reversed(ents))
    case("hdr-unsorted", unsorted)

    def lying_locations(b):
        for i in range(count):
            loc, = struct.unpack_from("<i", orig, table + 8 * i)
            struct.pack_into("<i", b, table + 8 * i, loc + 0x40)
    case("hdr-lying-locations", lying_locations)

    def fde_ptr_out(b):
        for i in range(count):
            struct.pack_into("<i", b, table + 8 * i + 4, 0x7FFFFFF0)
    case("hdr-fde-ptr-out", fde_ptr_out)

    def fde_ptr_cie(b):
        # Every entry points at its FDE's CIE: a CIE where an FDE must be.
        for i in range(count):
            f, = struct.unpack_from("<i", orig, table + 8 * i + 4)
            rec = [r for r in fdes if r[0] - ho == f]
            if rec:
                struct.pack_into("<i", b, table + 8 * i + 4, rec[0][3] - ho)
    case("hdr-fde-ptr-to-cie", fde_ptr_cie)

    # .eh_frame records
    def all_fdes(fn):
        def edit(b):
            for r in fdes:
                fn(b, r)
        return edit
    case("fde-cie-pointer-out", all_fdes(lambda b, r: struct.pack_into("<I", b, r[0] + 4, 0x7FFFFFF0)))
    case("fde-cie-pointer-to-self", all_fdes(lambda b, r: struct.pack_into("<I", b, r[0] + 4, 4)))
    case("fde-length-past-section", lambda b: struct.pack_into("<I", b, c_at, 0x7FFFFFF0))
    case("fde-pc-range-huge", lambda b: struct.pack_into("<I", b, c_field + 4, 0x7FFFFFFF))

    def program_long(b):
        # DW_CFA_def_cfa_expression, length 127: past the FDE's end.
        b[c_ins:c_end] = bytes([0x0F, 0x7F]) + b"\0" * (c_end - c_ins - 2)
    case("fde-program-longer-than-fde", program_long)

    def op_cut(b):
        # DW_CFA_advance_loc4 as the FDE's last byte: its operand is past the end.
        b[c_ins:c_end] = b"\0" * (c_end - c_ins - 1) + bytes([0x04])
    case("fde-operand-cut", op_cut)

    def leb_open(b):
        # DW_CFA_def_cfa_offset whose ULEB128 never ends (to the FDE's end).
        b[c_ins:c_end] = bytes([0x0E]) + b"\x80" * (c_end - c_ins - 1)
    case("fde-leb128-unterminated", leb_open)

    def bad_reg(b):
        # DW_CFA_def_cfa r99, 8 ; DW_CFA_offset r99 ...: no such register.
        b[c_ins:c_end] = bytes([0x0C, 0x63, 0x08]) + b"\0" * (c_end - c_ins - 3)
    case("fde-cfa-register-bad", bad_reg)

    def restore_empty(b):
        # DW_CFA_restore_state with nothing remembered.
        b[c_ins:c_end] = bytes([0x0B]) * (c_end - c_ins)
    case("fde-restore-state-empty", restore_empty)

    def remember_flood(b):
        # The largest FDE, its program all DW_CFA_remember_state, made
        # chain()'s: its own FDE and the table entry point at it.
        at, end, _, _, _, field, ins = big
        b[ins:end] = bytes([0x0A]) * (end - ins)
        pcv = fv + field - fo
        struct.pack_into("<i", b, field, chain_pc - pcv)
        struct.pack_into("<I", b, field + 4, chain_size)
        for i in range(count):
            loc, = struct.unpack_from("<i", orig, table + 8 * i)
            if hv + loc == chain_pc:
                struct.pack_into("<i", b, table + 8 * i + 4, at - ho)
    case("fde-remember-state-flood", remember_flood)

    def cie_all(fn):
        def edit(b):
            for r in recs:
                if r[2]:
                    fn(b, r)
        return edit
    case("cie-version-bad", cie_all(lambda b, r: b.__setitem__(r[0] + 8, 9)))
    case("cie-augmentation-unknown", cie_all(lambda b, r: b.__setitem__(r[0] + 9, ord("y"))))

    def ra_col(b, r):
        p = r[0] + 9
        p = b.index(b"\0", p) + 1
        _, p = uleb(b, p)
        _, p = uleb(b, p)
        b[p] = 0x7F
    case("cie-return-column-bad", cie_all(ra_col))
    case("eh-frame-zeroed", lambda b: b.__setitem__(slice(fo, fo + fs), b"\0" * fs))

    # PT_GNU_EH_FRAME
    ph = e.ph_eh
    case("phdr-offset-past-eof", lambda b: struct.pack_into("<Q", b, ph + 8, len(orig) + 0x100000))
    case("phdr-vaddr-shifted", lambda b: struct.pack_into("<QQ", b, ph + 16, hv + 0x40, hv + 0x40))
    case("phdr-filesz-short", lambda b: struct.pack_into("<QQ", b, ph + 32, 4, 4))

    os.makedirs(out, exist_ok=True)
    for name, b in cases.items():
        p = os.path.join(out, name)
        with open(p, "wb") as f:
            f.write(b)
        os.chmod(p, 0o755)
    print(f"{len(cases)} hostile copies; chain() at {chain_pc:#x}, its FDE at {c_at - fo:#x}, "
          f"{len(fdes)} FDEs, {count} table entries")


if __name__ == "__main__":
    main()
