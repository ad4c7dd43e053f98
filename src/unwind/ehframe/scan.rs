// SPDX-License-Identifier: GPL-2.0

//! `.eh_frame` without `.eh_frame_hdr`: ld writes the header only when
//! asked (`--eh-frame-hdr`, which gcc passes for dynamic links), so
//! static executables have none.  One pass over the section lists its
//! FDEs; sorted by initial location, they make the header that
//! [`super::compile`] reads, so the rest is the same code.
//!
//! The pass is bounded by the section: every entry is at least 8 bytes
//! and the walk only moves forward; the sort is a heapsort, O(n log n).
//! Both ask the caller's `keep_going` hook ([`Pace`]) every
//! `YIELD_EVERY` entries: false stops them (an empty header).  An FDE
//! whose CIE or initial location cannot be read is left out (the next
//! fallback serves its function), and so is one too far from the header
//! for its 32-bit offsets.

use super::super::table::Pace;
use super::cie::{parse_cie, Cie};
use super::entry::{entry, EntryError};
use super::fde::{fde_cie, parse_body};
use super::hdr::{ENTRY_LEN, TABLE_ENC};

/// The header's fixed part: version, three encodings, `eh_frame_ptr`
/// (`pcrel | sdata4`), `fde_count` (`udata4`).
pub const SYNTH_HEAD_LEN: usize = 12;

/// `DW_EH_PE_pcrel | DW_EH_PE_sdata4`.
const PCREL_SDATA4: u8 = 0x1b;
/// `DW_EH_PE_udata4`.
const UDATA4: u8 = 0x03;

/// Calls `f(initial location, FDE address)` for each FDE of `eh` (the
/// whole section, at `eh_addr`) whose location can be read; false if
/// `pace` said stop.
fn each_fde(eh: &[u8], eh_addr: u64, pace: &mut Pace<'_>, mut f: impl FnMut(u64, u64)) -> bool {
    let mut off = 0usize;
    let mut last: Option<Cie<'_>> = None;
    // Each step moves at least 8 bytes forward: at most len / 8 steps.
    for step in 0..eh.len() / 8 + 1 {
        if pace.check(step as u64).is_err() {
            return false;
        }
        let e = match entry(eh, eh_addr, off) {
            Ok(e) => e,
            Err(EntryError::Terminator | EntryError::Read(_)) => return true,
        };
        let next = e
            .id_off
            .checked_add(4)
            .and_then(|o| o.checked_add(e.body.remaining()));
        if e.id != 0 {
            if let Ok((cie_off, body)) = fde_cie(eh, eh_addr, off) {
                let cie = match last {
                    Some(c) if c.off == cie_off => Some(c),
                    _ => parse_cie(eh, eh_addr, cie_off).ok(),
                };
                if let Some(cie) = cie {
                    last = Some(cie);
                    if let Ok(fde) = parse_body(body, cie) {
                        f(fde.pc_begin, eh_addr.wrapping_add(off as u64));
                    }
                }
            }
        }
        match next {
            Some(n) if n > off => off = n,
            _ => return true,
        }
    }
    true
}

/// The number of FDEs [`synth_hdr`] lists at most: size its buffer as
/// `SYNTH_HEAD_LEN + ENTRY_LEN * count`.  `keep_going` is asked now and
/// then: `None` if it said stop.
pub fn count_fdes(eh: &[u8], eh_addr: u64, keep_going: &mut dyn FnMut() -> bool) -> Option<usize> {
    let mut n = 0usize;
    each_fde(eh, eh_addr, &mut Pace::new(keep_going), |_, _| {
        n = n.saturating_add(1)
    })
    .then_some(n)
}

/// Writes into `buf` an `.eh_frame_hdr` for `eh` (the whole section, at
/// `eh_addr`) as if it were at link-time address `eh_addr` too: its
/// table sorted by initial location.  Returns the header's length; FDEs
/// past `buf`'s room are left out.
#[cfg(test)]
pub fn synth_hdr(eh: &[u8], eh_addr: u64, buf: &mut [u8]) -> usize {
    synth_hdr_at(eh, eh_addr, eh_addr, buf, &mut || true)
}

/// [`synth_hdr`] for a header at link-time address `hdr_addr` (where the
/// file has nothing, so that a lookup can read the header from memory
/// and the rest from the file), asking `keep_going` now and then: 0 if
/// it said stop.
pub fn synth_hdr_at(
    eh: &[u8],
    eh_addr: u64,
    hdr_addr: u64,
    buf: &mut [u8],
    keep_going: &mut dyn FnMut() -> bool,
) -> usize {
    let Some((head, rest)) = buf.split_at_mut_checked(SYNTH_HEAD_LEN) else {
        return 0;
    };
    let (table, _) = rest.as_chunks_mut::<ENTRY_LEN>();
    let mut n = 0usize;
    let whole = each_fde(eh, eh_addr, &mut Pace::new(keep_going), |loc, fde| {
        // Offsets from the header, which sits at `hdr_addr`.
        let rel = |a: u64| i32::try_from(a.wrapping_sub(hdr_addr) as i64).ok();
        if let (Some(l), Some(f), Some(slot)) = (rel(loc), rel(fde), table.get_mut(n)) {
            slot[..4].copy_from_slice(&l.to_le_bytes());
            slot[4..].copy_from_slice(&f.to_le_bytes());
            n += 1;
        }
    });
    let Some(table) = table.get_mut(..n).filter(|_| whole) else {
        return 0;
    };
    // By address, as `compile` and the lookup read them.
    let key = |e: &[u8; ENTRY_LEN]| hdr_addr.wrapping_add(loc(e) as i64 as u64);
    if !heapsort(table, key, &mut Pace::new(keep_going)) {
        return 0;
    }
    // eh_frame_ptr, relative to its own field at hdr_addr + 4.
    let Ok(ptr) = i32::try_from(eh_addr.wrapping_sub(hdr_addr.wrapping_add(4)) as i64) else {
        return 0;
    };
    head[..4].copy_from_slice(&[1, PCREL_SDATA4, UDATA4, TABLE_ENC]);
    head[4..8].copy_from_slice(&ptr.to_le_bytes());
    head[8..12].copy_from_slice(&(n as u32).to_le_bytes());
    SYNTH_HEAD_LEN + n * ENTRY_LEN
}

/// The initial location of a table entry.
fn loc(e: &[u8; ENTRY_LEN]) -> i32 {
    i32::from_le_bytes([e[0], e[1], e[2], e[3]])
}

/// Sorts entries by `key`: in place, O(n log n), no panic path (core's
/// sort has one, which objtool cannot follow); false if `pace` said stop
/// (each of the 1.5 n sift-downs counts one unit).
fn heapsort(
    t: &mut [[u8; ENTRY_LEN]],
    key: impl Fn(&[u8; ENTRY_LEN]) -> u64,
    pace: &mut Pace<'_>,
) -> bool {
    // Moves t[i] down the heap of the first `n` entries.
    let sift = |t: &mut [[u8; ENTRY_LEN]], mut i: usize, n: usize| loop {
        let l = i.saturating_mul(2).saturating_add(1);
        if l >= n {
            return;
        }
        let r = l + 1;
        let big = match (t.get(l), t.get(r)) {
            (Some(a), Some(b)) if r < n && key(b) > key(a) => r,
            _ => l,
        };
        match (t.get(i), t.get(big)) {
            (Some(a), Some(b)) if key(b) > key(a) => t.swap(i, big),
            _ => return,
        }
        i = big;
    };
    let n = t.len();
    let mut work = 0u64;
    for i in (0..n / 2).rev() {
        work += 1;
        if pace.check(work).is_err() {
            return false;
        }
        sift(t, i, n);
    }
    for end in (1..n).rev() {
        work += 1;
        if pace.check(work).is_err() {
            return false;
        }
        t.swap(0, end);
        sift(t, 0, end);
    }
    true
}
