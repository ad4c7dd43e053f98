// SPDX-License-Identifier: GPL-2.0

//! The SFrame cache: what discovery learnt about a file, kept by the
//! file's identity (device, inode number and generation, ctime, mtime,
//! size: [`FileId`]) and shared by every process that maps the file.
//!
//! An entry is either a fully validated section with the file's
//! `PT_LOAD`s (for the bias of each mapping) or negative (the file has no
//! usable SFrame: libc without `.sframe`, a corrupt section), so that a
//! file is read once, not at every frame.  Any write to a file changes its
//! ctime, a replacement its inode: a changed file gets a new key and is
//! read again; the entries of its older versions are dropped then.
//!
//! Memory is capped by the `sframe_cache_kb` module parameter (read at
//! every insertion, so lowering it evicts at the next one); the least
//! recently used entries go first.  Entries are reference counted: a walk
//! that holds one keeps it alive after eviction.  One mutex protects the
//! table; it is never held while a file or user memory is read.

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, Ordering};
use kernel::alloc::{KVVec, KVec};
use kernel::prelude::*;
use kernel::sync::Arc;

use super::elf::Segments;
use crate::glue::shim::{self, FileId};
use crate::glue::stats::{self, Stat};

/// The most entries kept, whatever the cap: lookups scan the table.
const MAX_ENTRIES: usize = 4096;
/// What an entry costs besides its section: the entry, its reference
/// count and allocation slack, counted so that negative entries are not
/// free and the cap bounds their number too.
const ENTRY_OVERHEAD: usize = 256 + core::mem::size_of::<Entry>();

/// A validated section of one file.
pub(crate) struct Sframe {
    /// The file's segments: each mapping's bias comes from them.
    pub(crate) segs: Segments,
    /// `PT_GNU_SFRAME`'s link-time address (the section's base).
    pub(crate) vaddr: u64,
    /// The section's bytes (its header-derived length), validated.
    pub(crate) data: KVVec<u8>,
}

/// What is known about one version of a file.
pub(crate) struct Entry {
    /// The version it was read from.
    pub(crate) id: FileId,
    /// `None`: no usable SFrame in this file (a negative entry).
    pub(crate) sframe: Option<Sframe>,
    /// The cache's clock at the last lookup that found it (LRU).
    last_used: AtomicU64,
}

impl Entry {
    pub(crate) fn new(id: FileId, sframe: Option<Sframe>) -> Self {
        Self {
            id,
            sframe,
            last_used: AtomicU64::new(0),
        }
    }

    /// The bytes this entry counts against the cap.
    fn cost(&self) -> usize {
        ENTRY_OVERHEAD + self.sframe.as_ref().map_or(0, |s| s.data.len())
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

/// The cap in bytes; 0 turns SFrame off (frame pointers only).
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
/// cap.  An entry larger than the cap is not cached (its walk still uses
/// it); when another task cached the same version meanwhile, that one
/// stays.
pub(crate) fn insert(entry: &Arc<Entry>) {
    let cap = cap();
    let cost = entry.cost();
    if cost > cap {
        return;
    }
    let mut l = Locked::new();
    let c = l.cache();
    let mut free = None;
    for i in 0..c.slots.len() {
        match &c.slots[i] {
            None => free = free.or(Some(i)),
            Some(e) if e.id == entry.id => return,
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
    c.slots = KVec::new();
    c.bytes = 0;
    stats::set(Stat::SframeBytes, 0);
}
