// SPDX-License-Identifier: GPL-2.0

//! Event counters, shown read-only in `/sys/kernel/debug/unwind_deferred/`.
//!
//! They let the tests see that each kernel hook fired and how many walks a
//! set of requests cost.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::c_str;
use kernel::ffi::c_char;
use kernel::prelude::*;

use crate::shim;

/// One counter per event.
#[derive(Clone, Copy)]
#[repr(usize)]
pub(crate) enum Stat {
    Fork,
    Exit,
    Free,
    ExitToUser,
    TaskWork,
    Walks,
    CacheHits,
    CacheAllocs,
    CacheFrees,
    Requests,
    Queued,
    Callbacks,
    Exec,
}

const NAMES: [&CStr; 13] = [
    c_str!("fork"),
    c_str!("exit"),
    c_str!("free"),
    c_str!("exit_to_user"),
    c_str!("task_work"),
    c_str!("walks"),
    c_str!("cache_hits"),
    c_str!("cache_allocs"),
    c_str!("cache_frees"),
    c_str!("requests"),
    c_str!("queued"),
    c_str!("callbacks"),
    c_str!("exec"),
];

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicU64 = AtomicU64::new(0);
static COUNTERS: [AtomicU64; NAMES.len()] = [ZERO; NAMES.len()];

/// Counts one `stat` event.
pub(crate) fn inc(stat: Stat) {
    COUNTERS[stat as usize].fetch_add(1, Ordering::Relaxed);
}

/// The debugfs directory with one file per counter.
pub(crate) struct Debugfs;

impl Debugfs {
    pub(crate) fn new() -> Result<Self> {
        let mut names = [core::ptr::null::<c_char>(); NAMES.len()];
        for (n, name) in names.iter_mut().zip(NAMES.iter()) {
            *n = name.as_char_ptr();
        }
        // SAFETY: `names` holds `NAMES.len()` NUL-terminated static strings,
        // which debugfs copies; `COUNTERS` is static and has the layout of
        // `u64`s, which debugfs only reads.
        let ret = unsafe {
            shim::unwind_rs_debugfs_create(
                names.as_ptr(),
                COUNTERS.as_ptr().cast_mut().cast(),
                NAMES.len() as u32,
            )
        };
        kernel::error::to_result(ret)?;
        Ok(Self)
    }
}

impl Drop for Debugfs {
    fn drop(&mut self) {
        // SAFETY: The directory was created in `new()`; removal waits for
        // readers of its files.
        unsafe { shim::unwind_rs_debugfs_remove() };
    }
}
