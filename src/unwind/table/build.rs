// SPDX-License-Identifier: GPL-2.0

//! [`Builder`]: compiles rows, given in increasing PC order, into a
//! [`super::Table`]'s arrays.
//!
//! A format's compiler calls [`Builder::row`] for each PC at which the
//! rules change and [`Builder::end`] at each function's end; the builder
//! stores a start only where the row differs from the one before (so a
//! run of equal rows is one entry), a [`NO_ROW`] entry where a gap
//! between functions begins, and each distinct row once (an
//! open-addressed table of [`DEDUP_SLOTS`] finds equal rows).
//!
//! Work: a call probes at most [`DEDUP_PROBES`] slots of that table, and
//! [`Builder::rollback`] as many per row it takes back (each row was
//! pushed by one call), whatever the rows.  The hash is fixed, so a file
//! can aim its rows at one slot: a row that finds neither its equal nor
//! a free slot within the limit is stored again instead (dedup only
//! saves memory).  Work and memory are linear in the number of calls;
//! every limit is an error, never a panic.

use super::row::{CfaRule, Reg, Row, Rule};
use super::table::NO_ROW;

/// The most distinct rows of one table (`u16` indices, one for
/// [`NO_ROW`]).
pub const MAX_ROWS: usize = NO_ROW as usize;
/// The dedup table's slots: a power of two above [`MAX_ROWS`].
pub const DEDUP_SLOTS: usize = 1 << 17;
/// The most dedup slots one row probes.  The table is at most half full,
/// so rows not aimed at it rarely probe more than a few.
pub const DEDUP_PROBES: usize = 32;

/// Why a table could not be built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildError {
    /// A PC below the previous one, or inside the previous function.
    NotSorted,
    /// The table spans 4 GiB or more (offsets are `u32`).
    TooWide,
    /// More than [`MAX_ROWS`] distinct rows.
    TooManyRows,
    /// The storage could not grow (no memory, or over its cap).
    NoMemory,
}

/// Where a table's arrays live while it is built.
pub trait Storage {
    /// Appends an entry: a PC offset from the base and its row index.
    fn push_start(&mut self, off: u32, index: u16) -> Result<(), BuildError>;
    /// Overwrites the last entry's row index.
    fn set_last_index(&mut self, index: u16);
    /// Appends a distinct row.
    fn push_row(&mut self, row: Row) -> Result<(), BuildError>;
    /// The rows pushed so far.
    fn rows(&self) -> &[Row];
    /// The number of entries pushed so far.
    fn starts_len(&self) -> usize;
    /// Keeps only the first `starts` entries and `rows` rows (never
    /// more than there are): [`Builder::rollback`].
    fn truncate(&mut self, starts: usize, rows: usize);
    /// [`DEDUP_SLOTS`] slots, all `u32::MAX` (free) at first: the
    /// builder's scratch space (a row index per used slot).
    fn dedup(&mut self) -> &mut [u32];
}

/// A builder's state between two calls, to go back to: [`Builder::mark`].
#[derive(Clone, Copy)]
pub struct Mark {
    starts: usize,
    rows: usize,
    base: Option<u64>,
    last: Option<(u32, u16)>,
    end: Option<u32>,
}

/// Builds one table into `S`.
pub struct Builder<S: Storage> {
    store: S,
    /// The link-time address of offset 0: the first PC given.
    base: Option<u64>,
    /// The offset and row index of the last entry.
    last: Option<(u32, u16)>,
    /// The end of the last function, where a gap entry is due unless the
    /// next function starts there.
    end: Option<u32>,
    /// Calls of [`Builder::row`] and [`Builder::end`], never taken back.
    calls: u64,
}

impl<S: Storage> Builder<S> {
    /// A builder into `store`, whose arrays must be empty.
    pub fn new(store: S) -> Self {
        Self {
            store,
            base: None,
            last: None,
            end: None,
            calls: 0,
        }
    }

    /// The calls of [`Builder::row`] and [`Builder::end`] so far: the
    /// measure of a compiler's work that the host tests bound.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn calls(&self) -> u64 {
        self.calls
    }

    fn offset(&mut self, pc: u64) -> Result<u32, BuildError> {
        let base = *self.base.get_or_insert(pc);
        let off = pc.checked_sub(base).ok_or(BuildError::NotSorted)?;
        u32::try_from(off).map_err(|_| BuildError::TooWide)
    }

    /// From `pc` on (a link-time address), the rules are `row`; `None`:
    /// no rules (frame pointers, or the next unwinder, decide).  PCs
    /// must not decrease, nor fall inside a function already ended.
    pub fn row(&mut self, pc: u64, row: Option<Row>) -> Result<(), BuildError> {
        self.calls = self.calls.saturating_add(1);
        let off = self.offset(pc)?;
        if let Some(end) = self.end.take() {
            if off < end {
                return Err(BuildError::NotSorted);
            }
            if off > end {
                self.push(end, NO_ROW)?;
            }
        }
        let index = match row {
            Some(r) => self.intern(r)?,
            None => NO_ROW,
        };
        self.push(off, index)
    }

    /// The function whose rows were given last ends at `end` (exclusive):
    /// from there on, no rules until the next row.
    pub fn end(&mut self, end: u64) -> Result<(), BuildError> {
        self.calls = self.calls.saturating_add(1);
        let off = self.offset(end)?;
        if let Some((last, _)) = self.last {
            if off < last {
                return Err(BuildError::NotSorted);
            }
        }
        self.end = Some(off);
        Ok(())
    }

    /// The state now, for [`Builder::rollback`].
    pub fn mark(&self) -> Mark {
        Mark {
            starts: self.store.starts_len(),
            rows: self.store.rows().len(),
            base: self.base,
            last: self.last,
            end: self.end,
        }
    }

    /// Takes back every call since `m` was marked: a function whose rules
    /// turn out bad part way leaves nothing behind.  The rows interned
    /// since leave the dedup table newest first, which restores it
    /// exactly: with linear probing, no row interned before them ever
    /// probed past their slots.  A row stored without a slot
    /// ([`Builder::intern`]) is not found within the probe limit, and
    /// has none to give back.
    pub fn rollback(&mut self, m: Mark) {
        let mask = DEDUP_SLOTS - 1;
        for n in (m.rows..self.store.rows().len()).rev() {
            let Some(&row) = self.store.rows().get(n) else {
                continue;
            };
            let mut slot = (hash(&row) as usize) & mask;
            for _ in 0..DEDUP_PROBES {
                let d = self.store.dedup();
                if d[slot] == n as u32 {
                    d[slot] = u32::MAX;
                    break;
                }
                slot = (slot + 1) & mask;
            }
        }
        self.store.truncate(m.starts, m.rows);
        self.base = m.base;
        self.last = m.last;
        self.end = m.end;
    }

    /// Ends the table; returns the storage and the base address (`None`:
    /// no row was given, an empty table).
    pub fn finish(mut self) -> Result<(S, Option<u64>), BuildError> {
        if let Some(end) = self.end.take() {
            self.push(end, NO_ROW)?;
        }
        Ok((self.store, self.base))
    }

    fn push(&mut self, off: u32, index: u16) -> Result<(), BuildError> {
        match self.last {
            // The same PC again: the later rules win.
            Some((last, _)) if last == off => {
                self.store.set_last_index(index);
                self.last = Some((off, index));
                return Ok(());
            }
            Some((last, _)) if off < last => return Err(BuildError::NotSorted),
            // The same rules as before: nothing changes at `off`.
            Some((_, prev)) if prev == index => return Ok(()),
            None if index == NO_ROW => return Ok(()),
            _ => {}
        }
        self.store.push_start(off, index)?;
        self.last = Some((off, index));
        Ok(())
    }

    /// The index of `row` among the rows, added if not found within
    /// [`DEDUP_PROBES`] slots; without a slot if none of them is free
    /// (an equal row given later is then stored again).
    fn intern(&mut self, row: Row) -> Result<u16, BuildError> {
        let mask = DEDUP_SLOTS - 1;
        let mut slot = (hash(&row) as usize) & mask;
        let mut free = None;
        for _ in 0..DEDUP_PROBES {
            let v = self.store.dedup()[slot];
            if v == u32::MAX {
                free = Some(slot);
                break;
            }
            if self.store.rows().get(v as usize) == Some(&row) {
                return Ok(v as u16);
            }
            slot = (slot + 1) & mask;
        }
        let n = self.store.rows().len();
        if n >= MAX_ROWS {
            return Err(BuildError::TooManyRows);
        }
        self.store.push_row(row)?;
        if let Some(slot) = free {
            self.store.dedup()[slot] = n as u32;
        }
        Ok(n as u16)
    }
}

fn reg_bits(r: Reg) -> u64 {
    match r {
        Reg::Sp => 0x100,
        Reg::Fp => 0x200,
        Reg::Dwarf(n) => n as u64,
    }
}

fn rule_bits(r: Option<Rule>) -> u64 {
    match r {
        None => 0,
        Some(Rule::AtCfa(o)) => 1 | ((o as u32 as u64) << 8),
        Some(Rule::Reg { reg, offset, deref }) => {
            2 | ((deref as u64) << 2) | (reg_bits(reg) << 3) | ((offset as u32 as u64) << 16)
        }
    }
}

/// A 64-bit hash of a row (for the dedup table only).
pub fn hash(row: &Row) -> u64 {
    let CfaRule { reg, offset, deref } = row.cfa;
    let mut h = reg_bits(reg) ^ ((offset as u32 as u64) << 12) ^ ((deref as u64) << 44);
    h ^= row.signal as u64;
    for v in [rule_bits(row.ra), rule_bits(row.fp)] {
        h = (h ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        h ^= h >> 29;
    }
    h
}
