// SPDX-License-Identifier: GPL-2.0

//! One function's rows, looked up through the section's sorted FDE array
//! and read from the file piece by piece ([`lookup_function`]): for an SFrame
//! section too large to compile whole (`sframe_compile_kb`) in a file
//! whose `.eh_frame` cannot serve instead.  Nothing here grows with the
//! section.
//!
//! A lookup reads, through `read` (the file by link-time address, never
//! user memory): at most [`MAX_PROBES`] FDE start fields while the search
//! range is wider than a block, then that block ([`BLOCK_BYTES`]); the
//! FDE found; the FRE sub-section from that FDE's first FRE on, at most
//! what its FREs can take.  It decodes at most [`MAX_FN_FRES`] FREs.  So
//! its work is bounded by construction: [`MAX_STEPS`] steps (probes,
//! block entries and FREs), whatever the section.  A PCMASK FDE (a PLT)
//! gives the rows of one block: the caller finds a PC's row at its
//! offset modulo [`Found::rep`], with no expansion.
//!
//! The checks are the validation pass's, for one function
//! ([`super::validate`]): the FDE's fields, its FREs' starts increasing
//! and inside the function (PCMASK: the block), their rules; a function
//! that fails any has no rows (frame pointers there).  What only a whole
//! pass sees (FDEs unsorted or overlapping, FRE counts adding up) is not
//! checked: a binary search of an unsorted array finds some FDE or none,
//! and that FDE must still cover the PC.

pub use super::super::sorted::MAX_PROBES;
use super::super::sorted::{self, Sorted};
use super::super::table::Row;
use super::error::SframeError;
use super::format::{read_u32, Header, V3_ATTR_LEN};
use super::section::Section;
use super::validate::fde_rows;

/// The bytes of FDEs read at once when the search is that narrow.
pub const BLOCK_BYTES: usize = 1024;
/// The most FREs of one function looked up; a function with more has
/// no rows.
pub const MAX_FN_FRES: u32 = 1024;
/// The most bytes one FRE takes: a 4-byte start, its info byte and 15
/// data words of 4 bytes.
pub const MAX_FRE_LEN: usize = 4 + 1 + 15 * 4;
/// The scratch bytes a lookup may need: the block, or a function's
/// attribute and FREs.
pub const SCRATCH_LEN: usize = V3_ATTR_LEN + MAX_FN_FRES as usize * MAX_FRE_LEN;
/// Scratch enough for nearly every function: a caller tries it first,
/// and [`SCRATCH_LEN`] on [`LookupError::Short`].
pub const SMALL_SCRATCH_LEN: usize = 2048;
/// The most steps of one lookup: probes, the block's FDEs (at least 16
/// bytes each), the FREs.
#[cfg_attr(not(test), allow(dead_code))] // The bound the host tests check.
pub const MAX_STEPS: u64 = MAX_PROBES + (BLOCK_BYTES / 16) as u64 + MAX_FN_FRES as u64;

const _: () = assert!(BLOCK_BYTES <= SMALL_SCRATCH_LEN);

/// Why a lookup gave no rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupError {
    /// A read failed: nothing is kept, the next walk tries again.
    Read,
    /// No FDE covers the PC.
    NotFound,
    /// The FDE or one of its FREs is malformed (the kind is the
    /// validation pass's).
    Fde(SframeError),
    /// More than [`MAX_FN_FRES`] FREs.
    TooBig,
    /// The caller's scratch is smaller than [`SCRATCH_LEN`] and this
    /// function needs more: try again with that.
    Short,
    /// The caller's row sink is full.
    Full,
}

/// The searchable part of a section: its header and where its
/// sub-sections are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Index {
    header: Header,
    /// The section's link-time address.
    addr: u64,
    /// The FDE sub-section's.
    fdes_addr: u64,
    /// The FRE sub-section's, and its length.
    fres_addr: u64,
    fre_len: usize,
}

/// A function a lookup found: `[start, end)` (link-time), and for a
/// PCMASK FDE its block size (0 otherwise): its rows are then the
/// block's, found at `(pc - start) % rep`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// The first address.
    pub start: u64,
    /// Past the last.
    pub end: u64,
    /// The block size of a PCMASK FDE, else 0.
    pub rep: u32,
}

impl Index {
    /// The index of the section at link-time address `addr`, `len` bytes
    /// long, whose first bytes are `head` (at least the fixed header):
    /// the sub-sections its header places must fit in `len`.
    pub fn parse(head: &[u8], addr: u64, len: u64) -> Result<Self, SframeError> {
        let header = Header::parse(head)?;
        let l = header.layout()?;
        if l.len as u64 > len {
            return Err(SframeError::Truncated);
        }
        let at = |o: usize| addr.checked_add(o as u64).ok_or(SframeError::Overflow);
        Ok(Index {
            header,
            addr,
            fdes_addr: at(l.fdes_start)?,
            fres_addr: at(l.fres_start)?,
            fre_len: l.fres_end - l.fres_start,
        })
    }

    /// The number of FDEs.
    pub const fn count(&self) -> u32 {
        self.header.num_fdes
    }

    fn fde_len(&self) -> usize {
        self.header.version.fde_len()
    }

    fn fde_addr(&self, i: u32) -> u64 {
        self.fdes_addr
            .wrapping_add((i as u64).wrapping_mul(self.fde_len() as u64))
    }

    /// FDEs `i..` whose bytes are `fdes`, as a section window.
    fn window<'a>(&self, i: u32, fdes: &'a [u8], fre_base: usize, fres: &'a [u8]) -> Section<'a> {
        Section::window(
            self.header,
            self.addr,
            i,
            fdes,
            self.fde_addr(i),
            fre_base,
            fres,
        )
    }

    /// The last FDE whose function starts at or below `pc`: (its index,
    /// its start, the next FDE's start if the search read it).  The
    /// bounded search of [`sorted::find`]: at most [`MAX_PROBES`] reads of
    /// one start, then one of a block of at most [`BLOCK_BYTES`]; `steps`
    /// counts the FDEs read; `memo` (of any length, kept by the caller for
    /// this index and empty at first) keeps the first levels' probes.
    pub fn find(
        &self,
        read: &mut dyn FnMut(u64, &mut [u8]) -> bool,
        pc: u64,
        scratch: &mut [u8],
        steps: &mut u64,
        memo: &mut [Option<(u64, u64)>],
    ) -> Result<(u32, u64, Option<u64>), LookupError> {
        let mut fdes = Fdes { idx: self, read };
        let hit = sorted::find(&mut fdes, pc, scratch, steps, memo)?;
        let h = hit.ok_or(LookupError::NotFound)?;
        // The value is the FDE's index (below `count()`, a u32).
        let i = u32::try_from(h.value).map_err(|_| LookupError::NotFound)?;
        Ok((i, h.key, h.next))
    }
}

/// The FDE array as a [`Sorted`] array: entries of (function start, FDE
/// index), read through `read`.
struct Fdes<'a> {
    idx: &'a Index,
    read: &'a mut dyn FnMut(u64, &mut [u8]) -> bool,
}

impl Sorted for Fdes<'_> {
    type Error = LookupError;

    fn count(&self) -> u32 {
        self.idx.count()
    }

    fn entry_len(&self) -> usize {
        self.idx.fde_len()
    }

    fn block(&self) -> u32 {
        (BLOCK_BYTES / self.idx.fde_len()) as u32
    }

    fn read(&mut self, first: u32, buf: &mut [u8]) -> Result<(), LookupError> {
        match (self.read)(self.idx.fde_addr(first), buf) {
            true => Ok(()),
            false => Err(LookupError::Read),
        }
    }

    fn decode(&self, i: u32, entry: &[u8]) -> Result<(u64, u64), LookupError> {
        let start = self.idx.window(i, entry, 0, &[]).fde_start(i);
        Ok((start.map_err(LookupError::Fde)?, i as u64))
    }

    fn unusable(&self) -> LookupError {
        LookupError::Read
    }
}

/// The rows of the function at `pc`: found in the FDE array, its FREs
/// read into `scratch` (at least [`SMALL_SCRATCH_LEN`] bytes; up to
/// [`SCRATCH_LEN`] are used) and given to `sink` in order, as (offset in
/// the function or its block, rules); [`LookupError::Short`] if this
/// function needs more scratch.  `steps` counts the work: at most
/// [`MAX_STEPS`] per call.
///
/// On an error that holds for more than `pc`, `hole` is the range that
/// has no rows for the same reason, so that a caller need not look it
/// up again: a function that fails its checks, up to the next FDE's
/// start (or `pc + 1` if the search did not read it); the gap after a
/// function's end.  `memo`: [`Index::find`]'s.
#[allow(clippy::too_many_arguments)]
pub fn lookup_function(
    idx: &Index,
    read: &mut dyn FnMut(u64, &mut [u8]) -> bool,
    pc: u64,
    scratch: &mut [u8],
    steps: &mut u64,
    hole: &mut Option<(u64, u64)>,
    memo: &mut [Option<(u64, u64)>],
    sink: &mut dyn FnMut(u32, Row) -> bool,
) -> Result<Found, LookupError> {
    *hole = None;
    if scratch.len() < SMALL_SCRATCH_LEN {
        return Err(LookupError::Read);
    }
    let (i, start, next) = idx.find(read, pc, scratch, steps, memo)?;
    let limit = next.unwrap_or(pc.saturating_add(1));
    let mut gap = None;
    let r = lookup_at(idx, read, i, pc, scratch, steps, &mut gap, sink);
    match r {
        Err(LookupError::NotFound) => *hole = gap.map(|end| (end, limit)),
        Err(LookupError::Fde(_) | LookupError::TooBig) => *hole = Some((start, limit)),
        _ => {}
    }
    r
}

/// [`lookup_function`] once the search gave FDE `i`: `gap` is the function's end
/// if `pc` is past it.
#[allow(clippy::too_many_arguments)]
fn lookup_at(
    idx: &Index,
    read: &mut dyn FnMut(u64, &mut [u8]) -> bool,
    i: u32,
    pc: u64,
    scratch: &mut [u8],
    steps: &mut u64,
    gap: &mut Option<u64>,
    sink: &mut dyn FnMut(u32, Row) -> bool,
) -> Result<Found, LookupError> {
    let v = idx.header.version;
    let mut fb = [0u8; 20];
    let fb = fb.get_mut(..v.fde_len()).ok_or(LookupError::Read)?;
    if !read(idx.fde_addr(i), fb) {
        return Err(LookupError::Read);
    }
    // The FRE sub-section from the FDE's first FRE (v3: its attribute)
    // on: enough for the attribute and one FRE first, then what the
    // FDE's FREs can take.
    let bad = LookupError::Fde;
    let first = read_u32(fb, v.fre_off_at()).map_err(bad)? as usize;
    let avail = idx
        .fre_len
        .checked_sub(first)
        .ok_or(bad(SframeError::FreOffsetOutOfBounds))?;
    let fres_at = idx.fres_addr.wrapping_add(first as u64);
    let mut have = avail.min(V3_ATTR_LEN + MAX_FRE_LEN);
    let part = scratch.get_mut(..have).ok_or(LookupError::Read)?;
    if !read(fres_at, part) {
        return Err(LookupError::Read);
    }
    let fde = idx
        .window(i, fb, first, &scratch[..have])
        .fde(i)
        .map_err(bad)?;
    let end = fde
        .start
        .checked_add(fde.size as u64)
        .ok_or(bad(SframeError::FunctionEndOverflow))?;
    if !(fde.start..end).contains(&pc) {
        *gap = Some(end).filter(|&e| e <= pc);
        return Err(LookupError::NotFound);
    }
    if fde.num_fres > MAX_FN_FRES {
        return Err(LookupError::TooBig);
    }
    let need = (fde.num_fres as usize)
        .saturating_mul(MAX_FRE_LEN)
        .saturating_add(fde.fres_off)
        .min(avail);
    if need > scratch.len() {
        return Err(LookupError::Short);
    }
    if need > have {
        let rest = scratch.get_mut(have..need).ok_or(LookupError::Read)?;
        if !read(fres_at.wrapping_add(have as u64), rest) {
            return Err(LookupError::Read);
        }
        have = need;
    }
    let fres = scratch.get(..have).ok_or(LookupError::Read)?;
    // The validation pass's checks, one step per FRE.
    let all = fde_rows(fres, idx.header.fixed(), &fde, &mut |start, row| {
        *steps = steps.saturating_add(1);
        sink(start, row)
    });
    if !all.map_err(bad)? {
        return Err(LookupError::Full);
    }
    Ok(Found {
        start: fde.start,
        end,
        rep: if fde.pcmask { fde.rep_size as u32 } else { 0 },
    })
}
