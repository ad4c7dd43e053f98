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
//!
//! Two levels, so that the cap bounds what memos hold: an [`Entry`] is a
//! small shell (identity, segments) that a task's memo may keep between
//! walks; its [`Tables`] are held by the cache and, for the length of one
//! walk, by each walk that pinned them ([`Entry::pin`]).  Eviction takes
//! the tables out of the shell: they are freed when the last walk using
//! them ends, in that walk's task context, and a memo that finds its
//! shell empty looks the file up again.  So the bytes held
//! (`table_bytes_held` in debugfs) are at most the cap plus the tables
//! of the walks in progress.  One mutex protects the cache; it is never
//! held while a file or user memory is read.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::alloc::{KVVec, KVec};
use kernel::prelude::*;
use kernel::sync::{Arc, SpinLock};
use kernel::{new_spinlock, pin_init};

use super::elf::Segments;
use super::ffi::{self, FileId};
use super::lru::{Link, Lru};
use super::table::{BuildError, Row, Storage, Table, DEDUP_SLOTS};
use super::table_fns::Functions;
use crate::sys::stats::{self, Gauge, Stat};

/// The most entries kept, whatever the cap: lookups scan the table.
const MAX_ENTRIES: usize = 4096;
/// What an entry costs besides its section: the entry, its reference
/// count and allocation slack, counted so that negative entries are not
/// free and the cap bounds their number too.
const ENTRY_OVERHEAD: usize = 256 + core::mem::size_of::<Entry>() + core::mem::size_of::<Tables>();

/// Which format a table was compiled from.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    SFrame,
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
    /// A table with no entry: a file whose `.eh_frame` is looked up by
    /// function has only its [`Tables::fns`].
    pub(crate) fn empty(kind: Kind) -> Self {
        Compiled {
            kind,
            base: 0,
            starts: KVVec::new(),
            index: KVVec::new(),
            rows: KVVec::new(),
        }
    }

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

    fn starts_len(&self) -> usize {
        self.starts.len()
    }

    fn truncate(&mut self, starts: usize, rows: usize) {
        // SAFETY: Each length only shrinks (`min`), and the elements are
        // plain `Copy` data: nothing to drop, nothing left uninitialized.
        unsafe {
            self.starts.set_len(starts.min(self.starts.len()));
            self.index.set_len(starts.min(self.index.len()));
            self.rows.set_len(rows.min(self.rows.len()));
        }
    }

    fn dedup(&mut self) -> &mut [u32] {
        &mut self.dedup
    }
}

/// The compiled tables of one version of a file.
pub(crate) struct Tables {
    /// From its SFrame, or its `.eh_frame`.
    pub(crate) table: Compiled,
    /// The file's `.eh_frame` table when `table` is its SFrame: for the
    /// PCs SFrame does not describe (per frame: SFrame, `.eh_frame`,
    /// frame pointers).
    pub(crate) fallback: Option<Compiled>,
    /// The file's `.eh_frame` looked up by function, where it is too
    /// large to compile whole (`table_fns.rs`): for the PCs the tables
    /// above do not describe.
    pub(crate) fns: Option<Arc<Functions>>,
}

impl Tables {
    /// The table (0) or the fallback (1).
    #[inline]
    pub(crate) fn compiled(&self, which: u8) -> Option<&Compiled> {
        if which == 0 {
            Some(&self.table)
        } else {
            self.fallback.as_ref()
        }
    }

    /// The bytes its arrays were allocated.
    fn bytes(&self) -> usize {
        self.table.bytes() + self.fallback.as_ref().map_or(0, |t| t.bytes())
    }

    /// What it holds now: its arrays, and the functions looked up.
    pub(crate) fn held(&self) -> usize {
        self.bytes() + self.fns.as_ref().map_or(0, |f| f.held())
    }
}

impl Drop for Tables {
    fn drop(&mut self) {
        stats::shrink(Gauge::TableBytesHeld, self.bytes() as u64);
    }
}

/// What is known about one version of a file.
#[pin_data]
pub(crate) struct Entry {
    /// The version it was read from.
    pub(crate) id: FileId,
    /// The file's segments: each mapping's bias comes from them.
    pub(crate) segs: Segments,
    /// False for a negative entry: no usable table in this file.
    pub(crate) usable: bool,
    /// The tables until the cache lets go of the entry (see the module
    /// documentation); dropped outside the lock, which only guards the
    /// reference count's increment against eviction's take.
    #[pin]
    tables: SpinLock<Option<Arc<Tables>>>,
    /// What it counts against the cap: `ENTRY_OVERHEAD` plus what its
    /// tables held when last charged (`new()`, `recharge()`).  Written
    /// under the cache's mutex.
    cost: AtomicUsize,
}

impl Entry {
    /// A new entry, with its tables if the file has usable ones, charged
    /// to the current task's memory cgroup.
    pub(crate) fn new(id: FileId, segs: Segments, tables: Option<Tables>) -> Result<Arc<Self>> {
        let (tables, bytes) = match tables {
            Some(t) => {
                let bytes = t.held();
                let t = Arc::new(t, GFP_KERNEL_ACCOUNT)?;
                // Functions count their own (`table_fns.rs`).
                stats::grow(Gauge::TableBytesHeld, t.bytes() as u64);
                (Some(t), bytes)
            }
            None => (None, 0),
        };
        let cost = ENTRY_OVERHEAD + bytes;
        let usable = tables.is_some();
        Arc::pin_init(
            pin_init!(Self {
                id,
                segs,
                usable,
                tables <- new_spinlock!(tables, "unwind_rs_tables"),
                cost: AtomicUsize::new(cost),
            }),
            GFP_KERNEL_ACCOUNT,
        )
    }

    /// The tables for one walk, `None` once the cache let go of them (or
    /// for a negative entry).  The walk drops its pin when it ends, in
    /// task context: the last pin frees the tables.
    #[inline]
    pub(crate) fn pin(&self) -> Option<Arc<Tables>> {
        self.tables.lock().clone()
    }

    /// Lets go of the tables: a walk that pinned them keeps them until it
    /// ends.  May free them: task context, no spinlock held.
    fn evict(&self) {
        let t = self.tables.lock().take();
        drop(t);
    }
}

/// The table: slots that are `None` are free.
///
/// # Invariants
///
/// `links` is as long as `slots`, and `used` holds exactly the taken
/// slots, least recently used first.
struct Cache {
    slots: KVec<Option<Arc<Entry>>>,
    links: KVec<Link>,
    used: Lru,
    bytes: usize,
}

impl Cache {
    /// Drops slot `i`'s entry (a walk may still hold it).
    fn remove(&mut self, i: usize) {
        if let Some(e) = self.slots.get_mut(i).and_then(|s| s.take()) {
            self.used.remove(&mut self.links, i);
            e.evict();
            self.bytes = self.bytes.saturating_sub(e.cost.load(Ordering::Relaxed));
        }
    }

    /// Evicts the least recently used entries until `more` bytes fit
    /// under `cap`, each in O(1); returns a slot it freed.
    fn trim(&mut self, cap: usize, more: usize) -> Option<usize> {
        let mut free = None;
        while self.bytes + more > cap {
            let Some(i) = self.used.oldest() else { break };
            self.remove(i);
            free = free.or(Some(i));
            stats::inc(Stat::TableEvictions);
        }
        stats::set(Gauge::TableCacheBytes, self.bytes as u64);
        free
    }

    /// The slot of the entry for this version of a file.
    fn find(&self, id: &FileId) -> Option<usize> {
        self.slots
            .iter()
            .position(|e| e.as_ref().is_some_and(|e| e.id == *id))
    }

    /// A lookup used slot `i`: it goes last in eviction order.
    fn touch(&mut self, i: usize) {
        self.used.touch(&mut self.links, i);
    }

    /// Puts `entry` in slot `i` (free), or in a new slot at the end.
    fn place(&mut self, i: Option<usize>, entry: &Arc<Entry>) -> Result {
        let i = match i {
            Some(i) => i,
            None => {
                // Links first: when the slot's push fails, the spare link
                // is used by the next push instead of growing again.
                if self.links.len() == self.slots.len() {
                    self.links.push(Link::OFF, GFP_KERNEL)?;
                }
                self.slots.push(None, GFP_KERNEL)?;
                self.slots.len() - 1
            }
        };
        let slot = self.slots.get_mut(i).ok_or(EINVAL)?;
        *slot = Some(entry.clone());
        self.used.push(&mut self.links, i);
        Ok(())
    }
}

struct Global(UnsafeCell<Cache>);

// SAFETY: The cache is only reached through `Locked`, which holds the
// mutex.
unsafe impl Sync for Global {}

static CACHE: Global = Global(UnsafeCell::new(Cache {
    slots: KVec::new(),
    links: KVec::new(),
    used: Lru::new(),
    bytes: 0,
}));

/// The cache's mutex, held for the guard's lifetime.
struct Locked;

impl Locked {
    fn new() -> Self {
        // SAFETY: A plain mutex; every path unlocks it in `drop()`.  All
        // callers run in task context (discovery, unload).
        unsafe { ffi::unwind_rs_table_cache_lock() };
        Self
    }

    fn try_new() -> Option<Self> {
        // SAFETY: As `new()`, if it takes the mutex.
        let taken = unsafe { ffi::unwind_rs_table_cache_trylock() };
        // Not `then_some(Self)`: that builds the guard before the test, and
        // dropping it when the mutex was not taken would unlock another's.
        if taken {
            Some(Self)
        } else {
            None
        }
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
        unsafe { ffi::unwind_rs_table_cache_unlock() };
    }
}

/// The cap in bytes; 0 turns tables off (frame pointers only).
pub(crate) fn cap() -> usize {
    // SAFETY: Reads a module parameter.
    let kb = unsafe { ffi::unwind_rs_table_cache_kb() };
    (kb as usize).saturating_mul(1024)
}

/// The entry of this version of a file, if cached; with `try_only`, also
/// `None` if the cache's lock is taken (a walk that must not wait).
pub(crate) fn get(id: &FileId, try_only: bool) -> Option<Arc<Entry>> {
    let mut l = if try_only {
        let Some(l) = Locked::try_new() else {
            stats::inc(Stat::TableLockBusy);
            return None;
        };
        l
    } else {
        Locked::new()
    };
    let c = l.cache();
    let i = c.find(id)?;
    c.touch(i);
    stats::inc(Stat::TableHits);
    c.slots.get(i)?.clone()
}

/// Caches `entry`, evicting the least recently used entries down to the
/// cap.  An entry larger than the cap is not cached, and evicted at once
/// (the walk that read it pinned its tables first); when another task
/// cached the same version meanwhile, that one stays and is returned, so
/// that walks share one set of functions.
pub(crate) fn insert(entry: &Arc<Entry>) -> Option<Arc<Entry>> {
    let cap = cap();
    let cost = entry.cost.load(Ordering::Relaxed);
    let mut l = Locked::new();
    let c = l.cache();
    if cost > cap {
        entry.evict();
        // A lowered cap still holds from this insertion on.
        c.trim(cap, 0);
        return None;
    }
    let mut free = None;
    for i in 0..c.slots.len() {
        match &c.slots[i] {
            None => free = free.or(Some(i)),
            Some(e) if e.id == entry.id => {
                entry.evict();
                return Some(e.clone());
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
    free = c.trim(cap, cost).or(free);
    if free.is_none() && c.slots.len() >= MAX_ENTRIES {
        free = c.used.oldest();
        if let Some(i) = free {
            c.remove(i);
            stats::inc(Stat::TableEvictions);
        }
    }
    if c.place(free, entry).is_err() {
        entry.evict();
        return None;
    }
    c.bytes += cost;
    stats::set(Gauge::TableCacheBytes, c.bytes as u64);
    None
}

/// Charges `entry` what its tables hold now (`held`: its functions
/// grew or were evicted) and evicts the least recently used entries down
/// to the cap, this one included if need be (the walk that grew it keeps
/// its pin).  Task context that may sleep.
pub(crate) fn recharge(entry: &Entry, held: usize) {
    let cap = cap();
    let cost = ENTRY_OVERHEAD + held;
    let mut l = Locked::new();
    let c = l.cache();
    let Some(i) = c.slots.iter().position(|e| {
        e.as_ref()
            .is_some_and(|e| core::ptr::eq::<Entry>(&**e, entry))
    }) else {
        // Evicted meanwhile: it counts no more.
        return;
    };
    let Some(Some(e)) = c.slots.get(i) else {
        return;
    };
    let old = e.cost.swap(cost, Ordering::Relaxed);
    c.touch(i);
    c.bytes = c.bytes.saturating_sub(old) + cost;
    c.trim(cap, 0);
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
    c.links = KVec::new();
    c.used = Lru::new();
    c.bytes = 0;
    stats::set(Gauge::TableCacheBytes, 0);
}
