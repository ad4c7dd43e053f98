// SPDX-License-Identifier: GPL-2.0

//! perf's deferred user callchains (`perf record --call-graph fp,defer`).
//!
//! perf core is built in, so it cannot hold a `struct unwind_work` of this
//! module: it asks through the hook table's `perf_request`, which requests
//! this module's own works for it, and gets the stack back through
//! `perf_callchain_deferred()`, which writes `PERF_RECORD_CALLCHAIN_DEFERRED`
//! (kernel patch 0005).  Before load, and from the moment `rmmod` makes the
//! module GOING (before its exit runs), requests fail and perf walks the
//! user stack synchronously.  The work does not pin the module: unloading
//! cancels it first, so open sessions fall back to synchronous callchains;
//! only the samples of the kernel entries in flight at that moment get no
//! user part.

use core::cell::UnsafeCell;
use kernel::ffi::{c_int, c_uint};
use kernel::prelude::*;

use crate::deferred::{self, Pin, UnwindWork};
use crate::sys::context;
use crate::sys::stats::{self, Stat};
use crate::unwind::UnwindStacktrace;

extern "C" {
    // `include/linux/perf_event.h` (patch 0005); `exports.c` checks that the
    // declaration matches, since the bindings do not include perf_event.h.
    fn perf_callchain_deferred(cookie: u64, ips: *const usize, nr: c_uint) -> c_int;
}

/// One of perf's works.  Only `deferred` touches it, through a raw
/// pointer, as it does every consumer's `struct unwind_work`.
struct PerfWork(UnsafeCell<UnwindWork>);

// SAFETY: The cell is only reached through `deferred`'s protocol, which
// synchronizes every access to a registered work.
unsafe impl Sync for PerfWork {}

/// perf's works, asked in turn.  A sample taken once a work's callback
/// for this entry has begun (its request `taken`) would carry a cookie
/// whose record is already behind it, and stay unmerged: it asks the next
/// work, whose callback writes the same cookie's record again, after it
/// (the tool merges every sample queued before a record of its cookie).
/// After the last, perf walks the sample synchronously.
static WORKS: [PerfWork; N_WORKS] =
    [const { PerfWork(UnsafeCell::new(UnwindWork::EMPTY)) }; N_WORKS];
const N_WORKS: usize = 3;

unsafe extern "C" fn callback(_work: *mut UnwindWork, trace: *mut UnwindStacktrace, cookie: u64) {
    // SAFETY: `deferred` passes a valid trace, the same for every work.
    let Some(trace) = (unsafe { trace.as_ref() }) else {
        return;
    };
    // SAFETY: `entries` holds `nr` entries (or is NULL with `nr` 0), valid
    // during the callback; perf copies them into its buffers.
    unsafe { perf_callchain_deferred(cookie, trace.entries, trace.nr) };
}

/// The hook table's `perf_request`: any context, NMI included.
///
/// # Safety
///
/// `cookie` must be NULL or valid for writes.
pub(super) unsafe extern "C" fn request(cookie: *mut u64) -> c_int {
    // SAFETY: NULL or valid per the contract.
    let Some(cookie) = (unsafe { cookie.as_mut() }) else {
        return EINVAL.to_errno();
    };
    // Once rmmod has begun, the kernel's task work can no longer pin the
    // module and drops what it finds: refused here, the sample is walked
    // synchronously instead of losing its user part.
    if !context::module_live() {
        stats::inc(Stat::PerfGoing);
        *cookie = 0;
        return ENODEV.to_errno();
    }
    for w in &WORKS {
        // SAFETY: `WORKS` is static.
        match unsafe { deferred::request(w.0.get(), cookie) } {
            Ok(r) if r.taken => continue,
            Ok(r) => return c_int::from(r.already),
            Err(e) => return e.to_errno(),
        }
    }
    *cookie = 0;
    -(kernel::bindings::EALREADY as c_int)
}

/// perf's registered works; dropping it cancels them, which must happen
/// before the hooks go.
pub(crate) struct Registration;

/// The works, as `deferred` takes them.
fn works() -> [*mut UnwindWork; N_WORKS] {
    core::array::from_fn(|i| WORKS[i].0.get())
}

impl Registration {
    pub(crate) fn new() -> Result<Self> {
        let works = works();
        for (i, &w) in works.iter().enumerate() {
            // SAFETY: `WORKS` is static, and `Drop` (or the unwinding
            // below) cancels each before unload.
            if let Err(e) = unsafe { deferred::init(w, Some(callback), Pin::No) } {
                // SAFETY: Registered above; this is no callback.
                unsafe { deferred::cancel_all(&works[..i]) };
                return Err(e);
            }
        }
        Ok(Self)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // The start of the unload: from here a sample's request may be
        // cancelled before its record is written (the stress_ tests take
        // the time of this line as the start of the window).
        pr_info!("unloading\n");
        // SAFETY: `WORKS` is static; this is no callback.
        unsafe { deferred::cancel_all(&works()) };
    }
}
