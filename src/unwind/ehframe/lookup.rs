// SPDX-License-Identifier: GPL-2.0

//! One function's rows, looked up through `.eh_frame_hdr`'s sorted table
//! and read from the file piece by piece: no whole section is read or
//! compiled, so the cost of a lookup does not grow with the file.
//!
//! A lookup reads, through a [`Source`] (the file, never user memory):
//! at most [`MAX_PROBES`] table entries of 8 bytes while the search range
//! is wider than [`BLOCK_ENTRIES`], then that block; the FDE the search
//! found (at most [`MAX_FDE_LEN`] bytes) and its CIE (at most
//! [`MAX_CIE_LEN`]).  It runs the CIE's and the FDE's CFA programs once,
//! each instruction taking at least one byte of them, and keeps the
//! function's rows (at most [`MAX_FN_ROWS`]).  So its work is bounded by
//! construction: [`MAX_STEPS`] steps (probes, block entries and
//! instructions), whatever the file.  The PLT expression gives its row
//! by arithmetic at [`row_at`], not by one row per 16-byte block.
//!
//! The checks are the whole-file compiler's, per function: the FDE's
//! `pc_begin` must be the table's location (a header that lies is not
//! believed), its CIE usable, its program valid; a function that fails
//! any has no rows, and the caller falls back to frame pointers for that
//! frame.  What only a whole-file pass can see (an FDE overlapping the
//! one before it, an unsorted table) is not checked: a binary search over
//! a table that is not sorted finds some entry or none, and that entry's
//! FDE must still cover the PC.

pub use super::super::sorted::MAX_PROBES;
use super::super::sorted::{self, Sorted};
use super::super::table::Row;
use super::cfa::{CfaState, Ctx, RunError, State};
use super::compile::{cfa_rule, cie_machine, row_of};
use super::entry::entry;
use super::error::EhError;
use super::fde::{parse_body, MAX_FDE_LEN};
use super::hdr::{decode_entry, head, ENTRY_LEN};

/// The most bytes of one CIE read (length fields included).
pub const MAX_CIE_LEN: usize = 512;
/// Table entries read at once when the search is that narrow.
pub const BLOCK_ENTRIES: u32 = 128;
/// The search-tree nodes whose probes a caller may keep ([`Index::find`]):
/// the first 5 levels.
pub const PROBE_MEMO: usize = 32;
/// The most rows kept for one function; a function with more has none.
pub const MAX_FN_ROWS: usize = 2048;
/// The scratch bytes a lookup may need: the final block, or a CIE and an
/// FDE side by side.
pub const SCRATCH_LEN: usize = MAX_CIE_LEN + MAX_FDE_LEN;
/// Buffers enough for nearly every function (2 KiB of scratch, 64
/// rows): a caller tries them first, and the full sizes on
/// [`LookupError::Short`].
pub const SMALL_SCRATCH_LEN: usize = 2048;
/// See [`SMALL_SCRATCH_LEN`].
pub const SMALL_ROWS: usize = 64;
/// The most steps of one lookup: probes, the block's entries, and one
/// per byte of CFA program (each instruction is at least one byte).
#[cfg_attr(not(test), allow(dead_code))] // The bound the host tests check.
pub const MAX_STEPS: u64 = MAX_PROBES + BLOCK_ENTRIES as u64 + (MAX_CIE_LEN + MAX_FDE_LEN) as u64;

// The final block and a CIE must fit the small scratch.
const _: () = assert!(BLOCK_ENTRIES as usize * ENTRY_LEN <= SMALL_SCRATCH_LEN);
const _: () = assert!(MAX_CIE_LEN < SMALL_SCRATCH_LEN);

/// Where a lookup reads the file's bytes, by link-time address.
pub trait Source {
    /// Fills `buf` with the bytes at link-time address `addr`; false if
    /// they cannot be read (not in the file, or an I/O error).
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool;
}

/// Why a lookup gave no rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LookupError {
    /// A read failed: not cached, tried again next time.
    Read,
    /// No FDE covers the PC (before the first, in a gap, or after the
    /// last function).
    NotFound,
    /// The FDE is malformed, too long, or not where the table says.
    Fde,
    /// Its CIE is unusable.
    Cie,
    /// The FDE's `pc_begin` is not the table's location.
    Lying,
    /// The CFA program is malformed.
    Program,
    /// More than [`MAX_FN_ROWS`] rows, or a function of 4 GiB or more.
    TooBig,
    /// The caller's buffers are smaller than [`SCRATCH_LEN`] bytes or
    /// [`MAX_FN_ROWS`] rows and this function needs more: try again with
    /// those.
    Short,
}

/// The searchable part of a header: where its table is and how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Index {
    /// The header's link-time address (the table's `datarel` base).
    pub hdr_addr: u64,
    /// The link-time address of the table's first entry.
    pub table_addr: u64,
    /// The number of entries.
    pub fde_count: u32,
    /// The link-time address of `.eh_frame`.
    pub eh_frame_addr: u64,
}

impl Index {
    /// The index of the header whose first bytes are `head_bytes` (at
    /// least the fixed part: 4 bytes and two encoded values), loaded at
    /// `hdr_addr`, `hdr_len` bytes long: the table must fit in it.
    pub fn parse(head_bytes: &[u8], hdr_addr: u64, hdr_len: u64) -> Result<Self, EhError> {
        let (info, at) = head(head_bytes, hdr_addr)?;
        let end = (info.fde_count as u64)
            .checked_mul(ENTRY_LEN as u64)
            .and_then(|n| n.checked_add(at as u64))
            .ok_or(EhError::Truncated)?;
        if end > hdr_len {
            return Err(EhError::Truncated);
        }
        Ok(Index {
            hdr_addr,
            table_addr: hdr_addr.wrapping_add(at as u64),
            fde_count: info.fde_count,
            eh_frame_addr: info.eh_frame_addr,
        })
    }

    fn entry_addr(&self, i: u32) -> u64 {
        self.table_addr
            .wrapping_add((i as u64).wrapping_mul(ENTRY_LEN as u64))
    }

    /// The last entry whose location is at or below `pc`: (location,
    /// FDE address, the next entry's location if the search read it).
    /// The bounded search of [`sorted::find`]: at most [`MAX_PROBES`]
    /// reads of one entry, then one of at most [`BLOCK_ENTRIES`]; `steps`
    /// counts entries read; `memo` (of at most [`PROBE_MEMO`] entries,
    /// kept by the caller for this index and empty at first) keeps the
    /// first levels' probes.
    pub fn find<S: Source>(
        &self,
        src: &mut S,
        pc: u64,
        scratch: &mut [u8],
        steps: &mut u64,
        memo: &mut [Option<(u64, u64)>],
    ) -> Result<(u64, u64, Option<u64>), LookupError> {
        let keep = memo.len().min(PROBE_MEMO);
        let memo = &mut memo[..keep];
        let mut table = Table { idx: self, src };
        let hit = sorted::find(&mut table, pc, scratch, steps, memo)?;
        hit.map(|h| (h.key, h.value, h.next))
            .ok_or(LookupError::NotFound)
    }
}

/// The header's table as a [`Sorted`] array: entries of (location, FDE
/// address), read from `src`.
struct Table<'a, S> {
    idx: &'a Index,
    src: &'a mut S,
}

impl<S: Source> Sorted for Table<'_, S> {
    type Error = LookupError;

    fn count(&self) -> u32 {
        self.idx.fde_count
    }

    fn entry_len(&self) -> usize {
        ENTRY_LEN
    }

    fn block(&self) -> u32 {
        BLOCK_ENTRIES
    }

    fn read(&mut self, first: u32, buf: &mut [u8]) -> Result<(), LookupError> {
        match self.src.read(self.idx.entry_addr(first), buf) {
            true => Ok(()),
            false => Err(LookupError::Read),
        }
    }

    fn decode(&self, _i: u32, entry: &[u8]) -> Result<(u64, u64), LookupError> {
        decode_entry(entry, self.idx.hdr_addr).ok_or(LookupError::Read)
    }

    fn unusable(&self) -> LookupError {
        LookupError::Read
    }
}

/// The rules of a function from `off` bytes after its start on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FnRow {
    /// The offset from the function's start.
    pub off: u32,
    /// The rules; `None`: none (frame pointers decide).
    pub row: Option<Row>,
    /// The PLT expression: from byte `n` of each 16-byte block on, the
    /// CFA is 8 more than `row` says (`None`: not a PLT range).
    pub plt: Option<u8>,
}

/// A function a lookup found: `[start, end)` and its rows, the first
/// `rows` of the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Function {
    /// The first address (link-time).
    pub start: u64,
    /// Past the last address.
    pub end: u64,
    /// The rows written.
    pub rows: usize,
}

/// Reads the CIE or FDE at `addr` into `buf`: its length first, then the
/// whole entry if it is at most `max` bytes.  Returns its bytes; `Ok(None)`
/// if it fits `max` but not `buf`.
fn read_entry<'b, S: Source>(
    src: &mut S,
    addr: u64,
    buf: &'b mut [u8],
    max: usize,
) -> Result<Option<&'b [u8]>, ()> {
    let mut len = [0u8; 12];
    // The 4-byte length, and the 8-byte one if it is 0xffffffff.
    if !src.read(addr, &mut len[..4]) {
        return Err(());
    }
    let short = u32::from_le_bytes([len[0], len[1], len[2], len[3]]);
    let total = if short == 0xffff_ffff {
        if !src.read(addr.wrapping_add(4), &mut len[4..12]) {
            return Err(());
        }
        let l: [u8; 8] = len[4..12].try_into().map_err(|_| ())?;
        u64::from_le_bytes(l).checked_add(12)
    } else {
        (short as u64).checked_add(4)
    };
    let total = total
        .and_then(|t| usize::try_from(t).ok())
        .filter(|&t| t <= max)
        .ok_or(())?;
    let Some(out) = buf.get_mut(..total) else {
        return Ok(None);
    };
    if !src.read(addr, out) {
        return Err(());
    }
    Ok(Some(out))
}

/// Appends the rules `st` over `[lo, hi)` of a function at `start`:
/// equal neighbours merge, a later row at the same offset wins.
fn push(
    out: &mut [FnRow],
    n: &mut usize,
    start: u64,
    lo: u64,
    st: &State,
    signal: bool,
) -> Result<(), LookupError> {
    let (row, plt) = match st.cfa {
        CfaState::Reg { reg, off } => (row_of(st, cfa_rule(reg, off), signal), None),
        CfaState::Plt { k, n } => (row_of(st, cfa_rule(7, k as i64), signal), Some(n)),
        CfaState::Other => (None, None),
    };
    let off = u32::try_from(lo.wrapping_sub(start)).map_err(|_| LookupError::TooBig)?;
    let new = FnRow { off, row, plt };
    if let Some(last) = n.checked_sub(1).and_then(|i| out.get_mut(i)) {
        if last.row == row && last.plt == plt {
            return Ok(());
        }
        if last.off == off {
            *last = new;
            return Ok(());
        }
    }
    let full = if out.len() < MAX_FN_ROWS {
        LookupError::Short
    } else {
        LookupError::TooBig
    };
    *out.get_mut(*n).ok_or(full)? = new;
    *n += 1;
    Ok(())
}

/// The rows of the function at `pc`: found in the table, its FDE and CIE
/// read into `scratch` ([`SCRATCH_LEN`] bytes, or at least
/// [`SMALL_SCRATCH_LEN`]), its program run into `out` (at most
/// [`MAX_FN_ROWS`] are used); [`LookupError::Short`] if this function
/// needs more than smaller buffers hold.  `steps` counts the work: at
/// most [`MAX_STEPS`] per call.
///
/// On an error that holds for more than `pc`, `hole` is the range that
/// has no rows for the same reason, so that a caller need not look it up
/// again: a function that fails its checks, up to the next entry's
/// location (or `pc + 1` if the search did not read it); the gap after a
/// function's end.  `memo`: [`Index::find`]'s.
#[allow(clippy::too_many_arguments)]
pub fn lookup<S: Source>(
    idx: &Index,
    src: &mut S,
    pc: u64,
    scratch: &mut [u8],
    out: &mut [FnRow],
    steps: &mut u64,
    hole: &mut Option<(u64, u64)>,
    memo: &mut [Option<(u64, u64)>],
) -> Result<Function, LookupError> {
    *hole = None;
    if scratch.len() < SMALL_SCRATCH_LEN {
        return Err(LookupError::Read);
    }
    let (loc, fde_addr, next) = idx.find(src, pc, scratch, steps, memo)?;
    let limit = next.unwrap_or(pc.saturating_add(1));
    let mut gap = None;
    let r = lookup_at(src, loc, fde_addr, pc, scratch, out, steps, &mut gap);
    match r {
        Err(LookupError::NotFound) => *hole = gap.map(|end| (end, limit)),
        Err(
            LookupError::Fde
            | LookupError::Cie
            | LookupError::Lying
            | LookupError::Program
            | LookupError::TooBig,
        ) => *hole = Some((loc, limit)),
        _ => {}
    }
    r
}

/// [`lookup`] once the table gave the entry at `loc`: `gap` is the
/// function's end if `pc` is past it.
#[allow(clippy::too_many_arguments)]
fn lookup_at<S: Source>(
    src: &mut S,
    loc: u64,
    fde_addr: u64,
    pc: u64,
    scratch: &mut [u8],
    out: &mut [FnRow],
    steps: &mut u64,
    gap: &mut Option<u64>,
) -> Result<Function, LookupError> {
    let (cie_buf, fde_buf) = scratch.split_at_mut(MAX_CIE_LEN);
    let fde_bytes = read_entry(src, fde_addr, fde_buf, MAX_FDE_LEN)
        .map_err(|_| LookupError::Fde)?
        .ok_or(LookupError::Short)?;
    let e = entry(fde_bytes, fde_addr, 0).map_err(|_| LookupError::Fde)?;
    if e.id == 0 {
        return Err(LookupError::Fde);
    }
    // The CIE pointer counts back from its own field.
    let cie_addr = fde_addr
        .wrapping_add(e.id_off as u64)
        .wrapping_sub(e.id as u64);
    let cie_bytes = read_entry(src, cie_addr, cie_buf, MAX_CIE_LEN)
        .ok()
        .flatten()
        .ok_or(LookupError::Cie)?;
    let mut work = 0u64;
    let (cie, base) =
        cie_machine(cie_bytes, cie_addr, 0, &mut work).map_err(|_| LookupError::Cie)?;
    let fde = parse_body(e.body, cie).map_err(|_| LookupError::Fde)?;
    if fde.pc_begin != loc {
        return Err(LookupError::Lying);
    }
    let start = fde.pc_begin;
    let end = start.checked_add(fde.pc_range).ok_or(LookupError::TooBig)?;
    if fde.pc_range > u32::MAX as u64 {
        return Err(LookupError::TooBig);
    }
    if !(start..end).contains(&pc) {
        *gap = Some(end).filter(|&e| e <= pc);
        return Err(LookupError::NotFound);
    }
    let ctx = Ctx::of(&cie, false);
    let mut m = base;
    m.loc = start;
    let signal = cie.signal;
    let mut n = 0usize;
    let out = out.get_mut(..MAX_FN_ROWS.min(out.len())).unwrap_or(&mut []);
    let r = m.run(fde.insns, &ctx, &mut work, |lo, hi, st| {
        if lo.min(end) < hi.min(end) {
            push(out, &mut n, start, lo, st, signal)
        } else {
            Ok(())
        }
    });
    *steps = steps.saturating_add(work);
    match r {
        Ok(()) => {}
        Err(RunError::Sink(e)) => return Err(e),
        Err(RunError::Prog(_)) => return Err(LookupError::Program),
    }
    if m.loc < end {
        let last = m.state;
        push(out, &mut n, start, m.loc, &last, signal)?;
    }
    Ok(Function {
        start,
        end,
        rows: n,
    })
}

/// The rules for `pc` in a function at `start` with `rows`, and whether
/// they change at `pc` (a row or, in a PLT range, a block's rule starts
/// there); `None` before the first row.
pub fn row_at(rows: &[FnRow], start: u64, pc: u64) -> Option<(Option<Row>, bool)> {
    let off = u32::try_from(pc.checked_sub(start)?).ok()?;
    let i = rows.partition_point(|r| r.off <= off).checked_sub(1)?;
    let r = rows.get(i)?;
    let mut starts = r.off == off;
    let row = match (r.row, r.plt) {
        (Some(mut row), Some(n)) => {
            let b = (pc & 15) as u8;
            starts |= b == 0 || b == n;
            if b < n {
                Some(row)
            } else {
                row.cfa.offset.checked_add(8).map(|o| {
                    row.cfa.offset = o;
                    row
                })
            }
        }
        (row, _) => row,
    };
    Some((row, starts))
}
