// SPDX-License-Identifier: GPL-2.0

//! The per-task unwind cache: the first walk of a kernel entry is kept and
//! every later request in the same entry reuses it.
//!
//! One page per task, allocated in task context on first use, reset on the
//! way back to user space and freed with the task.  Other CPUs only clear
//! bits of `unwind_completed` (cancel); everything else is the owning
//! task's, reached through a [`Current`].

use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use kernel::prelude::*;

use super::saved_maps::{self, SavedMaps};
use super::{Current, TaskInfo};
use crate::sys::stats::{self, Stat};
use crate::unwind::MapSet;

/// Entries that fit in one page after the header and the memo pointer
/// (509: upstream's 510 less the slot that holds `maps`).
pub(crate) const MAX_ENTRIES: usize = (4096 - 24) / core::mem::size_of::<usize>();

/// Matches `struct unwind_cache` in `include/linux/unwind_deferred_types.h`
/// (`api/exports.c` checks the C side); `walking` sits in its padding.
#[repr(C)]
pub(crate) struct UnwindCache {
    /// Works whose callback ran in this entry; cleared by cancel from other
    /// CPUs.
    unwind_completed: AtomicUsize,
    /// Valid entries, 0 when nothing is cached: owning task only.
    nr_entries: UnsafeCell<u32>,
    /// A walk is filling `entries` or using `maps`: a nested request (from
    /// a fault taken by the walk) must not touch them.  Owning task only.
    walking: AtomicBool,
    entries: UnsafeCell<[usize; MAX_ENTRIES]>,
    /// The mappings the walks of this task looked up (see
    /// `unwind::MapSet`), kept between kernel entries.  Used by the
    /// owning task only; freed with the cache or at unload (see
    /// `saved_maps`).
    maps: AtomicPtr<SavedMaps>,
}

const _: () = {
    assert!(core::mem::size_of::<UnwindCache>() == 4096);
    assert!(core::mem::offset_of!(UnwindCache, nr_entries) == 8);
    assert!(core::mem::offset_of!(UnwindCache, entries) == 16);
    assert!(core::mem::offset_of!(UnwindCache, maps) == 4088);
};

// SAFETY: Other CPUs only reach `unwind_completed`, an atomic; the cells are
// touched only through a `&Current` of the owning task (see the methods).
unsafe impl Sync for UnwindCache {}

impl Drop for UnwindCache {
    fn drop(&mut self) {
        saved_maps::release(&self.maps);
    }
}

impl UnwindCache {
    /// Works whose callback already ran in this entry.
    pub(crate) fn completed(&self) -> &AtomicUsize {
        &self.unwind_completed
    }

    /// This entry's trace as `(nr, entries)`, walked by `walk` into the
    /// cache if none is cached yet.  `walk` gets the room and the task's
    /// saved mappings, and returns the entries written.  The pointer stays valid until the cache is freed;
    /// its first `nr` entries until the task returns to user space.
    pub(crate) fn trace(
        &self,
        _cur: &Current,
        walk: impl FnOnce(&mut [usize], Option<&mut MapSet>) -> usize,
    ) -> Result<(u32, *mut usize)> {
        let entries = self.entries.get().cast::<usize>();
        // SAFETY: Only the owning task, which `_cur` proves we run on,
        // reads or writes `nr_entries`.
        let nr = unsafe { *self.nr_entries.get() };
        if nr != 0 {
            stats::inc(Stat::CacheHits);
            return Ok((nr, entries));
        }
        // Only this task sets the flag, but an interrupt or a fault taken by
        // the walk below may come back here.
        if self.walking.swap(true, Ordering::Relaxed) {
            return Err(EBUSY);
        }
        // SAFETY: Only the owning task touches `entries` and the set of
        // `maps` (which lives as long as the cache), and `walking` keeps a
        // nested call away: these are the only references.
        let n = walk(unsafe { &mut *self.entries.get() }, unsafe {
            saved_maps::get_or_alloc(&self.maps)
        }) as u32;
        // SAFETY: As above, owner only.
        unsafe { *self.nr_entries.get() = n };
        self.walking.store(false, Ordering::Relaxed);
        stats::inc(Stat::Walks);
        Ok((n, entries))
    }
}

impl UnwindCache {
    /// Runs `f` with the task's saved mappings, or with `None` if a walk
    /// of this task is using them (a fault taken by the walk came back
    /// here) or there is no memory for them.
    pub(crate) fn with_maps<R>(
        &self,
        _cur: &Current,
        f: impl FnOnce(Option<&mut MapSet>) -> R,
    ) -> R {
        if self.walking.swap(true, Ordering::Relaxed) {
            return f(None);
        }
        // SAFETY: Only the owning task, which `_cur` proves we run on,
        // touches the set of `maps` (which lives as long as the cache), and
        // `walking` keeps a nested call away.
        let r = f(unsafe { saved_maps::get_or_alloc(&self.maps) });
        self.walking.store(false, Ordering::Relaxed);
        r
    }
}

fn slot_ptr(info: &TaskInfo<'_>) -> *mut UnwindCache {
    info.cache_slot().load(Ordering::Acquire).cast()
}

/// The cache of the current task, allocated if needed (task context).
/// It stays valid while the task runs in the kernel: it is freed only with
/// the task, or at unload when no code of this module runs for it.
pub(crate) fn get_or_alloc(cur: &Current) -> Result<&UnwindCache> {
    let mut cache = slot_ptr(cur);
    if cache.is_null() {
        // All-zero bytes are a valid, empty cache.  Charged to the task's
        // memory cgroup: one page per task that ever walked.
        let boxed = KBox::<UnwindCache>::new_uninit(GFP_KERNEL_ACCOUNT | __GFP_ZERO)?;
        // SAFETY: The allocation is zeroed and zero is valid for every field.
        let boxed = unsafe { boxed.assume_init() };
        cache = KBox::into_raw(boxed);
        // Only current installs its cache, so the slot is still NULL.
        cur.cache_slot().store(cache.cast(), Ordering::Release);
        stats::inc(Stat::CacheAllocs);
    }
    // SAFETY: Non-NULL, and freed only when no code runs for this task.
    Ok(unsafe { &*cache })
}

/// The cache of `info`'s task, if it has one.
pub(crate) fn get<'a>(info: &TaskInfo<'a>) -> Option<&'a UnwindCache> {
    // SAFETY: A cache is freed only with its task (which outlives `'a` by
    // `TaskInfo`'s invariant) or at unload, when no other code of this
    // module runs.
    unsafe { slot_ptr(info).as_ref() }
}

/// Forgets the cached trace at the end of a kernel entry.
pub(crate) fn reset(cur: &Current) {
    if let Some(cache) = get(cur) {
        // SAFETY: Owner only, which `cur` proves.
        unsafe { *cache.nr_entries.get() = 0 };
        cache.unwind_completed.store(0, Ordering::Relaxed);
    }
}

/// Whether the task has a cache.
pub(crate) fn has(info: &TaskInfo<'_>) -> bool {
    !info.cache_slot().load(Ordering::Acquire).is_null()
}

/// Takes the cache of a task, to be freed by dropping it (in a context
/// that may sleep: its memo may hold the last reference of a vmalloc'd
/// table).
///
/// # Safety
///
/// No code may use the task's cache any more, nor start to: the task is
/// being freed, or the module is unloading with its hooks unregistered.
pub(crate) unsafe fn take(info: &TaskInfo<'_>) -> Option<KBox<UnwindCache>> {
    let cache = info
        .cache_slot()
        .swap(core::ptr::null_mut(), Ordering::AcqRel)
        .cast::<UnwindCache>();
    if cache.is_null() {
        return None;
    }
    stats::inc(Stat::CacheFrees);
    // SAFETY: `cache` came from `KBox::into_raw()` in `get_or_alloc()`, the
    // swap made us its only owner and per the contract nobody uses it any
    // more.
    Some(unsafe { KBox::from_raw(cache) })
}

/// Frees the cache of a task.
///
/// # Safety
///
/// As [`take`], and the context may sleep.
pub(crate) unsafe fn free(info: &TaskInfo<'_>) {
    // SAFETY: Our contract is `take()`'s.
    drop(unsafe { take(info) });
}

/// Takes and frees every task's cache, at unload.  Up to `BATCH` caches
/// are taken per pass over the threads and freed after it, outside the RCU
/// read side (their tables may be vmalloc'd, and vfree() may sleep), so
/// that unloading needs no allocation and cannot fail for want of memory.
///
/// # Safety
///
/// As [`take`] for every task: the hooks are unregistered and no work of
/// this module is queued or registered.
pub(crate) unsafe fn take_all() {
    const BATCH: usize = 64;
    loop {
        let mut batch: [Option<KBox<UnwindCache>>; BATCH] = [const { None }; BATCH];
        let mut taken = 0usize;
        let mut missed = false;
        TaskInfo::for_each_thread(|info| {
            if taken == BATCH {
                missed |= has(&info);
                return;
            }
            // SAFETY: Per the contract no code of ours runs for the task.
            if let Some(c) = unsafe { take(&info) } {
                batch[taken] = Some(c);
                taken += 1;
            }
        });
        // Freed here, outside the RCU read side.
        drop(batch);
        if !missed {
            return;
        }
    }
}
