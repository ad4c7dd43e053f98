// SPDX-License-Identifier: GPL-2.0

//! The per-task unwind cache: the first walk of a kernel entry is kept and
//! every later request in the same entry reuses it.
//!
//! One page per task, allocated in task context on first use, reset on the
//! way back to user space and freed with the task.

use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::prelude::*;

use crate::stats::{self, Stat};
use crate::task::TaskInfo;

/// Entries that fit in one page after the header (510, as upstream).
pub(crate) const MAX_ENTRIES: usize = (4096 - 16) / core::mem::size_of::<usize>();

/// Matches `struct unwind_cache` in `include/linux/unwind_deferred_types.h`.
#[repr(C)]
pub(crate) struct UnwindCache {
    /// Works whose callback ran in this entry; cleared by cancel from other
    /// CPUs, hence atomic.
    pub(crate) unwind_completed: AtomicUsize,
    /// Valid entries, 0 when nothing is cached.  Only the owning task
    /// touches it.
    pub(crate) nr_entries: u32,
    pub(crate) entries: [usize; MAX_ENTRIES],
}

const _: () = assert!(core::mem::size_of::<UnwindCache>() == 4096);

/// The cache of the task owning `info`, allocated if needed.
///
/// Must be called by the owning task (current), in task context.  The
/// cache stays valid while the task runs in the kernel: it is freed only
/// with the task, or at unload when no code of this module runs for it.
pub(crate) fn get_or_alloc(info: &TaskInfo) -> Result<*mut UnwindCache> {
    let mut cache = info.cache().load(Ordering::Acquire);
    if cache.is_null() {
        // All-zero bytes are a valid, empty cache.
        let boxed = KBox::<UnwindCache>::new_uninit(GFP_KERNEL | __GFP_ZERO)?;
        // SAFETY: The allocation is zeroed and zero is valid for every field.
        let boxed = unsafe { boxed.assume_init() };
        cache = KBox::into_raw(boxed);
        // Only current installs its cache, so the slot is still NULL.
        info.cache().store(cache, Ordering::Release);
        stats::inc(Stat::CacheAllocs);
    }
    Ok(cache)
}

/// Frees the cache of a task that can no longer use it (freed task, or
/// module unload with no module code running on the task's behalf).
pub(crate) fn free(info: &TaskInfo) {
    let cache = info.cache().swap(core::ptr::null_mut(), Ordering::AcqRel);
    if !cache.is_null() {
        // SAFETY: `cache` came from `KBox::into_raw()` in `get_or_alloc()`,
        // and the swap made us its only owner.
        drop(unsafe { KBox::from_raw(cache) });
        stats::inc(Stat::CacheFrees);
    }
}

/// Forgets the cached trace at the end of a kernel entry (owning task only).
pub(crate) fn reset(info: &TaskInfo) {
    let cache = info.cache().load(Ordering::Acquire);
    if !cache.is_null() {
        // SAFETY: Called by the owning task, see `get_or_alloc()`.
        let cache = unsafe { &mut *cache };
        cache.nr_entries = 0;
        cache.unwind_completed.store(0, Ordering::Relaxed);
    }
}
