// SPDX-License-Identifier: GPL-2.0

//! `.eh_frame` without `.eh_frame_hdr`: ld writes the header only when
//! asked (`--eh-frame-hdr`, which gcc passes for dynamic links), so
//! static executables have none.  One pass over the section lists its
//! FDEs; sorted by initial location, they make the header that
//! [`super::compile`] reads, so the rest is the same code.
//!
//! The pass is bounded by the section: every entry is at least 8 bytes
//! and the walk only moves forward.  An FDE whose CIE or initial location
//! cannot be read is left out (the next fallback serves its function),
//! and so is one too far from the section for the header's 32-bit
//! offsets.

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
/// whole section, at `eh_addr`) whose location can be read.
fn each_fde(eh: &[u8], eh_addr: u64, mut f: impl FnMut(u64, u64)) {
    let mut off = 0usize;
    let mut last: Option<Cie<'_>> = None;
    // Each step moves at least 8 bytes forward: at most len / 8 steps.
    for _ in 0..eh.len() / 8 + 1 {
        let e = match entry(eh, eh_addr, off) {
            Ok(e) => e,
            Err(EntryError::Terminator | EntryError::Read(_)) => return,
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
            _ => return,
        }
    }
}

/// The number of FDEs [`synth_hdr`] lists at most: size its buffer as
/// `SYNTH_HEAD_LEN + ENTRY_LEN * count`.
pub fn count_fdes(eh: &[u8], eh_addr: u64) -> usize {
    let mut n = 0usize;
    each_fde(eh, eh_addr, |_, _| n = n.saturating_add(1));
    n
}

/// Writes into `buf` an `.eh_frame_hdr` for `eh` (the whole section, at
/// `eh_addr`) as if it were at link-time address `eh_addr` too: its
/// table sorted by initial location.  Returns the header's length; FDEs
/// past `buf`'s room are left out.
pub fn synth_hdr(eh: &[u8], eh_addr: u64, buf: &mut [u8]) -> usize {
    let Some((head, rest)) = buf.split_at_mut_checked(SYNTH_HEAD_LEN) else {
        return 0;
    };
    let (table, _) = rest.as_chunks_mut::<ENTRY_LEN>();
    let mut n = 0usize;
    each_fde(eh, eh_addr, |loc, fde| {
        // Offsets from the header, which sits at `eh_addr`.
        let rel = |a: u64| i32::try_from(a.wrapping_sub(eh_addr) as i64).ok();
        if let (Some(l), Some(f), Some(slot)) = (rel(loc), rel(fde), table.get_mut(n)) {
            slot[..4].copy_from_slice(&l.to_le_bytes());
            slot[4..].copy_from_slice(&f.to_le_bytes());
            n += 1;
        }
    });
    let Some(table) = table.get_mut(..n) else {
        return 0;
    };
    // By address, as `compile` reads them: the header is at `eh_addr`.
    heapsort(table, |e| eh_addr.wrapping_add(loc(e) as i64 as u64));
    head[..4].copy_from_slice(&[1, PCREL_SDATA4, UDATA4, TABLE_ENC]);
    // eh_frame_ptr, relative to its own field at eh_addr + 4.
    head[4..8].copy_from_slice(&(-4i32).to_le_bytes());
    head[8..12].copy_from_slice(&(n as u32).to_le_bytes());
    SYNTH_HEAD_LEN + n * ENTRY_LEN
}

/// The initial location of a table entry.
fn loc(e: &[u8; ENTRY_LEN]) -> i32 {
    i32::from_le_bytes([e[0], e[1], e[2], e[3]])
}

/// Sorts entries by `key`: in place, O(n log n), no panic path (core's
/// sort has one, which objtool cannot follow).
fn heapsort(t: &mut [[u8; ENTRY_LEN]], key: impl Fn(&[u8; ENTRY_LEN]) -> u64) {
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
    for i in (0..n / 2).rev() {
        sift(t, i, n);
    }
    for end in (1..n).rev() {
        t.swap(0, end);
        sift(t, 0, end);
    }
}
