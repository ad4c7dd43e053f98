// SPDX-License-Identifier: GPL-2.0

//! Event counters, shown read-only in `/sys/kernel/debug/unwind_deferred/`.
//!
//! They let the tests see that each kernel hook fired and how many walks a
//! set of requests cost.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::c_str;
use kernel::ffi::{c_char, c_uint};
use kernel::prelude::*;

extern "C" {
    /// The counters' directory: one `u64` file per name, and
    /// `pending_unqueued`, whose reads call `pending_unqueued`.
    fn unwind_rs_debugfs_create(
        names: *const *const c_char,
        values: *mut u64,
        n: c_uint,
        pending_unqueued: unsafe extern "C" fn() -> u64,
    );
    fn unwind_rs_debugfs_remove();
    /// One more `u64` file in the counters' directory, for `value`.
    fn unwind_rs_debugfs_alias(name: *const c_char, value: *mut u64);
}

/// Declares `Stat` and the debugfs name of each of its events, in step.
macro_rules! stats {
    ($($stat:ident => $name:literal,)*) => {
        /// One counter per event.
        #[derive(Clone, Copy)]
        #[repr(usize)]
        pub(crate) enum Stat {
            $($stat,)*
        }

        const NAMES: &[&CStr] = &[$(c_str!($name),)*];
    };
}

stats! {
    Fork => "fork",
    Exit => "exit",
    Free => "free",
    ExitToUser => "exit_to_user",
    TaskWork => "task_work",
    Walks => "walks",
    CacheHits => "cache_hits",
    CacheAllocs => "cache_allocs",
    CacheFrees => "cache_frees",
    Requests => "requests",
    Queued => "queued",
    Callbacks => "callbacks",
    Exec => "exec",
    SframeFrames => "sframe_frames",
    TableHits => "table_hits",
    SframeReads => "sframe_reads",
    SframeSections => "sframe_sections",
    SframeRejects => "sframe_rejects",
    TableEvictions => "table_evictions",
    TableCacheBytes => "table_cache_bytes",
    EhframeFrames => "ehframe_frames",
    EhframeReads => "ehframe_reads",
    EhframeSections => "ehframe_sections",
    EhframeRejects => "ehframe_rejects",
    EntryFrames => "entry_frames",
    MapLookups => "map_lookups",
    TableBytesHeld => "table_bytes_held",
    TableLockBusy => "table_lock_busy",
    FnTables => "fn_tables",
    FnReads => "fn_reads",
    FnRejects => "fn_rejects",
    FnEvictions => "fn_evictions",
    FnWaits => "fn_waits",
}

const N: usize = NAMES.len();

/// The names these counters had when SFrame was the only format: kept as
/// second files of the same counters, for scripts that read them.
const ALIASES: &[(&CStr, Stat)] = &[
    (c_str!("sframe_hits"), Stat::TableHits),
    (c_str!("sframe_evictions"), Stat::TableEvictions),
    (c_str!("sframe_bytes"), Stat::TableCacheBytes),
];

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
static COUNTERS: [AtomicU64; N] = [ZERO; N];

/// Counts one `stat` event.
pub(crate) fn inc(stat: Stat) {
    COUNTERS[stat as usize].fetch_add(1, Ordering::Relaxed);
}

/// Sets a gauge (`TableCacheBytes`).
pub(crate) fn set(stat: Stat, v: u64) {
    COUNTERS[stat as usize].store(v, Ordering::Relaxed);
}

/// Adds `v` to a gauge (`TableBytesHeld`).
pub(crate) fn add(stat: Stat, v: u64) {
    COUNTERS[stat as usize].fetch_add(v, Ordering::Relaxed);
}

/// Takes `v` from a gauge that `add()` gave at least as much.
pub(crate) fn sub(stat: Stat, v: u64) {
    COUNTERS[stat as usize].fetch_sub(v, Ordering::Relaxed);
}

/// The debugfs directory with one file per counter.  Debugfs failures are
/// ignored, as kernel policy wants: the counters never decide whether
/// unwinding works.
pub(crate) struct Debugfs;

impl Debugfs {
    /// The counters, and `pending_unqueued`, whose reads call
    /// `pending_unqueued` (given from above: this layer knows no tasks).
    pub(crate) fn new(pending_unqueued: extern "C" fn() -> u64) -> Self {
        let mut names = [core::ptr::null::<c_char>(); N];
        for (n, name) in names.iter_mut().zip(NAMES.iter()) {
            *n = name.as_char_ptr();
        }
        // SAFETY: `names` holds `N` NUL-terminated static strings, which
        // debugfs copies; `COUNTERS` is static and has the layout of `u64`s,
        // which debugfs only reads; `pending_unqueued` is a function of this
        // module, whose file `Drop` removes (waiting for readers) before the
        // module's code goes.
        unsafe {
            unwind_rs_debugfs_create(
                names.as_ptr(),
                COUNTERS.as_ptr().cast_mut().cast(),
                N as u32,
                pending_unqueued,
            )
        };
        for (name, stat) in ALIASES {
            // SAFETY: As above: a static name, a static counter.
            unsafe {
                unwind_rs_debugfs_alias(
                    name.as_char_ptr(),
                    COUNTERS[*stat as usize].as_ptr().cast(),
                )
            };
        }
        Self
    }
}

impl Drop for Debugfs {
    fn drop(&mut self) {
        // SAFETY: The directory was created in `new()`; removal waits for
        // readers of its files.
        unsafe { unwind_rs_debugfs_remove() };
    }
}
