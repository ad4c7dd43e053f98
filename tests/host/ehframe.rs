// SPDX-License-Identifier: GPL-2.0

//! Host tests of the `.eh_frame` compiler (`src/unwind/ehframe/`,
//! compiled in as is): unit tests per encoding, CFA instruction and
//! rejection on hand-built sections; sections made by real compilers
//! (gcc 14, g++ 12, clang 19: C and C++, -O0/-O2, with and without frame
//! pointers, PIE, non-PIE, shared, static PIE), whose compiled table must
//! give, at every PC of every FDE, the rules binutils' `readelf
//! --debug-dump=frames-interp` printed; and a randomized test of mutated
//! sections: no panic, work linear in the input, consistent counts.
//!
//! Built and run by `tests/host/run` with `rustc --test -O`; also passes
//! without `-O` (then overflow checks are on, with fewer mutations).  The
//! fixtures and the script that made them are in `fixtures/ehframe/`.

#[path = "../../src/unwind/ehframe/mod.rs"]
mod ehframe;
#[path = "../../src/unwind/sorted.rs"]
mod sorted;
#[path = "../../src/unwind/table/mod.rs"]
#[allow(dead_code, unused_imports)]
mod table;

#[path = "common/table_store.rs"]
#[allow(dead_code)]
mod table_store;

use ehframe::{
    compile, hdr_info, EhError, HdrInfo, Stats, MAX_CIE_INSNS, MAX_PLT_BLOCKS,
    MAX_PLT_BLOCKS_TOTAL, MAX_STACK, WORK_BASE, WORK_PER_BYTE,
};
use ehframe::{
    lookup, row_at, FnRow, Index, LookupError, Source, BLOCK_ENTRIES, MAX_FN_ROWS, MAX_PROBES,
    MAX_STEPS, PROBE_MEMO, SCRATCH_LEN, SMALL_ROWS, SMALL_SCRATCH_LEN,
};
use std::collections::HashMap;
use table::{Builder, CfaRule, Reg, Row, Rule, Table, YIELD_EVERY};
use table_store::{row, sp, VecStore};

// ---------------------------------------------------------------------
// Encoders and a builder of synthetic sections.

fn uleb(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

fn sleb(mut v: i64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        let done = (v == 0 && b & 0x40 == 0) || (v == -1 && b & 0x40 != 0);
        if done {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// `value` encoded with `enc`, for a field at `field` (for pcrel).
fn enc_ptr(enc: u8, value: u64, field: u64) -> Vec<u8> {
    let v = match enc & 0x70 {
        0 => value,
        0x10 => value.wrapping_sub(field),
        _ => value,
    };
    match enc & 0x0f {
        0x00 | 0x04 | 0x0c => v.to_le_bytes().to_vec(),
        0x01 => uleb(v),
        0x02 | 0x0a => (v as u16).to_le_bytes().to_vec(),
        0x03 | 0x0b => (v as u32).to_le_bytes().to_vec(),
        0x09 => sleb(v as i64),
        _ => panic!("format {enc:#x}"),
    }
}

/// Concatenates byte pieces.
fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// A CIE.
#[derive(Clone, Debug)]
struct C {
    version: u8,
    aug: &'static str,
    code_align: u64,
    data_align: i64,
    ra: u64,
    /// The augmentation data (its length is prefixed when `aug` has z).
    aug_data: Vec<u8>,
    insns: Vec<u8>,
    len64: bool,
}

/// GCC's x86-64 CIE: "zR", pcrel|sdata4, CFA = rsp + 8, RA at CFA - 8.
fn gcc_cie() -> C {
    C {
        version: 1,
        aug: "zR",
        code_align: 1,
        data_align: -8,
        ra: 16,
        aug_data: vec![0x1b],
        insns: vec![0x0c, 7, 8, 0x90, 1],
        len64: false,
    }
}

/// An `.eh_frame` being built at `addr`.
struct Eh {
    addr: u64,
    bytes: Vec<u8>,
}

impl Eh {
    fn new(addr: u64) -> Self {
        Eh {
            addr,
            bytes: Vec::new(),
        }
    }

    /// Appends an entry of `body` (after the length), 32- or 64-bit.
    fn entry(&mut self, len64: bool, body: &[u8]) -> usize {
        let off = self.bytes.len();
        if len64 {
            self.bytes.extend_from_slice(&0xffff_ffffu32.to_le_bytes());
            self.bytes
                .extend_from_slice(&(body.len() as u64).to_le_bytes());
        } else {
            self.bytes
                .extend_from_slice(&(body.len() as u32).to_le_bytes());
        }
        self.bytes.extend_from_slice(body);
        off
    }

    fn cie(&mut self, c: &C) -> usize {
        let mut b = vec![0, 0, 0, 0, c.version];
        b.extend_from_slice(c.aug.as_bytes());
        b.push(0);
        b.extend(uleb(c.code_align));
        b.extend(sleb(c.data_align));
        if c.version == 1 {
            b.push(c.ra as u8);
        } else {
            b.extend(uleb(c.ra));
        }
        if c.aug.starts_with('z') {
            b.extend(uleb(c.aug_data.len() as u64));
        }
        b.extend_from_slice(&c.aug_data);
        b.extend_from_slice(&c.insns);
        self.entry(c.len64, &b)
    }

    /// An FDE of CIE `cie` (with encoding `enc`, z if `aug` is some).
    #[allow(clippy::too_many_arguments)]
    fn fde_full(
        &mut self,
        cie: usize,
        enc: u8,
        pc: u64,
        range: u64,
        aug: Option<&[u8]>,
        insns: &[u8],
        len64: bool,
    ) -> usize {
        let off = self.bytes.len();
        let id_off = off + if len64 { 12 } else { 4 };
        let mut b = ((id_off - cie) as u32).to_le_bytes().to_vec();
        let field = self.addr + id_off as u64 + 4;
        b.extend(enc_ptr(enc, pc, field));
        b.extend(enc_ptr(enc & 0x0f, range, 0));
        if let Some(a) = aug {
            b.extend(uleb(a.len() as u64));
            b.extend_from_slice(a);
        }
        b.extend_from_slice(insns);
        self.entry(len64, &b)
    }

    /// An FDE of a GCC-style CIE.
    fn fde(&mut self, cie: usize, pc: u64, range: u64, insns: &[u8]) -> usize {
        self.fde_full(cie, 0x1b, pc, range, Some(&[]), insns, false)
    }

    fn fde_addr(&self, off: usize) -> u64 {
        self.addr + off as u64
    }
}

/// An `.eh_frame_hdr` at `addr` for `.eh_frame` at `eh`, with `entries`
/// (initial location, FDE address).
fn hdr(addr: u64, eh: u64, entries: &[(u64, u64)]) -> Vec<u8> {
    let mut b = vec![1, 0x1b, 0x03, 0x3b];
    b.extend(((eh.wrapping_sub(addr + 4)) as u32).to_le_bytes());
    b.extend((entries.len() as u32).to_le_bytes());
    for &(loc, fde) in entries {
        b.extend((loc.wrapping_sub(addr) as u32).to_le_bytes());
        b.extend((fde.wrapping_sub(addr) as u32).to_le_bytes());
    }
    b
}

const HDR_ADDR: u64 = 0x8000;
const EH_ADDR: u64 = 0x8400;

/// A compiled table and what the compilation said.
struct Out {
    r: Result<Stats, EhError>,
    store: VecStore,
    base: Option<u64>,
}

impl Out {
    fn table(&self) -> Table<'_> {
        self.store.table(self.base)
    }
    fn at(&self, pc: u64) -> Option<Row> {
        self.table().lookup(pc)
    }
    fn stats(&self) -> Stats {
        self.r.clone().expect("compiled")
    }
}

fn run(hdr: &[u8], hdr_addr: u64, eh: &[u8], eh_addr: u64) -> Out {
    let mut b = Builder::new(VecStore::new());
    let r = compile(hdr, hdr_addr, eh, eh_addr, &mut b, &mut || true);
    let (store, base) = b.finish().expect("finish");
    Out { r, store, base }
}

/// Compiles `eh` with a header listing `fdes` (their offsets in `eh`)
/// at the locations their own `pc_begin` gives (`locs`).
fn run_eh(eh: &Eh, entries: &[(u64, usize)]) -> Out {
    let e: Vec<(u64, u64)> = entries.iter().map(|&(l, o)| (l, eh.fde_addr(o))).collect();
    run(&hdr(HDR_ADDR, eh.addr, &e), HDR_ADDR, &eh.bytes, eh.addr)
}

/// One FDE at 0x1000..0x1000+range with `insns`, under `cie`.
fn one(cie: &C, range: u64, insns: &[u8]) -> Out {
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(cie);
    let z = cie.aug.starts_with('z');
    let enc = if cie.aug.contains('R') {
        cie.aug_data.first().copied().unwrap_or(0)
    } else {
        0
    };
    let f = eh.fde_full(c, enc, 0x1000, range, z.then_some(&[][..]), insns, false);
    run_eh(&eh, &[(0x1000, f)])
}

// ---------------------------------------------------------------------
// The header.

#[test]
fn hdr_info_decodes_every_eh_frame_ptr_encoding() {
    let base = |enc: u8, ptr: &[u8]| cat(&[&[1, enc, 0x03, 0x3b], ptr, &7u32.to_le_bytes()]);
    let want = |a| {
        Ok(HdrInfo {
            eh_frame_addr: a,
            fde_count: 7,
        })
    };
    // pcrel|sdata4: relative to the field (hdr + 4).
    let h = base(0x1b, &0x100i32.to_le_bytes());
    assert_eq!(hdr_info(&h, 0x2000), want(0x2104));
    let h = base(0x1b, &(-0x100i32).to_le_bytes());
    assert_eq!(hdr_info(&h, 0x2000), want(0x1f04));
    // absptr, udata4, udata8, sdata8, uleb, sleb: absolute.
    assert_eq!(
        hdr_info(&base(0x00, &0x5000u64.to_le_bytes()), 0),
        want(0x5000)
    );
    assert_eq!(
        hdr_info(&base(0x03, &0x5000u32.to_le_bytes()), 0),
        want(0x5000)
    );
    assert_eq!(
        hdr_info(&base(0x04, &0x5000u64.to_le_bytes()), 0),
        want(0x5000)
    );
    assert_eq!(
        hdr_info(&base(0x0c, &0x5000u64.to_le_bytes()), 0),
        want(0x5000)
    );
    assert_eq!(hdr_info(&base(0x01, &uleb(0x5000)), 0), want(0x5000));
    assert_eq!(hdr_info(&base(0x09, &sleb(0x5000)), 0), want(0x5000));
    assert_eq!(
        hdr_info(&base(0x02, &0x5000u16.to_le_bytes()), 0),
        want(0x5000)
    );
    // datarel: relative to the header's start.
    assert_eq!(
        hdr_info(&base(0x3b, &0x40i32.to_le_bytes()), 0x2000),
        want(0x2040)
    );
    // The table may be missing for hdr_info (count 7, no entries).
    // Refused: indirect, omit, textrel, unknown format.
    for enc in [0x9b, 0xff, 0x2b, 0x05, 0x0d, 0x5b] {
        let h = base(enc, &0u64.to_le_bytes());
        assert_eq!(hdr_info(&h, 0x2000), Err(EhError::Encoding), "enc {enc:#x}");
    }
}

#[test]
fn hdr_refusals() {
    let good = hdr(HDR_ADDR, EH_ADDR, &[(0x1000, EH_ADDR)]);
    assert!(hdr_info(&good, HDR_ADDR).is_ok());
    let with = |i: usize, v: u8| {
        let mut h = good.clone();
        h[i] = v;
        h
    };
    for v in [0, 2, 3, 0xff] {
        assert_eq!(hdr_info(&with(0, v), HDR_ADDR), Err(EhError::Version));
    }
    // fde_count_enc: omitted, pcrel, datarel: refused; table_enc: only 0x3b.
    for v in [0xff, 0x13, 0x33] {
        assert_eq!(hdr_info(&with(2, v), HDR_ADDR), Err(EhError::Encoding));
    }
    for v in [0x1b, 0x03, 0x3c, 0x3a, 0x33, 0xff, 0x00] {
        assert_eq!(hdr_info(&with(3, v), HDR_ADDR), Err(EhError::Encoding));
    }
    // A count above u32 (udata8).
    let mut h = vec![1, 0x1b, 0x04, 0x3b, 0, 0, 0, 0];
    h.extend((1u64 << 32).to_le_bytes());
    assert_eq!(hdr_info(&h, 0), Err(EhError::Count));
    // Every truncation of the fixed part.
    for n in 0..12 {
        assert_eq!(
            hdr_info(&good[..n], HDR_ADDR),
            Err(EhError::Truncated),
            "{n}"
        );
    }
    // The table cut: hdr_info is fine, compile is not.
    for n in 12..good.len() {
        assert!(hdr_info(&good[..n], HDR_ADDR).is_ok());
        let o = run(&good[..n], HDR_ADDR, &[], EH_ADDR);
        assert_eq!(o.r, Err(EhError::Truncated), "{n}");
    }
    // Unusable headers also fail compile.
    let o = run(&with(0, 2), HDR_ADDR, &[], EH_ADDR);
    assert_eq!(o.r, Err(EhError::Version));
    let o = run(&with(3, 0x1b), HDR_ADDR, &[], EH_ADDR);
    assert_eq!(o.r, Err(EhError::Encoding));
}

#[test]
fn unsorted_table_is_an_error_and_lying_entries_are_skipped() {
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let f1 = eh.fde(c, 0x1000, 0x10, &[]);
    let f2 = eh.fde(c, 0x2000, 0x10, &[]);
    let f3 = eh.fde(c, 0x3000, 0x10, &[]);
    let o = run_eh(&eh, &[(0x1000, f1), (0x2000, f2), (0x3000, f3)]);
    assert_eq!(o.stats().compiled, 3);
    // Backwards: the whole compilation fails.
    let o = run_eh(&eh, &[(0x2000, f2), (0x1000, f1), (0x3000, f3)]);
    assert_eq!(o.r, Err(EhError::Unsorted));
    // Lying: the table says 0x1800, the FDE 0x2000; and an FDE listed
    // at another FDE's location.
    let o = run_eh(&eh, &[(0x1000, f1), (0x1800, f2), (0x3000, f3)]);
    let s = o.stats();
    assert_eq!((s.compiled, s.lying, s.skipped()), (2, 1, 1));
    assert_eq!(o.at(0x2000), None);
    assert!(o.at(0x3000).is_some());
    let o = run_eh(&eh, &[(0x1000, f1), (0x2000, f3), (0x3000, f3)]);
    let s = o.stats();
    assert_eq!((s.compiled, s.lying), (2, 1));
    // Equal locations: the second overlaps the first.
    let o = run_eh(&eh, &[(0x1000, f1), (0x1000, f1), (0x3000, f3)]);
    let s = o.stats();
    assert_eq!((s.compiled, s.overlap, s.entries), (2, 1, 3));
}

#[test]
fn overlapping_empty_and_wide_fdes_are_skipped() {
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let f1 = eh.fde(c, 0x1000, 0x100, &[]);
    let f2 = eh.fde(c, 0x1080, 0x10, &[]);
    let f3 = eh.fde(c, 0x1100, 0, &[]);
    let f4 = eh.fde(c, 0x1200, 0x10, &[]);
    let c8 = eh.cie(&C {
        aug_data: vec![0x04],
        ..gcc_cie()
    });
    let f5 = eh.fde_full(c8, 0x04, 0x1300, u64::MAX, Some(&[]), &[], false);
    let f6 = eh.fde_full(c8, 0x04, 0x1400, 1 << 32, Some(&[]), &[], false);
    let f7 = eh.fde(c, 0x7000_0000, 0x10, &[]);
    let o = run_eh(
        &eh,
        &[
            (0x1000, f1),
            (0x1080, f2),
            (0x1100, f3),
            (0x1200, f4),
            (0x1300, f5),
            (0x1400, f6),
            (0x7000_0000, f7),
        ],
    );
    let s = o.stats();
    assert_eq!(s.compiled, 3, "{s:?}");
    assert_eq!((s.overlap, s.empty, s.wide), (1, 1, 2), "{s:?}");
    assert_eq!(o.at(0x7000_000f), Some(row(sp(8), None)));
    assert_eq!(o.at(0x10ff), Some(row(sp(8), None)));
    assert_eq!(o.at(0x1100), None);
    assert_eq!(o.at(0x120f), Some(row(sp(8), None)));
    assert_eq!(o.at(0x1210), None);
}

// ---------------------------------------------------------------------
// CIEs and FDEs.

#[test]
fn every_fde_pointer_encoding() {
    // Absolute: pc 0x5000 fits every format (sdata2 too); pcrel: 0x9000
    // is just above the field (EH_ADDR + 0x20 or so).
    for fmt in [0x00u8, 0x01, 0x02, 0x03, 0x04, 0x09, 0x0a, 0x0b, 0x0c] {
        for app in [0x00u8, 0x10] {
            let enc = fmt | app;
            let cie = C {
                aug_data: vec![enc],
                ..gcc_cie()
            };
            let mut eh = Eh::new(EH_ADDR);
            let c = eh.cie(&cie);
            let pc = if app == 0 { 0x5000 } else { 0x9000 };
            let f = eh.fde_full(c, enc, pc, 0x10, Some(&[]), &[], false);
            let o = run_eh(&eh, &[(pc, f)]);
            assert_eq!(o.stats().compiled, 1, "enc {enc:#x}");
            assert_eq!(o.at(pc + 0xf), Some(row(sp(8), None)), "enc {enc:#x}");
            assert_eq!(o.at(pc + 0x10), None);
            // sdata2 sign-extends: 0x9000 absolute reads as a negative
            // address, which the table's location then contradicts.
            if enc == 0x0a {
                let mut eh = Eh::new(EH_ADDR);
                let c = eh.cie(&cie);
                let f = eh.fde_full(c, enc, 0x9000, 0x10, Some(&[]), &[], false);
                assert_eq!(run_eh(&eh, &[(0x9000, f)]).stats().lying, 1);
            }
            // Signed pcrel to a function below the section.
            if app == 0x10 && matches!(fmt, 0x09 | 0x0a | 0x0b | 0x0c | 0x00) {
                let mut eh = Eh::new(EH_ADDR);
                let c = eh.cie(&cie);
                let f = eh.fde_full(c, enc, 0x2000, 0x10, Some(&[]), &[], false);
                let o = run_eh(&eh, &[(0x2000, f)]);
                assert_eq!(o.stats().compiled, 1, "enc {enc:#x}");
            }
        }
    }
    // No R: absptr.
    let cie = C {
        aug: "z",
        aug_data: vec![],
        ..gcc_cie()
    };
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&cie);
    let f = eh.fde_full(c, 0x00, 0x9000, 0x10, Some(&[]), &[], false);
    assert_eq!(run_eh(&eh, &[(0x9000, f)]).stats().compiled, 1);
    // No augmentation at all: no augmentation data in FDEs either.
    let cie = C {
        aug: "",
        aug_data: vec![],
        ..gcc_cie()
    };
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&cie);
    let f = eh.fde_full(c, 0x00, 0x9000, 0x10, None, &[0x0e, 16], false);
    let o = run_eh(&eh, &[(0x9000, f)]);
    assert_eq!(o.at(0x9000), Some(row(sp(16), None)));
}

#[test]
fn refused_fde_encodings_skip_the_cie() {
    // datarel, textrel, funcrel, aligned, indirect, omit, bad formats.
    for enc in [
        0x3b, 0x23, 0x43, 0x50, 0x9b, 0x80, 0xff, 0x05, 0x08, 0x0d, 0x0f, 0x1e,
    ] {
        let cie = C {
            aug_data: vec![enc],
            ..gcc_cie()
        };
        let mut eh = Eh::new(EH_ADDR);
        let c = eh.cie(&cie);
        let f = eh.fde_full(c, 0x03, 0x9000, 0x10, Some(&[]), &[], false);
        let o = run_eh(&eh, &[(0x9000, f)]);
        let s = o.stats();
        assert_eq!((s.compiled, s.bad_cie), (0, 1), "enc {enc:#x}");
    }
}

#[test]
fn cie_versions_augmentations_and_ra_column() {
    let ok = |c: C| one(&c, 0x10, &[]).stats().compiled == 1;
    let bad_cie = |c: C| {
        let s = one(&c, 0x10, &[]).stats();
        s.compiled == 0 && s.bad_cie == 1
    };
    assert!(ok(gcc_cie()));
    assert!(ok(C {
        version: 3,
        ..gcc_cie()
    }));
    // Version 3, RA 16 as a 2-byte ULEB.
    let mut eh = Eh::new(EH_ADDR);
    let mut b = vec![0, 0, 0, 0, 3, b'z', b'R', 0, 1, 0x78, 0x90, 0x00, 1, 0x1b];
    b.extend([0x0c, 7, 8, 0x90, 1]);
    let c = eh.entry(false, &b);
    let f = eh.fde(c, 0x1000, 0x10, &[]);
    assert_eq!(run_eh(&eh, &[(0x1000, f)]).stats().compiled, 1);
    // A code alignment LEB128 that does not end, or over 64 bits.
    for leb in [
        &[0x80u8; 11][..],
        &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
    ] {
        let mut eh = Eh::new(EH_ADDR);
        let b = cat(&[&[0, 0, 0, 0, 1, b'z', b'R', 0], leb, &[0x78, 16, 1, 0x1b]]);
        let c = eh.entry(false, &b);
        let f = eh.fde(c, 0x1000, 0x10, &[]);
        let s = run_eh(&eh, &[(0x1000, f)]).stats();
        assert_eq!((s.compiled, s.bad_cie), (0, 1));
    }
    for v in [0, 2, 4, 0xff] {
        assert!(bad_cie(C {
            version: v,
            ..gcc_cie()
        }));
    }
    for ra in [0, 8, 15, 17, 0x90] {
        assert!(bad_cie(C { ra, ..gcc_cie() }));
    }
    // GCC's ancient "eh", an unknown letter, no leading z, too long.
    assert!(bad_cie(C {
        aug: "eh",
        aug_data: vec![],
        ..gcc_cie()
    }));
    assert!(bad_cie(C {
        aug: "zRX",
        aug_data: vec![0x1b, 0],
        ..gcc_cie()
    }));
    assert!(bad_cie(C {
        aug: "R",
        aug_data: vec![0x1b],
        ..gcc_cie()
    }));
    assert!(bad_cie(C {
        aug: "zRPLSS",
        aug_data: vec![0x1b],
        ..gcc_cie()
    }));
    // zPLR: personality (indirect pcrel sdata4), LSDA encoding; the FDE
    // has an LSDA pointer in its augmentation data.
    let cie = C {
        aug: "zPLR",
        aug_data: vec![0x9b, 0x10, 0x20, 0x30, 0x40, 0x1b, 0x1b],
        ..gcc_cie()
    };
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&cie);
    let f = eh.fde_full(
        c,
        0x1b,
        0x1000,
        0x10,
        Some(&[1, 2, 3, 4]),
        &[0x0e, 16],
        false,
    );
    let o = run_eh(&eh, &[(0x1000, f)]);
    assert_eq!(o.at(0x1000), Some(row(sp(16), None)));
    // Augmentation data shorter than its letters need.
    assert!(bad_cie(C {
        aug: "zPLR",
        aug_data: vec![0x9b, 0x10, 0x20],
        ..gcc_cie()
    }));
    // Personality with a refused encoding (aligned).
    assert!(bad_cie(C {
        aug: "zPR",
        aug_data: vec![0x50, 0, 0, 0, 0, 0, 0, 0, 0, 0x1b],
        ..gcc_cie()
    }));
    // Initial instructions over the cap.
    let mut insns = vec![0x0c, 7, 8, 0x90, 1];
    insns.resize(MAX_CIE_INSNS, 0);
    assert!(ok(C {
        insns: insns.clone(),
        ..gcc_cie()
    }));
    insns.push(0);
    assert!(bad_cie(C { insns, ..gcc_cie() }));
    // A location change in a CIE.
    assert!(bad_cie(C {
        insns: vec![0x0c, 7, 8, 0x90, 1, 0x41],
        ..gcc_cie()
    }));
    // An unknown opcode in a CIE.
    assert!(bad_cie(C {
        insns: vec![0x0c, 7, 8, 0x90, 1, 0x1c],
        ..gcc_cie()
    }));
}

#[test]
fn signal_cie() {
    let cie = C {
        aug: "zRS",
        ..gcc_cie()
    };
    let o = one(&cie, 0x10, &[]);
    let want = Row {
        signal: true,
        ..row(sp(8), None)
    };
    assert_eq!(o.at(0x1000), Some(want));
    assert_eq!(o.at(0x100f), Some(want));
}

#[test]
fn sixty_four_bit_lengths() {
    let cie = C {
        len64: true,
        ..gcc_cie()
    };
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&cie);
    let f1 = eh.fde_full(c, 0x1b, 0x1000, 0x10, Some(&[]), &[0x41, 0x0e, 16], true);
    let f2 = eh.fde_full(c, 0x1b, 0x2000, 0x10, Some(&[]), &[], false);
    let o = run_eh(&eh, &[(0x1000, f1), (0x2000, f2)]);
    assert_eq!(o.stats().compiled, 2);
    assert_eq!(o.at(0x1000), Some(row(sp(8), None)));
    assert_eq!(o.at(0x1001), Some(row(sp(16), None)));
    assert_eq!(o.at(0x2000), Some(row(sp(8), None)));
    // A 64-bit length past the end, and one above usize.
    let mut bad = eh.bytes.clone();
    bad[f1 + 4..f1 + 12].copy_from_slice(&(1u64 << 40).to_le_bytes());
    let e: Vec<(u64, u64)> = vec![(0x1000, eh.fde_addr(f1))];
    let o = run(&hdr(HDR_ADDR, EH_ADDR, &e), HDR_ADDR, &bad, EH_ADDR);
    assert_eq!(o.stats().bad_fde, 1);
    bad[f1 + 4..f1 + 12].copy_from_slice(&u64::MAX.to_le_bytes());
    let o = run(&hdr(HDR_ADDR, EH_ADDR, &e), HDR_ADDR, &bad, EH_ADDR);
    assert_eq!(o.stats().bad_fde, 1);
}

#[test]
fn cie_pointer_refusals() {
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let f1 = eh.fde(c, 0x1000, 0x10, &[]);
    let f2 = eh.fde(c, 0x2000, 0x10, &[]);
    let entries = [(0x1000, eh.fde_addr(f1)), (0x2000, eh.fde_addr(f2))];
    let h = hdr(HDR_ADDR, EH_ADDR, &entries);
    let with_ptr = |v: u32| {
        let mut b = eh.bytes.clone();
        b[f2 + 4..f2 + 8].copy_from_slice(&v.to_le_bytes());
        b
    };
    let id = (f2 + 4) as u32;
    // Before the section's start.
    let o = run(&h, HDR_ADDR, &with_ptr(id + 1), EH_ADDR);
    assert_eq!((o.stats().compiled, o.stats().bad_cie), (1, 1));
    let o = run(&h, HDR_ADDR, &with_ptr(u32::MAX), EH_ADDR);
    assert_eq!((o.stats().compiled, o.stats().bad_cie), (1, 1));
    // At the other FDE.
    let o = run(&h, HDR_ADDR, &with_ptr(id - f1 as u32), EH_ADDR);
    assert_eq!((o.stats().compiled, o.stats().bad_cie), (1, 1));
    // Inside the CIE, not at its start.
    let o = run(&h, HDR_ADDR, &with_ptr(id - 2), EH_ADDR);
    assert_eq!((o.stats().compiled, o.stats().bad_cie), (1, 1));
    // A CIE past the given bytes: FDE first, CIE after, bytes cut.
    let mut eh = Eh::new(EH_ADDR);
    let f = eh.bytes.len();
    // The FDE's pointer must be backwards: build CIE-less FDE by hand,
    // pointing "back" by a value that wraps to after it.
    let body = cat(&[&0xffff_fff0u32.to_le_bytes(), &[0; 9]]);
    eh.entry(false, &body);
    let o = run_eh(&eh, &[(0x1000, f)]);
    assert_eq!(o.stats().bad_cie, 1);
    // An FDE address pointing at a CIE, at the terminator, outside.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let f = eh.fde(c, 0x1000, 0x10, &[]);
    let t = eh.bytes.len();
    eh.bytes.extend([0, 0, 0, 0]);
    let o = run_eh(
        &eh,
        &[
            (0x1000, c),
            (0x2000, t),
            (0x3000, t + 4),
            (0x4000, f + 1000),
        ],
    );
    let s = o.stats();
    assert_eq!((s.bad_fde, s.outside, s.compiled), (2, 2, 0), "{s:?}");
    // The FDE address below the section.
    let e = [(0x1000, EH_ADDR - 8), (0x2000, eh.fde_addr(f))];
    let o = run(&hdr(HDR_ADDR, EH_ADDR, &e), HDR_ADDR, &eh.bytes, EH_ADDR);
    let s = o.stats();
    assert_eq!((s.outside, s.lying), (1, 1), "{s:?}");
}

#[test]
fn truncated_sections_skip_what_is_cut() {
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let mut entries = Vec::new();
    for i in 0..8u64 {
        let f = eh.fde(
            c,
            0x1000 + 0x100 * i,
            0x40,
            &[0x41, 0x0e, 16, 0x4f, 0x0e, 8],
        );
        entries.push((0x1000 + 0x100 * i, f));
    }
    let full = run_eh(&eh, &entries).stats().compiled;
    assert_eq!(full, 8);
    let h: Vec<(u64, u64)> = entries.iter().map(|&(l, o)| (l, eh.fde_addr(o))).collect();
    let h = hdr(HDR_ADDR, EH_ADDR, &h);
    let mut last = 0;
    for n in 0..=eh.bytes.len() {
        let o = run(&h, HDR_ADDR, &eh.bytes[..n], EH_ADDR);
        let s = o.stats();
        // Whole FDEs only: an FDE is compiled iff its bytes are all there.
        let whole = entries
            .iter()
            .filter(|&&(_, f)| f + 4 + eh.bytes[f] as usize <= n)
            .count() as u32;
        let want = if n >= 4 + eh.bytes[c] as usize {
            whole
        } else {
            0
        };
        assert_eq!(s.compiled, want, "n {n}");
        assert_eq!(s.compiled + s.skipped(), 8, "n {n}");
        assert!(s.compiled >= last);
        last = s.compiled;
        assert_eq!(
            s.bad_cie + s.bad_fde + s.outside + s.compiled,
            8,
            "n {n}: {s:?}"
        );
    }
}

// ---------------------------------------------------------------------
// CFA instructions.

const FP_SAVED: Option<Rule> = Some(Rule::AtCfa(-16));

fn rbp_frame(cfa: i32) -> Row {
    row(
        CfaRule {
            reg: Reg::Fp,
            offset: cfa,
            deref: false,
        },
        FP_SAVED,
    )
}

#[test]
fn a_frame_pointer_prologue_and_epilogue() {
    // push %rbp; mov %rsp,%rbp; ...; leave (remember/restore); ret.
    let p = [
        0x41, 0x0e, 16, 0x86, 2, // +1: cfa rsp+16, rbp at cfa-16
        0x43, 0x0d, 6, // +4: cfa rbp+16
        0x4a, 0x0a, // +14: remember
        0x0c, 7, 8, 0xc6, // leave: cfa rsp+8, restore rbp
        0x41, 0x0b, // +15: restore_state
    ];
    let o = one(&gcc_cie(), 0x20, &p);
    assert_eq!(o.at(0x1000), Some(row(sp(8), None)));
    assert_eq!(o.at(0x1001), Some(row(sp(16), FP_SAVED)));
    assert_eq!(o.at(0x1003), Some(row(sp(16), FP_SAVED)));
    assert_eq!(o.at(0x1004), Some(rbp_frame(16)));
    assert_eq!(o.at(0x100d), Some(rbp_frame(16)));
    assert_eq!(o.at(0x100e), Some(row(sp(8), None)));
    assert_eq!(o.at(0x100f), Some(rbp_frame(16)));
    assert_eq!(o.at(0x101f), Some(rbp_frame(16)));
    assert_eq!(o.at(0x1020), None);
    assert_eq!(o.at(0x0fff), None);
}

#[test]
fn every_advance_and_set_loc() {
    let mut p = vec![0x41, 0x0e, 16]; // 0x1001
    p.extend([0x02, 0x10, 0x0e, 24]); // advance_loc1 16: 0x1011
    p.extend([0x03, 0x00, 0x01, 0x0e, 32]); // advance_loc2 256: 0x1111
    p.extend([0x04, 0x00, 0x00, 0x01, 0x00, 0x0e, 40]); // advance_loc4 65536: 0x11111
                                                        // set_loc 0x12000 (pcrel sdata4: the field's address is needed).
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let start = eh.bytes.len();
    // FDE layout: len 4, ptr 4, pc 4, range 4, auglen 1, then p.
    let field = EH_ADDR + start as u64 + 17 + p.len() as u64 + 1;
    p.push(0x01);
    p.extend((0x12000u64.wrapping_sub(field) as u32).to_le_bytes());
    p.extend([0x0e, 48]);
    let f = eh.fde(c, 0x1000, 0x20000, &p);
    assert_eq!(f, start);
    let o = run_eh(&eh, &[(0x1000, f)]);
    assert_eq!(o.stats().compiled, 1);
    for (pc, cfa) in [
        (0x1000, 8),
        (0x1001, 16),
        (0x1010, 16),
        (0x1011, 24),
        (0x1110, 24),
        (0x1111, 32),
        (0x11110, 32),
        (0x11111, 40),
        (0x11fff, 40),
        (0x12000, 48),
        (0x20fff, 48),
    ] {
        assert_eq!(o.at(pc), Some(row(sp(cfa), None)), "pc {pc:#x}");
    }
    assert_eq!(o.at(0x21000), None);
    // Code alignment factors the advances (not set_loc).
    let cie = C {
        code_align: 4,
        ..gcc_cie()
    };
    let o = one(&cie, 0x20, &[0x41, 0x0e, 16, 0x02, 2, 0x0e, 24]);
    assert_eq!(o.at(0x1003), Some(row(sp(8), None)));
    assert_eq!(o.at(0x1004), Some(row(sp(16), None)));
    assert_eq!(o.at(0x100b), Some(row(sp(16), None)));
    assert_eq!(o.at(0x100c), Some(row(sp(24), None)));
    // Rows past the function's end are dropped; the end holds.
    let o = one(&gcc_cie(), 0x10, &[0x41, 0x0e, 16, 0x02, 0x40, 0x0e, 24]);
    assert_eq!(o.at(0x100f), Some(row(sp(16), None)));
    assert_eq!(o.at(0x1010), None);
    assert_eq!(o.at(0x1041), None);
}

#[test]
fn register_rules() {
    let cie = gcc_cie();
    let at = |p: &[u8]| one(&cie, 0x10, &[p, &[0x41]].concat()).at(0x1001);
    let fp = |p: &[u8]| at(p).map(|r| r.fp);
    let ra = |p: &[u8]| at(p).map(|r| r.ra);
    // offset family, for RBP: factored by data_align (-8).
    assert_eq!(fp(&[0x86, 2]), Some(Some(Rule::AtCfa(-16))));
    assert_eq!(fp(&[0x05, 6, 3]), Some(Some(Rule::AtCfa(-24))));
    assert_eq!(fp(&[0x11, 6, 0x7d]), Some(Some(Rule::AtCfa(24)))); // sf -3
    assert_eq!(fp(&[0x11, 6, 0x02]), Some(Some(Rule::AtCfa(-16)))); // sf +2
    assert_eq!(fp(&[0x2f, 6, 2]), Some(Some(Rule::AtCfa(16)))); // negative
                                                                // Unchanged: unspecified, same_value, undefined.
    assert_eq!(fp(&[]), Some(None));
    assert_eq!(fp(&[0x86, 2, 0x08, 6]), Some(None));
    assert_eq!(fp(&[0x86, 2, 0x07, 6]), Some(None));
    // In a register: r12, rsp, rbp.
    let reg = |r| {
        Some(Some(Rule::Reg {
            reg: r,
            offset: 0,
            deref: false,
        }))
    };
    assert_eq!(fp(&[0x09, 6, 12]), reg(Reg::Dwarf(12)));
    assert_eq!(fp(&[0x09, 6, 7]), reg(Reg::Sp));
    assert_eq!(fp(&[0x09, 6, 6]), reg(Reg::Fp));
    // No row: register 17 and up, val_offset, expressions, huge offsets.
    assert_eq!(fp(&[0x09, 6, 17]), None);
    assert_eq!(fp(&[0x09, 6, 0x80, 0x80, 0x04]), None);
    assert_eq!(fp(&[0x14, 6, 2]), None);
    assert_eq!(fp(&[0x15, 6, 2]), None);
    assert_eq!(fp(&[0x10, 6, 2, 0x76, 0x00]), None);
    assert_eq!(fp(&[0x16, 6, 2, 0x76, 0x00]), None);
    assert_eq!(fp(&[0x86, 0x80, 0x80, 0x80, 0x80, 0x02]), None); // 2^29 * 8
                                                                 // restore and restore_extended: back to the CIE's (unspecified).
    assert_eq!(fp(&[0x86, 2, 0xc6]), Some(None));
    assert_eq!(fp(&[0x86, 2, 0x06, 6]), Some(None));
    // RA: offset (any factored form), undefined (outermost), or no row.
    assert_eq!(ra(&[]), Some(Some(Rule::AtCfa(-8))));
    assert_eq!(ra(&[0x90, 2]), Some(Some(Rule::AtCfa(-16))));
    assert_eq!(ra(&[0x05, 16, 3]), Some(Some(Rule::AtCfa(-24))));
    assert_eq!(ra(&[0x07, 16]), Some(None));
    assert_eq!(ra(&[0x07, 16, 0xd0]), Some(Some(Rule::AtCfa(-8)))); // restore
    assert_eq!(ra(&[0x07, 16, 0x06, 16]), Some(Some(Rule::AtCfa(-8))));
    assert_eq!(ra(&[0x08, 16]), None);
    assert_eq!(ra(&[0x09, 16, 0]), None);
    assert_eq!(ra(&[0x10, 16, 1, 0x96]), None);
    assert_eq!(ra(&[0x14, 16, 1]), None);
    assert_eq!(ra(&[0x16, 16, 1, 0x96]), None);
    // A CIE whose RA is never given: no row anywhere.
    let cie = C {
        insns: vec![0x0c, 7, 8],
        ..gcc_cie()
    };
    assert_eq!(one(&cie, 0x10, &[]).at(0x1000), None);
    // Other registers: decoded, ignored.
    let p = [
        0x83, 3, 0x05, 12, 4, 0x11, 13, 0x7b, 0x2f, 14, 1, 0x07, 15, 0x08, 3, 0x09, 3, 4, 0x14, 5,
        1, 0x15, 5, 0x7f, 0x10, 3, 1, 0x96, 0x16, 3, 2, 0x96, 0x00, 0xc3, 0x06, 12, 0x05, 0x80,
        0x01, 1, 0x2e, 0x10, 0x00,
    ];
    assert_eq!(at(&p), Some(row(sp(8), None)));
}

#[test]
fn cfa_rules() {
    let cie = gcc_cie();
    let cfa = |p: &[u8]| {
        one(&cie, 0x10, &[p, &[0x41]].concat())
            .at(0x1001)
            .map(|r| r.cfa)
    };
    let c = |reg, offset| {
        Some(CfaRule {
            reg,
            offset,
            deref: false,
        })
    };
    assert_eq!(cfa(&[0x0c, 6, 16]), c(Reg::Fp, 16));
    assert_eq!(cfa(&[0x0c, 10, 0]), c(Reg::Dwarf(10), 0));
    assert_eq!(cfa(&[0x0c, 16, 8]), c(Reg::Dwarf(16), 8));
    assert_eq!(cfa(&[0x0d, 6]), c(Reg::Fp, 8));
    assert_eq!(cfa(&[0x0e, 0x80, 0x01]), c(Reg::Sp, 128));
    assert_eq!(cfa(&[0x12, 6, 0x7e]), c(Reg::Fp, 16)); // -2 * -8
    assert_eq!(cfa(&[0x12, 7, 0x01]), c(Reg::Sp, -8));
    assert_eq!(cfa(&[0x13, 0x7c]), c(Reg::Sp, 32));
    assert_eq!(cfa(&[0x0d, 3, 0x0e, 24]), c(Reg::Dwarf(3), 24));
    // Offsets beyond i32, registers above 16: no row.
    assert_eq!(cfa(&[0x0e, 0x80, 0x80, 0x80, 0x80, 0x08]), None);
    assert_eq!(
        cfa(&[0x0e, 0xff, 0xff, 0xff, 0xff, 0x07]),
        c(Reg::Sp, i32::MAX)
    );
    assert_eq!(cfa(&[0x0c, 17, 8]), None);
    assert_eq!(cfa(&[0x0c, 0x80, 0x80, 0x80, 0x80, 0x10, 8]), None);
    // After a refused value, a later valid rule gives rows again.
    assert_eq!(cfa(&[0x0c, 17, 8, 0x0c, 7, 24]), c(Reg::Sp, 24));
    // A CFA expression other than the PLT's: no row; then
    // def_cfa_offset/def_cfa_register cannot fix it, def_cfa can.
    let drap = [0x0f, 3, 0x76, 0x78, 0x06];
    assert_eq!(cfa(&drap), None);
    assert_eq!(cfa(&[&drap[..], &[0x0e, 16]].concat()), None);
    assert_eq!(cfa(&[&drap[..], &[0x0d, 7]].concat()), None);
    assert_eq!(cfa(&[&drap[..], &[0x0c, 7, 16]].concat()), c(Reg::Sp, 16));
    // The CFA of a CIE that defines none: no row.
    let cie = C {
        insns: vec![0x90, 1],
        ..gcc_cie()
    };
    assert_eq!(one(&cie, 0x10, &[]).at(0x1000), None);
}

#[test]
fn remember_and_restore_state() {
    let cie = gcc_cie();
    // Nested to the limit, then all unwound.
    let mut p = Vec::new();
    for i in 0..MAX_STACK as u8 {
        p.extend([0x0e, 16 + 4 * i, 0x0a, 0x41]);
    }
    for _ in 0..MAX_STACK {
        p.extend([0x0b, 0x41]);
    }
    let o = one(&cie, 0x40, &p);
    assert_eq!(o.stats().compiled, 1);
    let n = MAX_STACK as u64;
    for i in 0..n {
        assert_eq!(o.at(0x1000 + i), Some(row(sp(16 + 4 * i as i32), None)));
    }
    // Each restore_state brings back what the matching remember saw.
    for j in 0..n {
        let want = 16 + 4 * (n - 1 - j) as i32;
        assert_eq!(o.at(0x1000 + n + j), Some(row(sp(want), None)), "{j}");
    }
    // One deeper: the FDE is skipped.
    let mut p = vec![0x0a; MAX_STACK + 1];
    p.push(0x41);
    let s = one(&cie, 0x10, &p).stats();
    assert_eq!((s.compiled, s.bad_program), (0, 1));
    // Unbounded remember_state (a long run): skipped, work linear.
    let s = one(&cie, 0x10, &vec![0x0a; 10_000]).stats();
    assert_eq!((s.compiled, s.bad_program), (0, 1));
    assert!(s.work < 100, "{s:?}");
    // restore_state with nothing remembered.
    let s = one(&cie, 0x10, &[0x41, 0x0b]).stats();
    assert_eq!((s.compiled, s.bad_program), (0, 1));
    // remember_state in the CIE carries into the FDE.
    let cie2 = C {
        insns: vec![0x0c, 7, 8, 0x90, 1, 0x0a, 0x0e, 32],
        ..gcc_cie()
    };
    let o = one(&cie2, 0x10, &[0x41, 0x0b]);
    assert_eq!(o.at(0x1000), Some(row(sp(32), None)));
    assert_eq!(o.at(0x1001), Some(row(sp(8), None)));
    // RA and RBP rules are part of the state.
    let o = one(&cie, 0x10, &[0x0a, 0x86, 2, 0x07, 16, 0x41, 0x0b]);
    assert_eq!(
        o.at(0x1000),
        Some(Row {
            ra: None,
            ..row(sp(8), FP_SAVED)
        })
    );
    assert_eq!(o.at(0x1001), Some(row(sp(8), None)));
}

/// Pads `eh` (after its last entry, where nothing reads) so that the work
/// budget has `units` more: PLT blocks are paid from it.
fn pay(eh: &mut Eh, units: u64) {
    let n = eh.bytes.len() + units.div_ceil(WORK_PER_BYTE) as usize;
    eh.bytes.resize(n, 0);
}

/// The PLT expression with `breg7 k` and `litN`.
fn plt_expr(k: i64, n: u8) -> Vec<u8> {
    let mut e = vec![0x77];
    e.extend(sleb(k));
    e.extend([0x80, 0x00, 0x3f, 0x1a, 0x30 + n, 0x2a, 0x33, 0x24, 0x22]);
    let mut p = vec![0x0f];
    p.extend(uleb(e.len() as u64));
    p.extend(e);
    p
}

#[test]
fn plt_expression_expands_per_block() {
    // N: 11 (lazy PLTs), 9 (binutils 2.44's IBT PLT), any in 1..=15.
    for n in [11u8, 10, 9, 1, 15] {
        // ld's .plt FDE: 16 bytes of PLT0, then the entries.
        let mut p = vec![0x0e, 16, 0x46, 0x0e, 24, 0x4a];
        p.extend(plt_expr(8, n));
        let o = one(&gcc_cie(), 0x50, &p);
        let s = o.stats();
        assert_eq!(s.compiled, 1);
        assert_eq!(s.plt_blocks, 4);
        assert_eq!(o.at(0x1005), Some(row(sp(16), None)));
        assert_eq!(o.at(0x1006), Some(row(sp(24), None)));
        assert_eq!(o.at(0x100f), Some(row(sp(24), None)));
        for pc in 0x1010..0x1050u64 {
            let want = if pc & 15 >= n as u64 { 16 } else { 8 };
            assert_eq!(o.at(pc), Some(row(sp(want), None)), "n {n} pc {pc:#x}");
        }
        assert_eq!(o.at(0x1050), None);
    }
    // Unaligned range starts and ends: clipped to the range.
    let mut p = vec![0x43];
    p.extend(plt_expr(8, 11));
    p.extend([0x02, 0x1a, 0x0c, 7, 8]);
    let o = one(&gcc_cie(), 0x40, &p);
    assert_eq!(o.at(0x1002), Some(row(sp(8), None)));
    for pc in 0x1003..0x101du64 {
        let want = if pc & 15 >= 11 { 16 } else { 8 };
        assert_eq!(o.at(pc), Some(row(sp(want), None)), "pc {pc:#x}");
    }
    assert_eq!(o.at(0x101d), Some(row(sp(8), None)));
    // Starting past N inside a block.
    let mut p = vec![0x4c];
    p.extend(plt_expr(8, 11));
    let o = one(&gcc_cie(), 0x20, &p);
    assert_eq!(o.at(0x100c), Some(row(sp(16), None)));
    assert_eq!(o.at(0x1010), Some(row(sp(8), None)));
    // Other K; other N, other shapes: no row.
    let o = one(&gcc_cie(), 0x20, &plt_expr(-8, 11));
    assert_eq!(o.at(0x100b), Some(row(sp(0), None)));
    for e in [
        plt_expr(8, 16),
        plt_expr(8, 0),
        plt_expr(i32::MAX as i64, 11),
        plt_expr(1 << 40, 11),
        vec![0x0f, 2, 0x77, 8],
        vec![
            0x0f, 12, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22, 0x96,
        ],
        vec![
            0x0f, 11, 0x77, 8, 0x80, 1, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
        ],
    ] {
        let o = one(&gcc_cie(), 0x20, &e);
        assert_eq!(o.stats().compiled, 1, "{e:x?}");
        assert_eq!(o.at(0x1000), None, "{e:x?}");
    }
    // Too many blocks for one range: no row; the per-range cap is exact.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let big = MAX_PLT_BLOCKS * 16;
    let f1 = eh.fde(c, 0x10_0000, big, &plt_expr(8, 11));
    let f2 = eh.fde(c, 0x10_0000 + big, big + 16, &plt_expr(8, 11));
    pay(&mut eh, MAX_PLT_BLOCKS);
    let o = run_eh(&eh, &[(0x10_0000, f1), (0x10_0000 + big, f2)]);
    let s = o.stats();
    assert_eq!(
        (s.compiled, s.plt_refused, s.plt_blocks),
        (2, 1, MAX_PLT_BLOCKS)
    );
    assert_eq!(o.at(0x10_0000 + big - 1), Some(row(sp(16), None)));
    assert_eq!(o.at(0x10_0000 + big), None);
    // The total cap: four full ranges fit, the fifth does not.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let mut entries = Vec::new();
    for i in 0..5 {
        let pc = 0x10_0000 + i * big;
        entries.push((pc, eh.fde(c, pc, big, &plt_expr(8, 11))));
    }
    pay(&mut eh, 5 * MAX_PLT_BLOCKS);
    let o = run_eh(&eh, &entries);
    let s = o.stats();
    assert_eq!((s.compiled, s.plt_refused), (5, 1));
    assert_eq!(s.plt_blocks, MAX_PLT_BLOCKS_TOTAL);
    assert_eq!(o.at(0x10_0000 + 5 * big - 1), None);
    // The work budget: blocks it cannot pay for get no row.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let f1 = eh.fde(c, 0x10_0000, big, &plt_expr(8, 11));
    let f2 = eh.fde(c, 0x10_0000 + big, 0x400, &plt_expr(8, 11));
    pay(&mut eh, MAX_PLT_BLOCKS / 2);
    let o = run_eh(&eh, &[(0x10_0000, f1), (0x10_0000 + big, f2)]);
    let s = o.stats();
    assert_eq!((s.compiled, s.plt_refused, s.plt_blocks), (2, 1, 0x40));
    assert_eq!(o.at(0x10_0000), None);
    assert_eq!(o.at(0x10_0000 + big), Some(row(sp(8), None)));
}

#[test]
fn malformed_programs_skip_the_fde() {
    let cie = gcc_cie();
    let bad = |p: &[u8]| {
        let s = one(&cie, 0x10, p).stats();
        (s.compiled, s.bad_program)
    };
    // An operand past the FDE's end (the program longer than its FDE).
    for p in [
        &[0x0c, 7][..],
        &[0x0c][..],
        &[0x02][..],
        &[0x03, 1][..],
        &[0x04, 1, 2, 3][..],
        &[0x01, 0, 0][..],
        &[0x86][..],
        &[0x0f, 5, 0x77, 8][..],
        &[0x10, 6, 9, 0, 0][..],
        &[0x16, 6][..],
        &[0x2e][..],
        &[0x2f, 6][..],
    ] {
        assert_eq!(bad(p), (0, 1), "{p:x?}");
    }
    // A LEB128 that does not end within 10 bytes, or exceeds 64 bits.
    assert_eq!(bad(&[&[0x0e][..], &[0x80; 10], &[0]].concat()), (0, 1));
    assert_eq!(bad(&[&[0x0e][..], &[0xff; 9], &[0x02]].concat()), (0, 1));
    assert_eq!(bad(&[&[0x13][..], &[0xff; 9], &[0x7e]].concat()), (0, 1));
    // ...but 10 bytes holding bit 63 are fine (a value beyond i32: no row).
    let o = one(&cie, 0x10, &[&[0x0e][..], &[0xff; 9], &[0x01]].concat());
    assert_eq!(o.stats().compiled, 1);
    assert_eq!(o.at(0x1000), None);
    // Unknown opcodes (0x17..0x2d, 0x30..0x3f).
    for op in (0x17..=0x2d).chain(0x30..=0x3f) {
        assert_eq!(
            bad(&[0x41, op, 0, 0, 0, 0, 0, 0, 0, 0]),
            (0, 1),
            "op {op:#x}"
        );
    }
    // A location going backwards (set_loc), or overflowing.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&C {
        aug_data: vec![0x04],
        ..gcc_cie()
    });
    let mut p = vec![0x41, 0x01];
    p.extend(0x1000u64.to_le_bytes());
    let f = eh.fde_full(c, 0x04, 0x1000, 0x10, Some(&[]), &p, false);
    let s = run_eh(&eh, &[(0x1000, f)]).stats();
    assert_eq!((s.compiled, s.bad_program), (0, 1));
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&C {
        aug_data: vec![0x04],
        code_align: 1 << 40,
        ..gcc_cie()
    });
    let p = [0x04, 0xff, 0xff, 0xff, 0xff];
    let f = eh.fde_full(c, 0x04, 0x1000, 0x10, Some(&[]), &p, false);
    let s = run_eh(&eh, &[(0x1000, f)]).stats();
    assert_eq!((s.compiled, s.bad_program), (0, 1));
    // A bad program leaves no row, even where it was still fine.
    let o = one(&cie, 0x10, &[0x0e, 16, 0x44, 0x0e, 24, 0x44, 0x1c]);
    assert_eq!(o.at(0x1000), None);
    assert_eq!(o.at(0x1004), None);
    // Between good functions it leaves the table as if it were not
    // listed: its rows taken back (not the PLT block it expanded: spent
    // all the same), the next function's rows numbered as without it.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&cie);
    let f1 = eh.fde_full(c, 0x1b, 0x1000, 0x10, Some(&[]), &[0x44, 0x0e, 16], false);
    let mut p = vec![0x44, 0x0e, 40, 0x44, 0x0e, 48];
    p.extend(plt_expr(8, 11));
    p.extend([0x44, 0x1c]);
    let f2 = eh.fde_full(c, 0x1b, 0x1010, 0x40, Some(&[]), &p, false);
    let f3 = eh.fde_full(
        c,
        0x1b,
        0x1050,
        0x10,
        Some(&[]),
        &[0x44, 0x0e, 48, 0x44, 0x0e, 16],
        false,
    );
    let all = run_eh(&eh, &[(0x1000, f1), (0x1010, f2), (0x1050, f3)]);
    let some = run_eh(&eh, &[(0x1000, f1), (0x1050, f3)]);
    let (sa, ss) = (all.stats(), some.stats());
    assert_eq!((sa.compiled, sa.bad_program, sa.plt_blocks), (2, 1, 1));
    assert_eq!((ss.compiled, ss.plt_blocks), (2, 0));
    assert_eq!(all.store.starts, some.store.starts);
    assert_eq!(all.store.index, some.store.index);
    assert_eq!(all.store.rows, some.store.rows);
    assert_eq!(all.base, some.base);
    assert_eq!(all.at(0x1010), None);
    assert_eq!(all.at(0x1054), some.at(0x1054));
    // An FDE's augmentation data longer than the FDE, or a bad length.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&cie);
    let f = eh.fde_full(c, 0x1b, 0x1000, 0x10, Some(&[]), &[], false);
    let mut b = eh.bytes.clone();
    let auglen = f + 16;
    b[auglen] = 5;
    let h = hdr(HDR_ADDR, EH_ADDR, &[(0x1000, eh.fde_addr(f))]);
    assert_eq!(run(&h, HDR_ADDR, &b, EH_ADDR).stats().bad_fde, 1);
    b[auglen] = 0x80;
    assert_eq!(run(&h, HDR_ADDR, &b, EH_ADDR).stats().bad_fde, 1);
}

// ---------------------------------------------------------------------
// Sections made by real compilers, against readelf.

struct Fx {
    name: &'static str,
    hdr: &'static [u8],
    eh: &'static [u8],
    /// Line 1: the addresses; then `readelf --debug-dump=frames-interp`.
    txt: &'static str,
    /// The `def_cfa_expression` lines of `readelf --debug-dump=frames`,
    /// each after its FDE's line.
    exp: &'static str,
}

macro_rules! fx {
    ($name:literal) => {
        Fx {
            name: $name,
            hdr: include_bytes!(concat!("fixtures/ehframe/", $name, ".hdr")),
            eh: include_bytes!(concat!("fixtures/ehframe/", $name, ".eh")),
            txt: include_str!(concat!("fixtures/ehframe/", $name, ".txt")),
            exp: include_str!(concat!("fixtures/ehframe/", $name, ".exp")),
        }
    };
}

fn fixtures() -> Vec<Fx> {
    vec![
        fx!("gcc14-c-O0"),
        fx!("gcc14-c-O2"),
        fx!("gcc14-c-O2-fp"),
        fx!("gcc14-c-O2-ibt"),
        fx!("gcc14-c-O2-static"),
        fx!("gcc14-lib-O2"),
        fx!("gxx12-cxx-O0"),
        fx!("gxx12-cxx-O2"),
        fx!("clang19-cxx-O2-fp-shared"),
        fx!("clang19-c-O2"),
        fx!("clang19-c-O0-fp-nopie"),
    ]
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap_or_else(|_| panic!("hex {s:?}"))
}

impl Fx {
    fn addrs(&self) -> (u64, u64) {
        let t: Vec<&str> = self
            .txt
            .lines()
            .next()
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!((t[0], t[2]), ("eh_frame_hdr", "eh_frame"));
        (hex(t[1]), hex(t[3]))
    }

    fn compiled(&self) -> Out {
        let (h, e) = self.addrs();
        run(self.hdr, h, self.eh, e)
    }
}

/// x86-64 DWARF register numbers by readelf's names.
fn dwarf_reg(name: &str) -> Option<u8> {
    const NAMES: [&str; 17] = [
        "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12",
        "r13", "r14", "r15", "rip",
    ];
    NAMES.iter().position(|&n| n == name).map(|n| n as u8)
}

/// The register of a "register" cell: "r9 (r9)", "r1 (rdx)".
fn in_reg(cell: &str) -> Option<u8> {
    let (r, name) = cell.split_once(' ')?;
    let n: u8 = r.strip_prefix('r')?.parse().ok()?;
    assert_eq!(Some(n), dwarf_reg(name.trim_matches(['(', ')'])), "{cell}");
    Some(n)
}

/// One entry of readelf's interpreted table.
#[derive(Clone, Debug, Default)]
struct Interp {
    /// CIE: augmentation; FDE: its CIE's offset and range.
    aug: String,
    cie: u64,
    pc: (u64, u64),
    /// The column names after LOC.
    cols: Vec<String>,
    /// (LOC, cells).
    rows: Vec<(u64, Vec<String>)>,
}

/// Parses the `.eh_frame` part of `frames-interp`: CIEs by offset, FDEs.
fn parse_interp(txt: &str) -> (HashMap<u64, Interp>, Vec<Interp>) {
    let mut cies = HashMap::new();
    let mut fdes = Vec::new();
    let mut cur: Option<(bool, u64, Interp)> = None;
    let mut in_eh = false;
    let flush = |cur: &mut Option<(bool, u64, Interp)>,
                 cies: &mut HashMap<u64, Interp>,
                 fdes: &mut Vec<Interp>| {
        if let Some((is_cie, off, e)) = cur.take() {
            if is_cie {
                cies.insert(off, e);
            } else {
                fdes.push(e);
            }
        }
    };
    for line in txt.lines() {
        if line.starts_with("Contents of the .eh_frame section") {
            in_eh = true;
            continue;
        }
        if !in_eh {
            continue;
        }
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() >= 4 && t[3] == "CIE" {
            flush(&mut cur, &mut cies, &mut fdes);
            let e = Interp {
                aug: t[4].trim_matches('"').to_string(),
                ..Default::default()
            };
            cur = Some((true, hex(t[0]), e));
        } else if t.len() >= 6 && t[3] == "FDE" {
            flush(&mut cur, &mut cies, &mut fdes);
            let cie = hex(t[4].strip_prefix("cie=").unwrap());
            let (a, b) = t[5].strip_prefix("pc=").unwrap().split_once("..").unwrap();
            let e = Interp {
                cie,
                pc: (hex(a), hex(b)),
                ..Default::default()
            };
            cur = Some((false, hex(t[0]), e));
        } else if t.first() == Some(&"LOC") {
            let e = &mut cur.as_mut().unwrap().2;
            e.cols = t[1..].iter().map(|s| s.to_string()).collect();
        } else if t.len() >= 2 && t[0].len() == 16 && u64::from_str_radix(t[0], 16).is_ok() {
            let e = &mut cur.as_mut().unwrap().2;
            // A register rule is two words, "r9 (r9)": one cell.
            let mut cells: Vec<String> = Vec::new();
            for w in &t[1..] {
                match cells.last_mut() {
                    Some(c) if w.starts_with('(') => *c = format!("{c} {w}"),
                    _ => cells.push(w.to_string()),
                }
            }
            assert_eq!(cells.len(), e.cols.len(), "{line}");
            e.rows.push((hex(t[0]), cells));
        }
    }
    flush(&mut cur, &mut cies, &mut fdes);
    (cies, fdes)
}

/// The PLT expressions of `exp` by FDE start: (K, N); `None` for an FDE
/// with another expression.
fn parse_exp(exp: &str) -> HashMap<u64, Option<(i32, u8)>> {
    let mut out = HashMap::new();
    let mut pc = 0;
    for line in exp.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if t.len() >= 6 && t[3] == "FDE" {
            let (a, _) = t[5].strip_prefix("pc=").unwrap().split_once("..").unwrap();
            pc = hex(a);
            continue;
        }
        let mut plt = None;
        for n in 1..=15u8 {
            for k in -64..=64i32 {
                let want = format!(
                    "DW_CFA_def_cfa_expression (DW_OP_breg7 (rsp): {k}; DW_OP_breg16 (rip): 0; \
                     DW_OP_lit15; DW_OP_and; DW_OP_lit{n}; DW_OP_ge; DW_OP_lit3; DW_OP_shl; \
                     DW_OP_plus)"
                );
                if line.trim() == want {
                    plt = Some((k, n));
                }
            }
        }
        let e = out.entry(pc).or_insert(plt);
        if *e != plt {
            *e = None;
        }
    }
    out
}

/// Why readelf's rules for a PC have no row in the compiled table, by
/// design.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Refused {
    /// A CFA expression other than the PLT's (e.g. glibc's
    /// `__restore_rt`-style `breg7 N; deref`).
    CfaExpr,
    /// A CFA register the engine cannot name.
    CfaReg,
    /// RA neither at CFA + n nor undefined.
    Ra,
    /// RBP as a value or expression.
    Fp,
}

/// What readelf says for `pc` in `fde` (whose CIE is `cie`): the row, or
/// why there is none by design.
fn expected(
    fde: &Interp,
    cie: &Interp,
    plt: Option<Option<(i32, u8)>>,
    pc: u64,
) -> Result<Row, Refused> {
    let (cols, cells) = if fde.rows.is_empty() {
        (&cie.cols, &cie.rows[0].1)
    } else {
        let i = fde.rows.partition_point(|r| r.0 <= pc);
        assert!(i > 0, "pc {pc:#x} before the first row");
        (&fde.cols, &fde.rows[i - 1].1)
    };
    let cell = |name: &str| {
        cols.iter()
            .position(|c| c == name)
            .map(|i| cells[i].as_str())
    };
    let offset = |s: &str| s.strip_prefix('c').and_then(|n| n.parse::<i32>().ok());
    let cfa = cell("CFA").unwrap();
    let cfa = if cfa == "exp" {
        let (k, n) = plt.flatten().ok_or(Refused::CfaExpr)?;
        let k = if pc & 15 >= n as u64 { k + 8 } else { k };
        sp(k)
    } else {
        let at = cfa.rfind(['+', '-']).unwrap();
        let reg = dwarf_reg(&cfa[..at]).ok_or(Refused::CfaReg)?;
        CfaRule {
            reg: Reg::from_dwarf(reg),
            offset: cfa[at..].parse().unwrap(),
            deref: false,
        }
    };
    let ra = match cell("ra") {
        Some("u") => None,
        Some(c) => Some(Rule::AtCfa(offset(c).ok_or(Refused::Ra)?)),
        None => return Err(Refused::Ra),
    };
    let fp = match cell("rbp") {
        None | Some("u") | Some("s") => None,
        Some(c) => match (offset(c), in_reg(c)) {
            (Some(o), _) => Some(Rule::AtCfa(o)),
            (None, Some(r)) => Some(Rule::Reg {
                reg: Reg::from_dwarf(r),
                offset: 0,
                deref: false,
            }),
            _ => return Err(Refused::Fp),
        },
    };
    Ok(Row {
        cfa,
        ra,
        fp,
        signal: cie.aug.contains('S'),
    })
}

/// Per fixture: the PCs with no row by design, by reason.
fn refused_by_design(name: &str) -> Vec<(Refused, u64)> {
    match name {
        // glibc's `__restore_rt` (the signal return trampoline, "zRS"):
        // `breg7 160; deref` CFA, every register an expression; and its
        // longjmp helpers' few instructions where RA is in RDX or RCX
        // (`DW_CFA_register rip, ...`).
        "gcc14-c-O2-static" => vec![(Refused::CfaExpr, 10), (Refused::Ra, 37)],
        _ => vec![],
    }
}

#[test]
fn real_sections_equal_readelf_at_every_pc() {
    let mut total_pcs = 0u64;
    let mut total_fdes = 0usize;
    for fx in fixtures() {
        let (hdr_addr, eh_addr) = fx.addrs();
        let info = hdr_info(fx.hdr, hdr_addr).unwrap();
        assert_eq!(info.eh_frame_addr, eh_addr, "{}", fx.name);
        let o = fx.compiled();
        let s = o.stats();
        let (cies, fdes) = parse_interp(fx.txt);
        let plts = parse_exp(fx.exp);
        assert_eq!(info.fde_count as usize, fdes.len(), "{}", fx.name);
        assert_eq!(s.compiled as usize, fdes.len(), "{}: {s:?}", fx.name);
        assert_eq!(s.skipped(), 0, "{}: {s:?}", fx.name);
        // Real sections cost under a unit per byte, far below the budget.
        assert!(
            s.work <= (fx.eh.len() + fx.hdr.len()) as u64,
            "{}: {s:?}",
            fx.name
        );
        eprintln!(
            "{}: {} FDEs, work {:.2} per byte",
            fx.name,
            s.compiled,
            s.work as f64 / (fx.eh.len() + fx.hdr.len()) as f64
        );
        let t = o.table();
        let mut refused: HashMap<Refused, u64> = HashMap::new();
        let mut wrong = Vec::new();
        let starts: std::collections::HashSet<u64> = fdes.iter().map(|f| f.pc.0).collect();
        for f in &fdes {
            let cie = &cies[&f.cie];
            for pc in f.pc.0..f.pc.1 {
                let got = t.lookup(pc);
                match expected(f, cie, plts.get(&f.pc.0).copied(), pc) {
                    Ok(want) if got == Some(want) => {}
                    Err(why) if got.is_none() => *refused.entry(why).or_default() += 1,
                    want => wrong.push((pc, want, got)),
                }
                total_pcs += 1;
            }
            // Just past the function: the next one's rows, or none.
            if !starts.contains(&f.pc.1) {
                assert_eq!(t.lookup(f.pc.1), None, "{} {:#x}", fx.name, f.pc.1);
            }
        }
        total_fdes += fdes.len();
        assert!(
            wrong.is_empty(),
            "{}: {} PCs differ, first {:x?}",
            fx.name,
            wrong.len(),
            &wrong[..wrong.len().min(5)]
        );
        let mut refused: Vec<(Refused, u64)> = refused.into_iter().collect();
        refused.sort();
        assert_eq!(refused, refused_by_design(fx.name), "{}", fx.name);
    }
    eprintln!("{total_fdes} FDEs, {total_pcs} PCs checked");
    assert!(total_pcs > 400_000);
}

#[test]
fn real_sections_cover_what_they_are_for() {
    let mut augs = std::collections::BTreeSet::new();
    let mut plt_n = std::collections::BTreeSet::new();
    let mut cfa_regs = std::collections::BTreeSet::new();
    for fx in fixtures() {
        let (cies, fdes) = parse_interp(fx.txt);
        augs.extend(cies.values().map(|c| c.aug.clone()));
        plt_n.extend(parse_exp(fx.exp).values().flatten().map(|&(_, n)| n));
        for f in &fdes {
            for (_, cells) in &f.rows {
                let cfa = &cells[0];
                cfa_regs.insert(cfa[..cfa.rfind(['+', '-']).unwrap_or(cfa.len())].to_string());
            }
        }
    }
    for a in ["zR", "zPLR", "zRS"] {
        assert!(augs.contains(a), "{augs:?}");
    }
    assert!(plt_n.contains(&11) && plt_n.contains(&9), "{plt_n:?}");
    for r in ["rsp", "rbp", "rdi", "exp"] {
        assert!(cfa_regs.contains(r), "{cfa_regs:?}");
    }
}

// ---------------------------------------------------------------------
// Bounded work, and randomized sections.

/// The bound every compilation's work must meet: the budget, plus one
/// FDE's overshoot (its CIE and two runs of its program), plus the
/// entries visited after the budget ran out.
fn work_bound(hdr: usize, eh: usize) -> u64 {
    let (h, e) = (hdr as u64, eh as u64);
    WORK_PER_BYTE * (h + e) + WORK_BASE + 2 + MAX_CIE_INSNS as u64 + 2 * e + h / 8
}

/// A chain of `n` FDEs sharing bytes: FDE k+1's header lies inside FDE
/// k's program, which skips it with a def_cfa_expression; all end with
/// one run of `tail` nops.  Each FDE is valid; running them all costs
/// about `n * (2 * n + tail)`.
fn chain(n: usize, tail: usize) -> (Vec<u8>, Eh) {
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let first = eh.bytes.len();
    let total = first + n * 19 + tail;
    let mut entries = Vec::new();
    for k in 0..n {
        let off = first + 19 * k;
        let loc = 0x1000 + 16 * k as u64;
        let len = (total - off - 4) as u32;
        eh.bytes.extend(len.to_le_bytes());
        eh.bytes.extend(((off + 4 - c) as u32).to_le_bytes());
        let field = eh.fde_addr(off + 8);
        eh.bytes
            .extend((loc.wrapping_sub(field) as u32).to_le_bytes());
        eh.bytes.extend(1u32.to_le_bytes());
        eh.bytes.push(0);
        if k + 1 < n {
            eh.bytes.extend([0x0f, 17]);
        }
        entries.push((loc, eh.fde_addr(off)));
    }
    eh.bytes.resize(total, 0);
    (hdr(HDR_ADDR, EH_ADDR, &entries), eh)
}

#[test]
fn crafted_shared_bytes_hit_the_budget() {
    let n = 1000;
    let (h, eh) = chain(n, 20_000);
    let o = run(&h, HDR_ADDR, &eh.bytes, EH_ADDR);
    let s = o.stats();
    assert!(s.compiled >= 1 && s.compiled < 20, "{s:?}");
    assert_eq!(s.budget + s.compiled, n as u32, "{s:?}");
    assert!(s.work <= work_bound(h.len(), eh.bytes.len()), "{s:?}");
    // What was compiled is right: CFA an expression (no row).
    assert_eq!(o.at(0x1000), None);
    // A short chain is within the budget.
    let (h, eh) = chain(10, 50);
    let s = run(&h, HDR_ADDR, &eh.bytes, EH_ADDR).stats();
    assert_eq!((s.compiled, s.budget), (10, 0), "{s:?}");
}

/// xorshift64*: deterministic, fast.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    /// A byte that often matters to a parser.
    fn byte(&mut self, old: u8) -> u8 {
        const HOT: [u8; 16] = [
            0x00, 0xff, 0x80, 0x7f, 0x40, 0x01, 0x0a, 0x0b, 0x0f, 0x3b, 0x1b, 0x10, 0xc0, 0x2f,
            0x16, 0x90,
        ];
        match self.below(4) {
            0 => old ^ (1 << self.below(8)),
            1 => HOT[self.below(HOT.len())],
            2 => old.wrapping_add(self.below(5) as u8).wrapping_sub(2),
            _ => self.next() as u8,
        }
    }
}

/// Compiles a (mutated) section and checks what must hold whatever the
/// bytes: no panic, no engine misuse, consistent counts, bounded work,
/// lookups that do not panic.
fn check(
    store: &mut Option<VecStore>,
    hdr: &[u8],
    hdr_addr: u64,
    eh: &[u8],
    eh_addr: u64,
    probes: &[u64],
) -> Option<Stats> {
    let mut st = store.take().unwrap();
    st.reset();
    let mut b = Builder::new(st);
    let r = compile(hdr, hdr_addr, eh, eh_addr, &mut b, &mut || true);
    let (st, base) = b.finish().expect("finish");
    let t = Table {
        base: base.unwrap_or(0),
        starts: &st.starts,
        index: &st.index,
        rows: &st.rows,
    };
    assert!(t.starts.windows(2).all(|w| w[0] < w[1]));
    for &pc in probes {
        for d in [0u64, 1, 7, 16] {
            let _ = t.lookup(pc.wrapping_add(d));
        }
        // The same bytes looked up by function: bounded, no panic.
        let steps = lazy(hdr, hdr_addr, eh, eh_addr, pc.wrapping_add(1)).2;
        assert!(steps <= MAX_STEPS, "{steps}");
    }
    let out = match r {
        Ok(s) => {
            assert_eq!(s.compiled + s.skipped(), s.entries, "{s:?}");
            assert!(s.work <= work_bound(hdr.len(), eh.len()), "{s:?}");
            assert!(s.plt_blocks <= MAX_PLT_BLOCKS_TOTAL);
            Some(s)
        }
        // The compiler never feeds the engine unsorted or too wide input.
        Err(EhError::Build(e)) => panic!("engine error {e:?}"),
        Err(_) => None,
    };
    *store = Some(st);
    out
}

/// Hand-built sections using every feature, for mutation.
fn corpus() -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut eh = Eh::new(EH_ADDR);
    let c1 = eh.cie(&gcc_cie());
    let c2 = eh.cie(&C {
        aug: "zPLR",
        aug_data: vec![0x9b, 0x10, 0x20, 0x30, 0x40, 0x1b, 0x1b],
        version: 3,
        ..gcc_cie()
    });
    let c3 = eh.cie(&C {
        aug: "zRS",
        len64: true,
        ..gcc_cie()
    });
    let mut entries = Vec::new();
    let progs: Vec<Vec<u8>> = vec![
        vec![
            0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0x4a, 0x0a, 0x0c, 7, 8, 0xc6, 0x41, 0x0b,
        ],
        [vec![0x0e, 16, 0x46, 0x0e, 24, 0x4a], plt_expr(8, 11)].concat(),
        vec![
            0x02, 3, 0x05, 6, 2, 0x03, 1, 0, 0x11, 16, 0x7f, 0x04, 1, 0, 0, 0, 0x2f, 6, 1,
        ],
        vec![
            0x0a, 0x0a, 0x09, 6, 3, 0x41, 0x0b, 0x14, 6, 1, 0x41, 0x0b, 0x07, 16, 0x2e, 8,
        ],
        vec![
            0x12, 7, 0x7e, 0x13, 0x7c, 0x10, 6, 2, 0x76, 0, 0x16, 3, 1, 0x96, 0x15, 6, 1,
        ],
        vec![
            0x0f, 5, 0x77, 0x08, 0x06, 0x96, 0x00, 0x41, 0x0c, 7, 8, 0x08, 6, 0x00,
        ],
    ];
    for (i, p) in progs.iter().enumerate() {
        let cie = [c1, c2, c3][i % 3];
        let pc = 0x1000 + 0x40 * i as u64;
        let aug: &[u8] = if cie == c2 { &[1, 2, 3, 4] } else { &[] };
        let f = eh.fde_full(cie, 0x1b, pc, 0x30, Some(aug), p, i == 4);
        entries.push((pc, eh.fde_addr(f)));
    }
    eh.bytes.extend([0, 0, 0, 0]);
    out.push((hdr(HDR_ADDR, EH_ADDR, &entries), eh.bytes.clone()));
    // Each FDE alone, and pairs.
    for i in 0..entries.len() {
        out.push((hdr(HDR_ADDR, EH_ADDR, &entries[i..i + 1]), eh.bytes.clone()));
        if i + 2 <= entries.len() {
            out.push((hdr(HDR_ADDR, EH_ADDR, &entries[i..i + 2]), eh.bytes.clone()));
        }
    }
    out
}

/// Runs `iters` mutations of the corpus.
fn fuzz_corpus(seed: u64, iters: usize) -> usize {
    let corpus = corpus();
    let mut rng = Rng(seed);
    let mut store = Some(VecStore::new());
    let mut ok = 0;
    let probes: Vec<u64> = (0..8).map(|i| 0x1000 + 0x40 * i).collect();
    for _ in 0..iters {
        let (h, e) = &corpus[rng.below(corpus.len())];
        let (mut h, mut e) = (h.clone(), e.clone());
        for _ in 0..1 + rng.below(4) {
            if rng.below(8) == 0 {
                let i = rng.below(h.len());
                h[i] = rng.byte(h[i]);
            } else {
                let i = rng.below(e.len());
                e[i] = rng.byte(e[i]);
            }
        }
        match rng.below(16) {
            0 => e.truncate(rng.below(e.len() + 1)),
            1 => h.truncate(rng.below(h.len() + 1)),
            _ => {}
        }
        if let Some(s) = check(&mut store, &h, HDR_ADDR, &e, EH_ADDR, &probes) {
            ok += (s.compiled > 0) as usize;
        }
    }
    ok
}

/// Runs `iters` mutations of windows of the real fixtures: a header of
/// a few consecutive table entries, the whole `.eh_frame` mutated in
/// place near those FDEs and their CIEs (and restored after).
fn fuzz_real(seed: u64, iters: usize) -> usize {
    let fxs = fixtures();
    let mut ehs: Vec<Vec<u8>> = fxs.iter().map(|f| f.eh.to_vec()).collect();
    let mut rng = Rng(seed);
    let mut store = Some(VecStore::new());
    let mut ok = 0;
    let mut saved: Vec<(usize, u8)> = Vec::new();
    for _ in 0..iters {
        let fi = rng.below(fxs.len());
        let fx = &fxs[fi];
        let (hdr_addr, eh_addr) = fx.addrs();
        let count = (fx.hdr.len() - 12) / 8;
        let start = rng.below(count);
        let k = (1 + rng.below(6)).min(count - start);
        let mut h = fx.hdr[..8].to_vec();
        h.extend((k as u32).to_le_bytes());
        h.extend(&fx.hdr[12 + 8 * start..12 + 8 * (start + k)]);
        let eh = &mut ehs[fi];
        // The FDEs' offsets, and their CIEs'.
        let mut hot = Vec::new();
        let mut probes = Vec::new();
        for j in 0..k {
            let at = 12 + 8 * (start + j);
            let rel = |o: usize| i32::from_le_bytes(fx.hdr[o..o + 4].try_into().unwrap()) as i64;
            let loc = hdr_addr.wrapping_add_signed(rel(at));
            let off = hdr_addr
                .wrapping_add_signed(rel(at + 4))
                .wrapping_sub(eh_addr) as usize;
            probes.push(loc);
            hot.push(off);
            if let Some(p) = eh.get(off + 4..off + 8) {
                let p = u32::from_le_bytes(p.try_into().unwrap()) as usize;
                hot.push((off + 4).saturating_sub(p));
            }
        }
        for _ in 0..1 + rng.below(4) {
            if rng.below(10) == 0 {
                let i = rng.below(h.len());
                h[i] = rng.byte(h[i]);
            } else {
                let base = hot[rng.below(hot.len())];
                let i = (base + rng.below(48)).min(eh.len() - 1);
                saved.push((i, eh[i]));
                eh[i] = rng.byte(eh[i]);
            }
        }
        let cut = if rng.below(16) == 0 {
            (hot[0] + rng.below(64)).min(eh.len())
        } else {
            eh.len()
        };
        if let Some(s) = check(&mut store, &h, hdr_addr, &eh[..cut], eh_addr, &probes) {
            ok += (s.compiled > 0) as usize;
        }
        while let Some((i, v)) = saved.pop() {
            eh[i] = v;
        }
    }
    // Restored: the fixtures compile as before.
    for (fx, eh) in fxs.iter().zip(&ehs) {
        assert_eq!(fx.eh, &eh[..]);
    }
    ok
}

/// Iterations per randomized test: 4 tests, 2 million in all with
/// `-O`; 160,000 in debug builds (overflow checks on).
fn iters() -> usize {
    if cfg!(debug_assertions) {
        40_000
    } else {
        500_000
    }
}

#[test]
fn random_mutations_of_hand_built_sections_a() {
    let n = iters();
    let ok = fuzz_corpus(0x9e37_79b9_7f4a_7c15, n);
    // Most mutations leave something to compile: the test reaches deep.
    assert!(ok > n / 4, "{ok} of {n}");
}

#[test]
fn random_mutations_of_hand_built_sections_b() {
    let n = iters();
    let ok = fuzz_corpus(0x0123_4567_89ab_cdef, n);
    assert!(ok > n / 4, "{ok} of {n}");
}

#[test]
fn random_mutations_of_real_sections_a() {
    let n = iters();
    let ok = fuzz_real(0xdead_beef_cafe_f00d, n);
    assert!(ok > n / 4, "{ok} of {n}");
}

#[test]
fn random_mutations_of_real_sections_b() {
    let n = iters();
    let ok = fuzz_real(0x5555_aaaa_3333_cccc, n);
    assert!(ok > n / 4, "{ok} of {n}");
}

// ---------------------------------------------------------------------
// `.eh_frame` without `.eh_frame_hdr` (static executables): a header is
// made from one pass over the section.

/// The section addresses on a fixture's first line.
fn fixture_addrs(txt: &str) -> (u64, u64) {
    let w: Vec<&str> = txt.lines().next().unwrap().split_whitespace().collect();
    (hex(w[1]), hex(w[3]))
}

/// Compiles `eh` alone, with a header made by `synth_hdr`.
fn run_synth(eh: &[u8], eh_addr: u64) -> Out {
    let n = ehframe::count_fdes(eh, eh_addr, &mut || true).unwrap();
    let mut buf = vec![0u8; ehframe::SYNTH_HEAD_LEN + ehframe::ENTRY_LEN * n];
    let len = ehframe::synth_hdr(eh, eh_addr, &mut buf);
    assert_eq!(len, buf.len());
    let info = hdr_info(&buf[..len], eh_addr).unwrap();
    assert_eq!((info.eh_frame_addr, info.fde_count as usize), (eh_addr, n));
    run(&buf[..len], eh_addr, eh, eh_addr)
}

#[test]
fn a_made_header_compiles_real_sections_as_their_own() {
    for fx in fixtures() {
        let (hdr_addr, eh_addr) = fixture_addrs(fx.txt);
        let real = run(fx.hdr, hdr_addr, fx.eh, eh_addr);
        let made = run_synth(fx.eh, eh_addr);
        let (a, b) = (real.r.unwrap(), made.r.unwrap());
        assert_eq!(
            (a.entries, a.compiled),
            (b.entries, b.compiled),
            "{}",
            fx.name
        );
        assert_eq!(real.base, made.base, "{}", fx.name);
        assert_eq!(real.store.starts, made.store.starts, "{}", fx.name);
        assert_eq!(real.store.index, made.store.index, "{}", fx.name);
        assert_eq!(real.store.rows, made.store.rows, "{}", fx.name);
    }
}

#[test]
fn a_made_header_sorts_fdes_and_survives_bad_sections() {
    // Two FDEs written in reverse address order: the made header lists
    // them sorted, and both compile.
    let mut eh = Eh::new(0x9000);
    let c = eh.cie(&gcc_cie());
    eh.fde(c, 0x2000, 0x10, &[]);
    eh.fde(c, 0x1000, 0x10, &[]);
    eh.bytes.extend_from_slice(&[0; 4]);
    let out = run_synth(&eh.bytes, eh.addr);
    let st = out.r.unwrap();
    assert_eq!((st.entries, st.compiled), (2, 2));
    assert!(out.store.table(out.base).lookup(0x1008).is_some());
    assert!(out.store.table(out.base).lookup(0x2008).is_some());
    // Too little room: the FDEs that fit, sorted; none: nothing.
    let mut buf = vec![0u8; ehframe::SYNTH_HEAD_LEN + ehframe::ENTRY_LEN];
    assert_eq!(ehframe::synth_hdr(&eh.bytes, eh.addr, &mut buf), buf.len());
    assert_eq!(ehframe::synth_hdr(&eh.bytes, eh.addr, &mut [0u8; 4]), 0);
    // Mutated sections: never a panic, never more FDEs than room, and a
    // made header always compiles (sorted).
    let mut rng = 0x1234_5678_9abc_def1u64;
    let fx = fixtures();
    for i in 0..20_000 {
        let f = &fx[i % fx.len()];
        let (_, eh_addr) = fixture_addrs(f.txt);
        let start = (rng as usize) % f.eh.len();
        let mut b = f.eh[start..f.eh.len().min(start + 4096)].to_vec();
        for _ in 0..4 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let at = (rng as usize) % b.len();
            b[at] = (rng >> 32) as u8;
        }
        let out = run_synth(&b, eh_addr + start as u64);
        assert!(out.r.is_ok(), "{}: {:?}", f.name, out.r);
    }
}

// ---------------------------------------------------------------------
// Lookup by function (`lookup.rs`): one FDE read through the header's
// table, for files too large to compile whole.

/// A file of two pieces, the header and `.eh_frame`, read by address.
struct Mem<'a> {
    parts: [(u64, &'a [u8]); 2],
    reads: u64,
}

impl Mem<'_> {
    /// Which bytes these are (for the probes kept per table).
    fn id(&self) -> u64 {
        let (a, b) = self.parts[0];
        a ^ (b.as_ptr() as u64).rotate_left(17) ^ (b.len() as u64).rotate_left(41)
    }
}

impl Source for Mem<'_> {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        self.reads += 1;
        for (a, b) in self.parts {
            let Some(off) = addr.checked_sub(a) else {
                continue;
            };
            let Ok(off) = usize::try_from(off) else {
                continue;
            };
            if let Some(src) = b.get(off..).and_then(|r| r.get(..buf.len())) {
                buf.copy_from_slice(src);
                return true;
            }
        }
        false
    }
}

/// The rules of `pc` looked up by function: (rules and whether they
/// change at `pc`, or why none; the function's start; the steps taken;
/// the reads made).
#[allow(clippy::type_complexity)]
fn lazy_full(
    hdr: &[u8],
    hdr_addr: u64,
    eh: &[u8],
    eh_addr: u64,
    pc: u64,
) -> (Result<(Option<Row>, bool), LookupError>, u64, u64, u64) {
    let mut steps = 0;
    let mut src = Mem {
        parts: [(hdr_addr, hdr), (eh_addr, eh)],
        reads: 0,
    };
    let Ok(idx) = Index::parse(hdr, hdr_addr, hdr.len() as u64) else {
        return (Err(LookupError::NotFound), 0, 0, 0);
    };
    thread_local! {
        static BUFS: std::cell::RefCell<(Vec<u8>, Vec<FnRow>)> = std::cell::RefCell::new((
            vec![0u8; SCRATCH_LEN],
            vec![FnRow { off: 0, row: None, plt: None }; MAX_FN_ROWS],
        ));
    }
    // As the kernel: small buffers first, the full ones if they are short.
    BUFS.with(|b| {
        let (scratch, rows) = &mut *b.borrow_mut();
        let small = lazy_in(
            &idx,
            &mut src,
            pc,
            &mut scratch[..SMALL_SCRATCH_LEN],
            &mut rows[..SMALL_ROWS],
            &mut steps,
        );
        if small.0 != Err(LookupError::Short) {
            return small;
        }
        steps = 0;
        lazy_in(&idx, &mut src, pc, scratch, rows, &mut steps)
    })
}

#[allow(clippy::type_complexity)]
fn lazy_in(
    idx: &Index,
    src: &mut Mem,
    pc: u64,
    scratch: &mut [u8],
    rows: &mut [FnRow],
    steps: &mut u64,
) -> (Result<(Option<Row>, bool), LookupError>, u64, u64, u64) {
    let mut hole = None;
    // The probes of the first levels kept per table, as the kernel keeps
    // them per file: the lookups of one fixture share them.
    thread_local! {
        static PROBES: std::cell::RefCell<(u64, Index, Vec<Option<(u64, u64)>>)> =
            std::cell::RefCell::new((0, Index { hdr_addr: 0, table_addr: 0, fde_count: 0, eh_frame_addr: 0 }, vec![]));
    }
    let r = PROBES.with(|p| {
        let (id, kept_idx, memo) = &mut *p.borrow_mut();
        if *id != src.id() || *kept_idx != *idx {
            (*id, *kept_idx) = (src.id(), *idx);
            *memo = vec![None; PROBE_MEMO];
        }
        lookup(idx, src, pc, scratch, rows, steps, &mut hole, memo)
    });
    if let Some((a, b)) = hole {
        assert!(
            r.is_err() && a <= pc && pc < b,
            "hole {a:#x}..{b:#x} for {pc:#x}: {r:?}"
        );
    }
    let (r, start) = match r {
        Ok(f) => {
            assert!(f.rows <= MAX_FN_ROWS && f.start <= pc && pc < f.end);
            assert!(rows[..f.rows].windows(2).all(|w| w[0].off < w[1].off));
            let r = row_at(&rows[..f.rows], f.start, pc).ok_or(LookupError::NotFound);
            (r, f.start)
        }
        Err(e) => (Err(e), 0),
    };
    (r, start, *steps, src.reads)
}

fn lazy(
    hdr: &[u8],
    hdr_addr: u64,
    eh: &[u8],
    eh_addr: u64,
    pc: u64,
) -> (Result<(Option<Row>, bool), LookupError>, u64, u64) {
    let (r, start, steps, _) = lazy_full(hdr, hdr_addr, eh, eh_addr, pc);
    (r, start, steps)
}

#[test]
fn lookup_by_function_equals_the_whole_compile_on_real_sections() {
    let mut pcs = 0u64;
    let mut max_steps = 0;
    let mut max_reads = 0;
    for fx in fixtures() {
        let (hdr_addr, eh_addr) = fx.addrs();
        let o = fx.compiled();
        let t = o.table();
        let (_, fdes) = parse_interp(fx.txt);
        for f in &fdes {
            for pc in f.pc.0..=f.pc.1 {
                let (got, start, steps, reads) = lazy_full(fx.hdr, hdr_addr, fx.eh, eh_addr, pc);
                max_steps = max_steps.max(steps);
                max_reads = max_reads.max(reads);
                let want = t.lookup_entry(pc);
                match (got, want) {
                    (Ok((row, starts)), Some((i, cstarts))) => {
                        assert_eq!(row, i.and_then(|i| t.row(i)), "{} {pc:#x}", fx.name);
                        // The whole table merges equal rules across a
                        // function's start; a lookup sees the start.
                        assert!(
                            starts == cstarts || (starts && pc == start),
                            "{} {pc:#x}",
                            fx.name
                        );
                    }
                    // Past the last function, or in a gap: no rules.
                    (Err(LookupError::NotFound), w) => {
                        assert_eq!(pc, f.pc.1, "{} {pc:#x}", fx.name);
                        assert!(w.is_none_or(|(i, _)| i.is_none()), "{} {pc:#x}", fx.name);
                    }
                    (g, w) => panic!("{} {pc:#x}: {g:?} vs {w:?}", fx.name),
                }
                pcs += 1;
            }
        }
    }
    eprintln!("{pcs} PCs, at most {max_steps} steps and {max_reads} reads a lookup");
    assert!(pcs > 400_000);
    // A probe per halving above a block, the block, the FDE and its CIE
    // (each its length, then its bytes).
    // (twice that where the small buffers were short)
    assert!(max_reads <= 2 * (MAX_PROBES + 5), "{max_reads}");
    assert!(max_steps <= MAX_STEPS);
}

/// A static executable's `.eh_frame` has no header: the kernel makes one
/// once (`synth_hdr_at`), placed past what the file maps, and looks its
/// functions up through it: the same rows as through the file's own
/// header, and as the whole compile, at every PC of every fixture.
/// `Table::lookup_span`'s stretch around each PC (the memo's topmost
/// span): the same rules throughout, an entry starting at its first PC
/// only, and the next stretch starting at its end.
#[test]
fn entry_spans_have_one_rule_throughout() {
    let mut spans = 0u64;
    for fx in fixtures() {
        let o = fx.compiled();
        let t = o.table();
        let (_, fdes) = parse_interp(fx.txt);
        for f in &fdes {
            let mut pc = f.pc.0;
            while pc < f.pc.1 {
                let (i, starts, (lo, hi)) = t.lookup_span(pc).expect("in the table");
                assert_eq!(t.lookup_entry(pc), Some((i, starts)), "{} {pc:#x}", fx.name);
                assert_eq!(starts, pc == lo, "{} {pc:#x}", fx.name);
                if i.is_none() {
                    pc += 1;
                    continue;
                }
                assert!(lo <= pc && pc < hi, "{} {pc:#x}: {lo:#x}..{hi:#x}", fx.name);
                for x in lo..hi {
                    assert_eq!(t.lookup_entry(x), Some((i, x == lo)), "{} {x:#x}", fx.name);
                }
                assert!(t.lookup_entry(hi).is_none_or(|(_, s)| s), "{} {hi:#x}", fx.name);
                spans += 1;
                pc = hi;
            }
        }
    }
    eprintln!("{spans} spans");
    assert!(spans > 5_000, "{spans}");
}

#[test]
fn lookup_by_function_through_a_made_header() {
    let mut pcs = 0u64;
    for fx in fixtures() {
        let (hdr_addr, eh_addr) = fx.addrs();
        let t = fx.compiled();
        let t = t.table();
        let n = ehframe::count_fdes(fx.eh, eh_addr, &mut || true).unwrap();
        let mut made = vec![0u8; ehframe::SYNTH_HEAD_LEN + ehframe::ENTRY_LEN * n];
        // Past both sections, 16-aligned, as the kernel places it.
        let at = (hdr_addr.max(eh_addr) + fx.eh.len().max(fx.hdr.len()) as u64 + 0x1000) & !15;
        let len = ehframe::synth_hdr_at(fx.eh, eh_addr, at, &mut made, &mut || true);
        assert_eq!(len, made.len(), "{}", fx.name);
        let (_, fdes) = parse_interp(fx.txt);
        for f in &fdes {
            for pc in f.pc.0..=f.pc.1 {
                let (got, start, _) = lazy(&made, at, fx.eh, eh_addr, pc);
                let real = lazy(fx.hdr, hdr_addr, fx.eh, eh_addr, pc);
                assert_eq!(got, real.0, "{} {pc:#x}", fx.name);
                assert_eq!(start, real.1, "{} {pc:#x}", fx.name);
                if let (Ok((row, _)), Some((i, _))) = (got, t.lookup_entry(pc)) {
                    assert_eq!(row, i.and_then(|i| t.row(i)), "{} {pc:#x}", fx.name);
                }
                pcs += 1;
            }
        }
    }
    assert!(pcs > 400_000, "{pcs}");
}

/// The made header's pass and its sort ask the caller every
/// `YIELD_EVERY` entries, and give no header once told to stop.
#[test]
fn made_header_stops_when_asked() {
    // 20,000 functions, listed backwards (the sort has work to do).
    let mut e = Eh::new(EH_ADDR);
    let c = e.cie(&gcc_cie());
    for k in (0..20_000u64).rev() {
        e.fde(c, 0x10_0000 + 16 * k, 16, &[]);
    }
    let (eh, eh_addr) = (&e.bytes[..], EH_ADDR);
    let n = ehframe::count_fdes(eh, eh_addr, &mut || true).unwrap();
    assert_eq!(n, 20_000);
    let mut asked = 0;
    let stop = ehframe::count_fdes(eh, eh_addr, &mut || {
        asked += 1;
        false
    });
    assert_eq!((stop, asked), (None, 1));
    let mut made = vec![0u8; ehframe::SYNTH_HEAD_LEN + ehframe::ENTRY_LEN * n];
    let mut all = 0u64;
    let len = ehframe::synth_hdr_at(eh, eh_addr, eh_addr, &mut made, &mut || {
        all += 1;
        true
    });
    assert_eq!(len, made.len());
    // The pass (20,001 entries) and the sort (30,000 sift-downs), each
    // asked every YIELD_EVERY.
    assert_eq!(all, 20_001 / YIELD_EVERY + 30_000 / YIELD_EVERY, "asked {all} times");
    // Stopped at the last question, in the sort.
    let mut calls = 0u64;
    let len = ehframe::synth_hdr_at(eh, eh_addr, eh_addr, &mut made, &mut || {
        calls += 1;
        calls < all
    });
    assert_eq!(len, 0);
    assert_eq!(calls, all);
}

/// Where a lookup answers with a hole (no rows over a range, kept by the
/// kernel so as not to look again), the whole compile has no rules
/// either, on every fixture: past each function's end, and in a header
/// whose every entry lies.
#[test]
fn lookup_by_function_holes_have_no_rules() {
    let mut holes = 0;
    let check =
        |name: &str, hdr: &[u8], hdr_addr: u64, eh: &[u8], eh_addr: u64, pc: u64, t: &Table<'_>| {
            let Ok(idx) = Index::parse(hdr, hdr_addr, hdr.len() as u64) else {
                return 0;
            };
            let mut src = Mem {
                parts: [(hdr_addr, hdr), (eh_addr, eh)],
                reads: 0,
            };
            let mut scratch = vec![0u8; SCRATCH_LEN];
            let mut rows = vec![
                FnRow {
                    off: 0,
                    row: None,
                    plt: None
                };
                MAX_FN_ROWS
            ];
            let (mut steps, mut hole) = (0, None);
            let r = lookup(
                &idx,
                &mut src,
                pc,
                &mut scratch,
                &mut rows,
                &mut steps,
                &mut hole,
                &mut [],
            );
            let Some((a, b)) = hole else { return 0 };
            assert!(
                r.is_err() && a <= pc && pc < b,
                "{name} {pc:#x}: {a:#x}..{b:#x} {r:?}"
            );
            for x in (a..b)
                .step_by(((b - a) / 64).max(1) as usize)
                .chain([b - 1])
            {
                assert!(
                    t.lookup_entry(x).is_none_or(|(i, _)| i.is_none()),
                    "{name}: rules at {x:#x} in the hole {a:#x}..{b:#x} of {pc:#x}"
                );
            }
            1
        };
    for fx in fixtures() {
        let (hdr_addr, eh_addr) = fx.addrs();
        let o = fx.compiled();
        let t = o.table();
        let (_, fdes) = parse_interp(fx.txt);
        for f in &fdes {
            holes += check(fx.name, fx.hdr, hdr_addr, fx.eh, eh_addr, f.pc.1, &t);
        }
    }
    // Every entry names one FDE: all but the first lie, each a hole up to
    // the next entry.
    let mut eh = Eh::new(0x1000_0000);
    let c = eh.cie(&gcc_cie());
    let f = eh.fde(c, 0x40_0000, 16, &[0x41, 0x0e, 16]);
    let fde = eh.fde_addr(f);
    let entries: Vec<(u64, u64)> = (0..1024).map(|i| (0x40_0000 + 16 * i, fde)).collect();
    let h = hdr(HDR_ADDR, eh.addr, &entries);
    let o = run(&h, HDR_ADDR, &eh.bytes, eh.addr);
    let t = o.table();
    let before = holes;
    for pc in [0x40_0010, 0x40_0000 + 16 * 700 + 5] {
        holes += check("lying", &h, HDR_ADDR, &eh.bytes, eh.addr, pc, &t);
    }
    assert_eq!(holes, before + 2);
    assert!(holes > 100, "{holes}");
}

#[test]
fn lookup_by_function_reads_log_n_entries() {
    // 2^20 one-block functions: the search reads 13 entries, then a
    // block, whatever the PC.
    let n = 1u64 << 20;
    let mut eh = Eh::new(0x1000_0000);
    let c = eh.cie(&gcc_cie());
    let f = eh.fde(c, 0x40_0000, 16, &[0x41, 0x0e, 16]);
    let fde = eh.fde_addr(f);
    // Every entry names the same FDE: only the one at its own location is
    // not lying.
    let entries: Vec<(u64, u64)> = (0..n).map(|i| (0x40_0000 + 16 * i, fde)).collect();
    let h = hdr(HDR_ADDR, eh.addr, &entries);
    for pc in [
        0x40_0000,
        0x40_0001,
        0x40_0000 + 16 * (n / 2) + 3,
        0x40_0000 + 16 * n - 1,
    ] {
        let (r, _, steps, reads) = lazy_full(&h, HDR_ADDR, &eh.bytes, eh.addr, pc);
        let probes = (n / BLOCK_ENTRIES as u64).ilog2() as u64;
        assert!(steps <= probes + 1 + BLOCK_ENTRIES as u64 + 64, "{steps}");
        assert!(reads <= probes + 6, "{reads}");
        if pc < 0x40_0010 {
            let want = if pc == 0x40_0000 { sp(8) } else { sp(16) };
            assert_eq!(
                r,
                Ok((Some(row(want, None)), pc == 0x40_0000 || pc == 0x40_0001))
            );
        } else {
            assert_eq!(r, Err(LookupError::Lying), "{pc:#x}");
        }
    }
    // With the first levels' probes kept (here after 32 searches spread
    // over the table), a search reads 5 entries fewer: 2^20 entries, 13
    // probes and the block, 9 reads.
    let idx = Index::parse(&h, HDR_ADDR, h.len() as u64).expect("index");
    let mut memo = vec![None; PROBE_MEMO];
    let mut reads = vec![];
    let pcs = (0..33).map(|i| 0x40_0000 + 16 * (i * (n / 32) + 7).min(n - 1));
    for pc in pcs.chain([0x40_0000 + 16 * 12345]) {
        let mut src = Mem {
            parts: [(HDR_ADDR, &h[..]), (eh.addr, &eh.bytes[..])],
            reads: 0,
        };
        let mut scratch = vec![0u8; SCRATCH_LEN];
        let mut steps = 0;
        let _ = idx.find(&mut src, pc, &mut scratch, &mut steps, &mut memo);
        reads.push(src.reads);
    }
    assert_eq!((reads[0], reads[33]), (14, 9), "{reads:?}");
    assert!(memo.iter().skip(1).all(|m| m.is_some()));
    // Before the first function, and an empty table.
    assert_eq!(
        lazy(&h, HDR_ADDR, &eh.bytes, eh.addr, 0x3f_ffff).0,
        Err(LookupError::NotFound)
    );
    let h0 = hdr(HDR_ADDR, eh.addr, &[]);
    assert_eq!(
        lazy(&h0, HDR_ADDR, &eh.bytes, eh.addr, 0x40_0000).0,
        Err(LookupError::NotFound)
    );
    // A header whose table runs past its bytes is refused.
    assert!(Index::parse(&h[..h.len() - 1], HDR_ADDR, h.len() as u64 - 1).is_err());
}

#[test]
fn lookup_by_function_gives_plt_rows_by_arithmetic() {
    // A PLT far over the whole compile's caps: one row kept, the right
    // CFA at every PC.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let big = MAX_PLT_BLOCKS_TOTAL * 16 * 4;
    let mut p = vec![0x0e, 16, 0x46, 0x0e, 24, 0x4a];
    p.extend(plt_expr(8, 11));
    let f = eh.fde(c, 0x10_0000, big, &p);
    let h = hdr(HDR_ADDR, EH_ADDR, &[(0x10_0000, eh.fde_addr(f))]);
    let at = |pc: u64| lazy(&h, HDR_ADDR, &eh.bytes, EH_ADDR, pc).0;
    assert_eq!(at(0x10_0005), Ok((Some(row(sp(16), None)), false)));
    assert_eq!(at(0x10_0006), Ok((Some(row(sp(24), None)), true)));
    let mut rng = Rng(7);
    for _ in 0..10_000 {
        let pc = 0x10_0010 + rng.below(big as usize - 16) as u64;
        let want = if pc & 15 >= 11 { 16 } else { 8 };
        let starts = pc & 15 == 0 || pc & 15 == 11;
        assert_eq!(at(pc), Ok((Some(row(sp(want), None)), starts)), "{pc:#x}");
    }
    assert_eq!(at(0x10_0000 + big), Err(LookupError::NotFound));
    // The whole compile refuses it.
    let o = run(&h, HDR_ADDR, &eh.bytes, EH_ADDR);
    assert_eq!(o.at(0x10_0020), None);
}

#[test]
fn fdes_over_64_kib_are_skipped_as_by_function() {
    // A program runs without a pause: its FDE is at most 64 KiB (length
    // fields included), whole or by function.
    for (len, compiled) in [(1 << 16, 1), ((1 << 16) + 1, 0)] {
        let mut eh = Eh::new(EH_ADDR);
        let c = eh.cie(&gcc_cie());
        // 4 + 4 bytes of length and CIE pointer, 4 + 4 of pc_begin and
        // pc_range, 1 of augmentation length.
        let f = eh.fde(c, 0x1000, 0x10, &vec![0; len - 17]);
        assert_eq!(eh.bytes.len() - f, len);
        let h = hdr(HDR_ADDR, EH_ADDR, &[(0x1000, eh.fde_addr(f))]);
        let s = run(&h, HDR_ADDR, &eh.bytes, EH_ADDR).stats();
        assert_eq!((s.compiled, s.bad_fde), (compiled, 1 - compiled), "{s:?}");
        let (r, _, _) = lazy(&h, HDR_ADDR, &eh.bytes, EH_ADDR, 0x1000);
        assert_eq!(r.is_ok(), compiled == 1, "{r:?}");
    }
}

#[test]
fn failing_plt_fde_listed_many_times_is_bounded() {
    // The review's input: a header listing one PLT FDE many times, whose
    // program expands MAX_PLT_BLOCKS_TOTAL blocks in four ranges and then
    // fails.  Each entry's rollback gave its blocks back, for the next
    // to expand again: 2^19 builder calls per entry.  Now they stay
    // spent: builder calls are at most 2 x work, here 2 x
    // MAX_PLT_BLOCKS_TOTAL and a few per entry.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let span = MAX_PLT_BLOCKS * 16;
    let mut p = plt_expr(8, 11);
    for _ in 0..4 {
        p.push(0x04); // DW_CFA_advance_loc4
        p.extend((span as u32).to_le_bytes());
    }
    p.push(0x3f); // DW_CFA_hi_user: no such instruction.
    let f = eh.fde(c, 0x10_0000, 4 * span + 16, &p);
    // 256 entries with 1 MiB of .eh_frame to pay for the blocks; then
    // 2^18 entries, whose 2 MiB header pays for them (at an address
    // where it overlaps nothing).
    for (n, pad) in [(256u64, 1usize << 20), (1 << 18, 0)] {
        let far = 0x4000_0000;
        let h = hdr(far, EH_ADDR, &vec![(0x10_0000, eh.fde_addr(f)); n as usize]);
        let mut bytes = eh.bytes.clone();
        bytes.resize(bytes.len() + pad, 0);
        let mut b = Builder::new(VecStore::new());
        let s = compile(&h, far, &bytes, EH_ADDR, &mut b, &mut || true).expect("compiled");
        let calls = b.calls();
        eprintln!("{n} entries: {calls} builder calls, {s:?}");
        assert_eq!((s.entries, s.bad_program), (n as u32, n as u32), "{s:?}");
        assert_eq!(s.plt_blocks, MAX_PLT_BLOCKS_TOTAL, "{s:?}");
        assert!(calls <= 2 * MAX_PLT_BLOCKS_TOTAL + 8 * n, "{calls} calls");
        assert!(calls <= 2 * s.work, "{calls} calls, {s:?}");
        assert!(s.work <= work_bound(h.len(), bytes.len()), "{s:?}");
        let (store, base) = b.finish().expect("finish");
        assert_eq!(store.table(base).lookup(0x10_0000), None);
    }
}

#[test]
fn keep_going_is_asked_and_can_stop_the_compile() {
    // 20,000 small functions, then a PLT of MAX_PLT_BLOCKS blocks.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let mut entries = Vec::new();
    for i in 0..20_000u64 {
        let pc = 0x10_0000 + 16 * i;
        entries.push((pc, eh.fde(c, pc, 16, &[0x41, 0x0e, 16])));
    }
    let plt = 0x10_0000 + 16 * 20_000;
    entries.push((plt, eh.fde(c, plt, MAX_PLT_BLOCKS * 16, &plt_expr(8, 11))));
    pay(&mut eh, MAX_PLT_BLOCKS);
    let e: Vec<(u64, u64)> = entries.iter().map(|&(l, o)| (l, eh.fde_addr(o))).collect();
    let h = hdr(HDR_ADDR, eh.addr, &e);
    let compile_with = |stop_at: u64| {
        let mut b = Builder::new(VecStore::new());
        let mut asked = Vec::new();
        let r = compile(&h, HDR_ADDR, &eh.bytes, eh.addr, &mut b, &mut || {
            asked.push(());
            asked.len() as u64 != stop_at
        });
        (r, asked.len() as u64, b.calls())
    };
    // Asked every YIELD_EVERY units: no entry here costs more than a few
    // units, and the PLT's blocks are asked between.
    let (r, asked, calls) = compile_with(0);
    let s = r.expect("compiled");
    assert_eq!(
        (s.compiled, s.plt_blocks),
        (20_001, MAX_PLT_BLOCKS),
        "{s:?}"
    );
    assert!(asked <= s.work / YIELD_EVERY, "{asked} for {s:?}");
    assert!(asked >= s.work / (YIELD_EVERY + 4), "{asked} for {s:?}");
    assert!(calls <= 2 * s.work);
    // The PLT alone is asked about every YIELD_EVERY blocks.
    let h1 = hdr(HDR_ADDR, eh.addr, &e[20_000..]);
    let mut n = 0u64;
    let mut b = Builder::new(VecStore::new());
    compile(&h1, HDR_ADDR, &eh.bytes, eh.addr, &mut b, &mut || {
        n += 1;
        true
    })
    .expect("compiled");
    assert_eq!(n, MAX_PLT_BLOCKS / YIELD_EVERY);
    // False stops it at once, in the PLT too: not asked again, no more
    // than the work since the last question done.
    for stop_at in [1, 3, asked] {
        let (r, n, calls) = compile_with(stop_at);
        assert_eq!((r, n), (Err(EhError::Stopped), stop_at));
        assert!(calls <= 2 * (stop_at + 1) * YIELD_EVERY, "{calls} calls");
    }
}

#[test]
fn lookup_by_function_is_bounded_on_hostile_inputs() {
    // The review's first input: a header listing one failing PLT FDE (its
    // program fails after the expression) many times.  A lookup runs one
    // FDE, whatever the header repeats.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let mut p = plt_expr(8, 11);
    p.push(0x3f); // DW_CFA_hi_user: no such instruction.
    let f = eh.fde(c, 0x10_0000, MAX_PLT_BLOCKS * 16, &p);
    let entries = vec![(0x10_0000, eh.fde_addr(f)); 1 << 18];
    // Its 2 MiB header where it overlaps nothing.
    let far = 0x4000_0000;
    let h = hdr(far, EH_ADDR, &entries);
    let (r, _, steps) = lazy(&h, far, &eh.bytes, EH_ADDR, 0x10_0100);
    assert_eq!(r, Err(LookupError::Program));
    assert!(steps <= MAX_STEPS, "{steps}");
    // The longest FDE read, a program of nops and advances: one step a
    // byte, its rows capped.
    let mut eh = Eh::new(EH_ADDR);
    let c = eh.cie(&gcc_cie());
    let mut p = Vec::new();
    while p.len() < 60_000 {
        p.extend([0x41, 0x0e, 16, 0x41, 0x0e, 24]);
    }
    let f = eh.fde(c, 0x10_0000, 1 << 20, &p);
    let h = hdr(HDR_ADDR, EH_ADDR, &[(0x10_0000, eh.fde_addr(f))]);
    let (r, _, steps) = lazy(&h, HDR_ADDR, &eh.bytes, EH_ADDR, 0x10_0000);
    assert_eq!(r, Err(LookupError::TooBig));
    assert!(steps <= MAX_STEPS, "{steps}");
    // Past the length read: refused, not read.
    let mut p = vec![0u8; 70_000];
    p[0] = 0x41;
    let f = eh.fde(c, 0x10_0000, 16, &p);
    let h = hdr(HDR_ADDR, EH_ADDR, &[(0x10_0000, eh.fde_addr(f))]);
    assert_eq!(
        lazy(&h, HDR_ADDR, &eh.bytes, EH_ADDR, 0x10_0000).0,
        Err(LookupError::Fde)
    );
}

#[test]
fn row_at_edges() {
    let r = |off, cfa| FnRow {
        off,
        row: Some(row(sp(cfa), None)),
        plt: None,
    };
    let rows = [r(0, 8), r(1, 16), r(10, 8)];
    assert_eq!(row_at(&rows, 0x1000, 0xfff), None);
    assert_eq!(
        row_at(&rows, 0x1000, 0x1000),
        Some((Some(row(sp(8), None)), true))
    );
    assert_eq!(
        row_at(&rows, 0x1000, 0x1005),
        Some((Some(row(sp(16), None)), false))
    );
    assert_eq!(
        row_at(&rows, 0x1000, 0x100a),
        Some((Some(row(sp(8), None)), true))
    );
    assert_eq!(row_at(&[], 0x1000, 0x1000), None);
    assert_eq!(row_at(&rows, 0x1000, 0x1000 + (1 << 33)), None);
}
