// SPDX-License-Identifier: GPL-2.0

//! The unwind-table cache: what discovery learnt about a file, kept by
//! the file's identity (device, inode number and generation, ctime,
//! mtime, size: [`FileId`]) and shared by every process that maps the
//! file.
//!
//! An entry is either a compiled table ([`Compiled`], from the file's
//! SFrame or `.eh_frame`) with the file's `PT_LOAD`s (for the bias of
//! each mapping) or negative (no usable section: a corrupt one, or none),
//! so that a file is read once, not at every frame.  Only the compiled
//! form is kept, never a section's bytes.  Any write to a file changes its
//! ctime, a replacement its inode: a changed file gets a new key and is
//! read again; the entries of its older versions are dropped then.
//!
//! Memory is capped by the `table_cache_kb` module parameter (also
//! `sframe_cache_kb`, its old name; read at every insertion, so lowering
//! it evicts at the next one); the least recently used entries go first.
//! An entry's cost is what its arrays were allocated, charged to the
//! memory cgroup of the task that read the file (`GFP_KERNEL_ACCOUNT`).
//! An evicted entry is marked, so that a walk's memo drops it at its next
//! use instead of keeping it.  Entries are reference counted: a walk
//! that holds one keeps it alive after eviction.  One mutex protects the
//! table; it is never held while a file or user memory is read.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::alloc::{KVVec, KVec};
use kernel::prelude::*;
use kernel::sync::Arc;

use super::elf::Segments;
use super::table::{BuildError, Row, Storage, Table, DEDUP_SLOTS};
use crate::glue::shim::{self, FileId};
use crate::glue::stats::{self, Stat};

/// The most entries kept, whatever the cap: lookups scan the table.
const MAX_ENTRIES: usize = 4096;
/// What an entry costs besides its section: the entry, its reference
/// count and allocation slack, counted so that negative entries are not
/// free and the cap bounds their number too.
const ENTRY_OVERHEAD: usize = 256 + core::mem::size_of::<Entry>();

/// Which format a table was compiled from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Sframe,
    EhFrame,
}

/// The compiled unwind table of one file.
pub(crate) struct Compiled {
    pub(crate) kind: Kind,
    base: u64,
    starts: KVVec<u32>,
    index: KVVec<u16>,
    rows: KVVec<Row>,
}

impl Compiled {
    /// The table, to look PCs up in.
    #[inline]
    pub(crate) fn table(&self) -> Table<'_> {
        Table {
            base: self.base,
            starts: &self.starts,
            index: &self.index,
            rows: &self.rows,
        }
    }

    /// The bytes its arrays were allocated.
    fn bytes(&self) -> usize {
        self.starts.capacity() * 4
            + self.index.capacity() * 2
            + self.rows.capacity() * core::mem::size_of::<Row>()
    }
}

/// A table's arrays while it is built, allocated with
/// `GFP_KERNEL_ACCOUNT` and never more than `cap` bytes in all.
pub(crate) struct Store {
    starts: KVVec<u32>,
    index: KVVec<u16>,
    rows: KVVec<Row>,
    dedup: KVVec<u32>,
    cap: usize,
}

impl Store {
    /// Empty arrays, at most `cap` bytes (the dedup scratch is not
    /// counted: it is freed when the table is done).
    pub(crate) fn new(cap: usize) -> Result<Self> {
        Ok(Self {
            starts: KVVec::new(),
            index: KVVec::new(),
            rows: KVVec::new(),
            dedup: KVVec::from_elem(u32::MAX, DEDUP_SLOTS, GFP_KERNEL_ACCOUNT)?,
            cap,
        })
    }

    fn bytes_after(&self, starts: usize, rows: usize) -> usize {
        let grow = |cap: usize, len: usize, more: usize| {
            if len + more > cap {
                (len + more).max(cap * 2)
            } else {
                cap
            }
        };
        grow(self.starts.capacity(), self.starts.len(), starts) * 6
            + grow(self.rows.capacity(), self.rows.len(), rows) * core::mem::size_of::<Row>()
    }

    /// The compiled table, `base` from the builder.
    pub(crate) fn finish(self, kind: Kind, base: Option<u64>) -> Compiled {
        Compiled {
            kind,
            base: base.unwrap_or(0),
            starts: self.starts,
            index: self.index,
            rows: self.rows,
        }
    }
}

impl Storage for Store {
    fn push_start(&mut self, off: u32, index: u16) -> core::result::Result<(), BuildError> {
        if self.bytes_after(1, 0) > self.cap {
            return Err(BuildError::NoMemory);
        }
        self.starts
            .push(off, GFP_KERNEL_ACCOUNT)
            .map_err(|_| BuildError::NoMemory)?;
        self.index
            .push(index, GFP_KERNEL_ACCOUNT)
            .map_err(|_| BuildError::NoMemory)
    }

    fn set_last_index(&mut self, index: u16) {
        if let Some(l) = self.index.last_mut() {
            *l = index;
        }
    }

    fn push_row(&mut self, row: Row) -> core::result::Result<(), BuildError> {
        if self.bytes_after(0, 1) > self.cap {
            return Err(BuildError::NoMemory);
        }
        self.rows
            .push(row, GFP_KERNEL_ACCOUNT)
            .map_err(|_| BuildError::NoMemory)
    }

    fn rows(&self) -> &[Row] {
        &self.rows
    }

    fn dedup(&mut self) -> &mut [u32] {
        &mut self.dedup
    }
}

/// What is known about one version of a file.
pub(crate) struct Entry {
    /// The version it was read from.
    pub(crate) id: FileId,
    /// The file's segments: each mapping's bias comes from them.
    pub(crate) segs: Segments,
    /// `None`: no usable table in this file (a negative entry).
    pub(crate) table: Option<Compiled>,
    /// The file's `.eh_frame` table when `table` is its SFrame: for the
    /// PCs SFrame does not describe (per frame: SFrame, `.eh_frame`,
    /// frame pointers).
    pub(crate) fallback: Option<Compiled>,
    /// The cache's clock at the last lookup that found it (LRU).
    last_used: AtomicU64,
    /// Set when the cache lets go of it: a memo that finds it set drops
    /// its reference.
    evicted: AtomicBool,
}

impl Entry {
    pub(crate) fn new(
        id: FileId,
        segs: Segments,
        table: Option<Compiled>,
        fallback: Option<Compiled>,
    ) -> Self {
        Self {
            id,
            segs,
            table,
            fallback,
            last_used: AtomicU64::new(0),
            evicted: AtomicBool::new(false),
        }
    }

    /// The bytes this entry counts against the cap.
    fn cost(&self) -> usize {
        ENTRY_OVERHEAD
            + self.table.as_ref().map_or(0, |t| t.bytes())
            + self.fallback.as_ref().map_or(0, |t| t.bytes())
    }

    /// Whether the cache no longer holds it.
    #[inline]
    pub(crate) fn evicted(&self) -> bool {
        self.evicted.load(Ordering::Relaxed)
    }
}

/// The table: slots that are `None` are free.
struct Cache {
    slots: KVec<Option<Arc<Entry>>>,
    bytes: usize,
    clock: u64,
}

impl Cache {
    /// Drops slot `i`'s entry (a walk may still hold it).
    fn remove(&mut self, i: usize) {
        if let Some(e) = self.slots[i].take() {
            e.evicted.store(true, Ordering::Relaxed);
            self.bytes = self.bytes.saturating_sub(e.cost());
        }
    }

    /// The least recently used entry's slot.
    fn oldest(&self) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|e| (i, e.last_used.load(Ordering::Relaxed))))
            .min_by_key(|&(_, t)| t)
            .map(|(i, _)| i)
    }
}

struct Global(UnsafeCell<Cache>);

// SAFETY: The cache is only reached through `Locked`, which holds the
// mutex.
unsafe impl Sync for Global {}

static CACHE: Global = Global(UnsafeCell::new(Cache {
    slots: KVec::new(),
    bytes: 0,
    clock: 0,
}));

/// The cache's mutex, held for the guard's lifetime.
struct Locked;

impl Locked {
    fn new() -> Self {
        // SAFETY: A plain mutex; every path unlocks it in `drop()`.  All
        // callers run in task context (discovery, unload).
        unsafe { shim::unwind_rs_sframe_lock() };
        Self
    }

    fn cache(&mut self) -> &mut Cache {
        // SAFETY: We hold the mutex, and `&mut self` makes this the only
        // reference through this guard.
        unsafe { &mut *CACHE.0.get() }
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        // SAFETY: Locked in `new()`.
        unsafe { shim::unwind_rs_sframe_unlock() };
    }
}

/// The cap in bytes; 0 turns tables off (frame pointers only).
pub(crate) fn cap() -> usize {
    // SAFETY: Reads a module parameter.
    let kb = unsafe { shim::unwind_rs_sframe_cache_kb() };
    (kb as usize).saturating_mul(1024)
}

/// The entry of this version of a file, if cached.
pub(crate) fn get(id: &FileId) -> Option<Arc<Entry>> {
    let mut l = Locked::new();
    let c = l.cache();
    c.clock += 1;
    let clock = c.clock;
    let e = c.slots.iter().flatten().find(|e| e.id == *id)?;
    e.last_used.store(clock, Ordering::Relaxed);
    stats::inc(Stat::SframeHits);
    Some(e.clone())
}

/// Caches `entry`, evicting the least recently used entries down to the
/// cap.  An entry larger than the cap is not cached, and marked evicted
/// (its walk uses it, no memo keeps it); when another task cached the
/// same version meanwhile, that one stays.
pub(crate) fn insert(entry: &Arc<Entry>) {
    let cap = cap();
    let cost = entry.cost();
    if cost > cap {
        entry.evicted.store(true, Ordering::Relaxed);
        return;
    }
    let mut l = Locked::new();
    let c = l.cache();
    let mut free = None;
    for i in 0..c.slots.len() {
        match &c.slots[i] {
            None => free = free.or(Some(i)),
            Some(e) if e.id == entry.id => {
                entry.evicted.store(true, Ordering::Relaxed);
                return;
            }
            // An older version of the same file: never served again.
            Some(e)
                if e.id.dev == entry.id.dev
                    && e.id.ino == entry.id.ino
                    && e.id.generation == entry.id.generation =>
            {
                c.remove(i);
                free = free.or(Some(i));
            }
            Some(_) => {}
        }
    }
    while c.bytes + cost > cap || (free.is_none() && c.slots.len() >= MAX_ENTRIES) {
        let Some(i) = c.oldest() else { break };
        c.remove(i);
        free = free.or(Some(i));
        stats::inc(Stat::SframeEvictions);
    }
    stats::set(Stat::SframeBytes, c.bytes as u64);
    c.clock += 1;
    entry.last_used.store(c.clock, Ordering::Relaxed);
    match free {
        Some(i) => c.slots[i] = Some(entry.clone()),
        None => {
            if c.slots.push(Some(entry.clone()), GFP_KERNEL).is_err() {
                entry.evicted.store(true, Ordering::Relaxed);
                return;
            }
        }
    }
    c.bytes += cost;
    stats::set(Stat::SframeBytes, c.bytes as u64);
}

/// Empties the cache (unload).  Entries held by a walk live on until it
/// drops them.
pub(crate) fn clear() {
    let mut l = Locked::new();
    let c = l.cache();
    for i in 0..c.slots.len() {
        c.remove(i);
    }
    c.slots = KVec::new();
    c.bytes = 0;
    stats::set(Stat::SframeBytes, 0);
}
