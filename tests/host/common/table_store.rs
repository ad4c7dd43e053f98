// SPDX-License-Identifier: GPL-2.0

//! The host tests' storage for the unwind-table engine: `Vec`s, as the
//! kernel's `KVVec`s, with an optional cap on the bytes held.

use crate::table::{BuildError, Builder, CfaRule, Reg, Row, Rule, Storage, Table, DEDUP_SLOTS};

/// A table's arrays.
pub struct VecStore {
    pub starts: Vec<u32>,
    pub index: Vec<u16>,
    pub rows: Vec<Row>,
    dedup: Vec<u32>,
    /// The most bytes the arrays may hold.
    pub cap: usize,
    /// Calls of `dedup()`: the builder takes the table once per slot it
    /// probes, and once per slot it writes.
    pub dedup_calls: u64,
}

impl VecStore {
    pub fn new() -> Self {
        Self::with_cap(usize::MAX)
    }

    pub fn with_cap(cap: usize) -> Self {
        VecStore {
            starts: Vec::new(),
            index: Vec::new(),
            rows: Vec::new(),
            dedup: vec![u32::MAX; DEDUP_SLOTS],
            cap,
            dedup_calls: 0,
        }
    }

    #[allow(dead_code)]
    /// Empties the arrays for another build, keeping their memory; the
    /// dedup slots are reset only when rows were added.
    pub fn reset(&mut self) {
        self.starts.clear();
        self.index.clear();
        if !self.rows.is_empty() {
            self.dedup.fill(u32::MAX);
        }
        self.rows.clear();
    }

    fn bytes(&self) -> usize {
        self.starts.len() * 4 + self.index.len() * 2 + self.rows.len() * std::mem::size_of::<Row>()
    }

    pub fn table(&self, base: Option<u64>) -> Table<'_> {
        Table {
            base: base.unwrap_or(0),
            starts: &self.starts,
            index: &self.index,
            rows: &self.rows,
        }
    }
}

impl Storage for VecStore {
    fn push_start(&mut self, off: u32, index: u16) -> Result<(), BuildError> {
        if self.bytes() + 6 > self.cap {
            return Err(BuildError::NoMemory);
        }
        self.starts.push(off);
        self.index.push(index);
        Ok(())
    }
    fn set_last_index(&mut self, index: u16) {
        if let Some(l) = self.index.last_mut() {
            *l = index;
        }
    }
    fn push_row(&mut self, row: Row) -> Result<(), BuildError> {
        if self.bytes() + std::mem::size_of::<Row>() > self.cap {
            return Err(BuildError::NoMemory);
        }
        self.rows.push(row);
        Ok(())
    }
    fn rows(&self) -> &[Row] {
        &self.rows
    }
    fn starts_len(&self) -> usize {
        self.starts.len()
    }
    fn truncate(&mut self, starts: usize, rows: usize) {
        self.starts.truncate(starts);
        self.index.truncate(starts);
        self.rows.truncate(rows);
    }
    fn dedup(&mut self) -> &mut [u32] {
        self.dedup_calls += 1;
        &mut self.dedup
    }
}

/// Builds a table with `f`, which feeds the builder.
pub fn build<E>(
    f: impl FnOnce(&mut Builder<VecStore>) -> Result<(), E>,
) -> Result<(VecStore, Option<u64>), E>
where
    E: From<BuildError>,
{
    let mut b = Builder::new(VecStore::new());
    f(&mut b)?;
    Ok(b.finish()?)
}

/// A CFA of SP + `off`.
#[allow(dead_code)]
pub fn sp(off: i32) -> CfaRule {
    CfaRule {
        reg: Reg::Sp,
        offset: off,
        deref: false,
    }
}

/// A row with CFA `cfa`, RA at CFA - 8 and FP `fp`.
#[allow(dead_code)]
pub fn row(cfa: CfaRule, fp: Option<Rule>) -> Row {
    Row {
        cfa,
        ra: Some(Rule::AtCfa(-8)),
        fp,
        signal: false,
    }
}
