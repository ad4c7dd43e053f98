// SPDX-License-Identifier: GPL-2.0

//! [`Table`]: a compiled unwind table.  Entry `i` says that from link-time
//! address `base + starts[i]` up to the next entry's, the rules are
//! `rows[index[i]]` ([`NO_ROW`]: none).  Before the first entry and from
//! the last one on there are no rules (the builder ends every function).
//!
//! A lookup is one binary search of `starts` (at most 33 probes, whatever
//! the arrays hold) and one read of a row: no format is parsed.  The
//! arrays are only read with checked indexing, so a table built wrongly
//! gives wrong rows, never a panic.

use super::row::Row;

/// The row index of "no rules here".
pub const NO_ROW: u16 = u16::MAX;

/// A view of a compiled table's arrays.
#[derive(Clone, Copy, Debug)]
pub struct Table<'a> {
    /// The link-time address of offset 0.
    pub base: u64,
    /// Sorted PC offsets from `base`, one per entry.
    pub starts: &'a [u32],
    /// Each entry's row index, or [`NO_ROW`].
    pub index: &'a [u16],
    /// The distinct rows.
    pub rows: &'a [Row],
}

impl Table<'_> {
    /// The rules for `pc` (a link-time address), if any.  The module
    /// looks up indices (its row memo keeps them); the host tests rows.
    #[cfg(test)]
    #[inline]
    pub fn lookup(&self, pc: u64) -> Option<Row> {
        self.row(self.lookup_entry(pc)?.0?)
    }

    /// [`Table::lookup_span`] without the span (the host tests').
    #[cfg(test)]
    #[inline]
    pub fn lookup_entry(&self, pc: u64) -> Option<(Option<u16>, bool)> {
        let (i, starts, _) = self.lookup_span(pc)?;
        Some((i, starts))
    }

    /// The index of the rules for `pc` (`None`: no rules), whether an
    /// entry starts exactly at `pc` (the rules change there: a function
    /// may start there, or one end), and the link-time addresses
    /// `[lo, hi)` of that entry: every PC there has the same rules, which
    /// change only at `lo` (empty for the last entry, which has none).
    /// `None` outside the table.
    #[inline]
    pub fn lookup_span(&self, pc: u64) -> Option<(Option<u16>, bool, (u64, u64))> {
        let off = u32::try_from(pc.checked_sub(self.base)?).ok()?;
        // The number of entries starting at or before `off`.
        let n = self.starts.partition_point(|&s| s <= off);
        let at = n.checked_sub(1)?;
        let i = *self.index.get(at)?;
        let lo = *self.starts.get(at)?;
        let hi = self.starts.get(n).map_or(lo, |&h| h.max(lo));
        // `lo <= off`: no overflow there; `hi` saturates.
        let span = (
            self.base + u64::from(lo),
            self.base.saturating_add(u64::from(hi)),
        );
        Some(((i != NO_ROW).then_some(i), lo == off, span))
    }

    /// The row of index `i`.
    #[inline]
    pub fn row(&self, i: u16) -> Option<Row> {
        self.rows.get(i as usize).copied()
    }
}
