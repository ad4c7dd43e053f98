// SPDX-License-Identifier: GPL-2.0

//! The C ABI: `extern "C"` functions with the names and semantics of the
//! Linux 6.17 `unwind_user.h` and `unwind_deferred.h`.  `exports.c` exports
//! them with `EXPORT_SYMBOL_GPL()`.  Each one checks its arguments.

use core::ptr::NonNull;
use kernel::ffi::{c_int, c_uint};
use kernel::prelude::*;

use crate::deferred::{self, UnwindCallback, UnwindWork};
use crate::sys::context;
use crate::task::{cache, Current};
use crate::unwind::{self, UnwindStacktrace, UnwindUserState, UserRegs};

fn errno(e: Error) -> c_int {
    e.to_errno()
}

/// Walks current's user stack into `trace->entries`.
///
/// # Safety
///
/// `trace` must be NULL or valid, with `entries` NULL or valid for
/// `max_entries` writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn unwind_user(
    trace: *mut UnwindStacktrace,
    max_entries: c_uint,
) -> c_int {
    // SAFETY: NULL or valid per the contract.
    let Some(trace) = (unsafe { trace.as_mut() }) else {
        return errno(EINVAL);
    };
    trace.nr = 0;
    if trace.entries.is_null() || max_entries == 0 {
        return errno(EINVAL);
    }
    // One helper call for the context: a walk's fixed cost is mostly calls.
    let mut regs = UserRegs::EMPTY;
    if !regs.read() {
        // Rare: no user registers.  A kernel thread or user worker gets an
        // empty trace, as upstream; others only where they may fault.
        if context::is_user_task() && !context::can_fault() {
            return errno(EINVAL);
        }
        return 0;
    }
    if !regs.can_fault {
        return errno(EINVAL);
    }
    // SAFETY: The caller provides `max_entries` writable entries.
    let entries = unsafe { core::slice::from_raw_parts_mut(trace.entries, max_entries as usize) };
    // With current's saved mappings (in its cache, allocated as for a
    // deferred request): the mappings are looked up once, not per walk.
    // SAFETY: `regs.task` is current, which `read()` returned.
    let cur = unsafe { Current::from_task(NonNull::new_unchecked(regs.task.cast())) };
    trace.nr = match cache::get_or_alloc(&cur) {
        Ok(c) => c.with_maps(&cur, |maps| unwind::unwind_from(&regs, entries, maps)),
        Err(_) => unwind::unwind_from(&regs, entries, None),
    } as u32;
    0
}

/// Starts a walk of current's user stack at its saved user registers.
///
/// # Safety
///
/// `state` must be NULL or valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn unwind_user_start(state: *mut UnwindUserState) -> c_int {
    // SAFETY: NULL or valid per the contract.
    let Some(state) = (unsafe { state.as_mut() }) else {
        return errno(EINVAL);
    };
    match state.start() {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// Steps a walk to the caller's frame; `-EINVAL` once it is done.
///
/// # Safety
///
/// `state` must be NULL or a state set up by `unwind_user_start()`.
#[no_mangle]
pub(crate) unsafe extern "C" fn unwind_user_next(state: *mut UnwindUserState) -> c_int {
    // SAFETY: NULL or valid per the contract.
    let Some(state) = (unsafe { state.as_mut() }) else {
        return errno(EINVAL);
    };
    if !context::can_fault() {
        state.done = true;
        return errno(EINVAL);
    }
    // The iteration API has nowhere to keep a walk's mappings: each step
    // looks its mapping up again (cached sections, no file reads).
    let mut maps = unwind::MapSet::new();
    match state.next(&mut unwind::Memo::new(&mut maps)) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// The trace of current's kernel entry, from its cache or a new walk.
///
/// # Safety
///
/// `trace` must be NULL or valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn unwind_user_faultable(trace: *mut UnwindStacktrace) -> c_int {
    // SAFETY: NULL or valid per the contract.
    let Some(trace) = (unsafe { trace.as_mut() }) else {
        return errno(EINVAL);
    };
    match deferred::faultable(trace) {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// Registers `work` with callback `func`.
///
/// # Safety
///
/// `work` must be NULL or stay valid until `unwind_deferred_cancel()` for
/// it has returned.
#[no_mangle]
pub(crate) unsafe extern "C" fn unwind_deferred_init(
    work: *mut UnwindWork,
    func: UnwindCallback,
) -> c_int {
    // SAFETY: Per the contract.
    match unsafe { deferred::init(work, func, deferred::Pin::Yes) } {
        Ok(()) => 0,
        Err(e) => errno(e),
    }
}

/// Asks for current's user stack before it returns to user space.
///
/// # Safety
///
/// `work` and `cookie` must each be NULL or valid.
#[no_mangle]
pub(crate) unsafe extern "C" fn unwind_deferred_request(
    work: *mut UnwindWork,
    cookie: *mut u64,
) -> c_int {
    // SAFETY: NULL or valid per the contract.
    let Some(cookie) = (unsafe { cookie.as_mut() }) else {
        return errno(EINVAL);
    };
    // SAFETY: Per the contract.
    match unsafe { deferred::request(work, cookie) } {
        Ok(r) => c_int::from(r.already),
        Err(e) => errno(e),
    }
}

/// Unregisters `work`; no callback for it runs after this returns.
///
/// # Safety
///
/// `work` must be NULL or valid; not to be called from a callback.
#[no_mangle]
pub(crate) unsafe extern "C" fn unwind_deferred_cancel(work: *mut UnwindWork) {
    // SAFETY: Per the contract.
    unsafe { deferred::cancel(work) };
}

/// The cookie of current's kernel entry.
#[no_mangle]
pub(crate) extern "C" fn unwind_user_get_cookie() -> u64 {
    deferred::get_cookie()
}
