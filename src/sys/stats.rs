// SPDX-License-Identifier: GPL-2.0

//! Event counters (per CPU) and gauges, shown read-only in
//! `/sys/kernel/debug/unwind_deferred/`.
//!
//! They let the tests see that each kernel hook fired and how many walks a
//! set of requests cost.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::c_str;
use kernel::ffi::{c_char, c_uint};
use kernel::prelude::*;

extern "C" {
    /// Adds `v` to this CPU's copy of event `i` (any context).
    fn unwind_rs_event_add(i: c_uint, v: u64);
    /// Event `i` summed over every CPU.
    #[cfg(unwind_inject)]
    fn unwind_rs_event_read(i: c_uint) -> u64;
    /// How many events the per-CPU array holds.
    fn unwind_rs_events_max() -> c_uint;
    /// The directory, with `pending_unqueued`, whose reads call
    /// `pending_unqueued`.
    fn unwind_rs_debugfs_create(pending_unqueued: unsafe extern "C" fn() -> u64);
    /// A file `name` that reads event `i`.
    fn unwind_rs_debugfs_event(name: *const c_char, i: c_uint);
    /// A file `name` that reads the gauge at `value`.
    fn unwind_rs_debugfs_gauge(name: *const c_char, value: *mut u64);
    fn unwind_rs_debugfs_remove();
}

/// Declares `Stat` (events, counted per CPU) and `Gauge` (current sizes,
/// one shared value each) with the debugfs name of each, in step.
macro_rules! stats {
    (events { $($stat:ident => $name:literal,)* }
     gauges { $($gauge:ident => $gname:literal,)* }) => {
        /// One counter per event.
        #[derive(Clone, Copy)]
        #[repr(usize)]
        pub(crate) enum Stat {
            $($stat,)*
        }

        const NAMES: &[&CStr] = &[$(c_str!($name),)*];

        /// One value per gauge.
        #[derive(Clone, Copy)]
        #[repr(usize)]
        pub(crate) enum Gauge {
            $($gauge,)*
        }

        const GAUGE_NAMES: &[&CStr] = &[$(c_str!($gname),)*];
    };
}

stats! {
    events {
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
        EhframeFrames => "ehframe_frames",
        EhframeReads => "ehframe_reads",
        EhframeSections => "ehframe_sections",
        EhframeRejects => "ehframe_rejects",
        EntryFrames => "entry_frames",
        MapLookups => "map_lookups",
        TableLockBusy => "table_lock_busy",
        FnTables => "fn_tables",
        FnReads => "fn_reads",
        FnRows => "fn_rows",
        FnRejects => "fn_rejects",
        FnEvictions => "fn_evictions",
        FnWaits => "fn_waits",
        SpanRows => "span_rows",
        PerfGoing => "perf_going",
        TableReadWaits => "table_read_waits",
    }
    gauges {
        TableCacheBytes => "table_cache_bytes",
        TableBytesHeld => "table_bytes_held",
    }
}

const N: usize = NAMES.len();
const N_GAUGES: usize = GAUGE_NAMES.len();

/// The names these counters had when SFrame was the only format: kept as
/// second files of the same counters, for scripts that read them.
const ALIASES: &[(&CStr, Stat)] = &[
    (c_str!("sframe_hits"), Stat::TableHits),
    (c_str!("sframe_evictions"), Stat::TableEvictions),
];
const GAUGE_ALIASES: &[(&CStr, Gauge)] = &[(c_str!("sframe_bytes"), Gauge::TableCacheBytes)];

/// Counts one `stat` event.
pub(crate) fn inc(stat: Stat) {
    add(stat, 1);
}

/// Counts `v` `stat` events.
pub(crate) fn add(stat: Stat, v: u64) {
    // SAFETY: `Debugfs::new()`, the module's first step, checked that every
    // `Stat` has a slot; the helper works in any context.
    unsafe { unwind_rs_event_add(stat as c_uint, v) };
}

/// Event `stat`, summed over every CPU (test builds' own checks).
#[cfg(unwind_inject)]
pub(crate) fn read(stat: Stat) -> u64 {
    // SAFETY: As in `add()`.
    unsafe { unwind_rs_event_read(stat as c_uint) }
}

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
static GAUGES: [AtomicU64; N_GAUGES] = [ZERO; N_GAUGES];

/// Sets a gauge.
pub(crate) fn set(g: Gauge, v: u64) {
    GAUGES[g as usize].store(v, Ordering::Relaxed);
}

/// Adds `v` to a gauge.
pub(crate) fn grow(g: Gauge, v: u64) {
    GAUGES[g as usize].fetch_add(v, Ordering::Relaxed);
}

/// Takes `v` from a gauge that `grow()` gave at least as much.
pub(crate) fn shrink(g: Gauge, v: u64) {
    GAUGES[g as usize].fetch_sub(v, Ordering::Relaxed);
}

/// The debugfs directory with one file per counter.  Debugfs failures are
/// ignored, as kernel policy wants: the counters never decide whether
/// unwinding works.
pub(crate) struct Debugfs;

impl Debugfs {
    /// The counters, and `pending_unqueued`, whose reads call
    /// `pending_unqueued` (given from above: this layer knows no tasks).
    /// Fails if the per-CPU array has fewer slots than `Stat` has events
    /// (`UNWIND_RS_EVENTS_MAX` in `sys.h`).
    pub(crate) fn new(pending_unqueued: extern "C" fn() -> u64) -> Result<Self> {
        // SAFETY: A constant's getter.
        if N > unsafe { unwind_rs_events_max() } as usize {
            pr_err!("{} counters, more than UNWIND_RS_EVENTS_MAX\n", N);
            return Err(EINVAL);
        }
        // SAFETY: `pending_unqueued` is a function of this module, whose
        // file `Drop` removes (waiting for readers) before the module's code
        // goes.
        unsafe { unwind_rs_debugfs_create(pending_unqueued) };
        let events = NAMES.iter().enumerate().map(|(i, n)| (*n, i));
        let aliases = ALIASES.iter().map(|(n, s)| (*n, *s as usize));
        for (name, i) in Iterator::chain(events, aliases) {
            // SAFETY: `name` is a static NUL-terminated string, which
            // debugfs copies; `i` is below `N`, checked above.
            unsafe { unwind_rs_debugfs_event(name.as_char_ptr(), i as c_uint) };
        }
        let gauges = GAUGE_NAMES.iter().enumerate().map(|(i, n)| (*n, i));
        let aliases = GAUGE_ALIASES.iter().map(|(n, g)| (*n, *g as usize));
        for (name, i) in Iterator::chain(gauges, aliases) {
            // SAFETY: A static name, as above; `GAUGES` is static and has
            // the layout of `u64`s, which debugfs only reads.
            unsafe { unwind_rs_debugfs_gauge(name.as_char_ptr(), GAUGES[i].as_ptr()) };
        }
        Ok(Self)
    }
}

impl Drop for Debugfs {
    fn drop(&mut self) {
        // SAFETY: The directory was created in `new()`; removal waits for
        // readers of its files.
        unsafe { unwind_rs_debugfs_remove() };
    }
}
