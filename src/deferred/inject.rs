// SPDX-License-Identifier: GPL-2.0

//! Test-only injection points, built only with `--cfg unwind_inject`
//! (`make UNWIND_RS_INJECT=1`): a test module registers a function that
//! `protocol::Task::step()` calls between the protocol's atomic steps, where
//! it fires real NMIs and interrupts; it can also make the next queueing of
//! a task work fail, as `task_work_add()` does for an exiting task.

use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use kernel::ffi::c_int;

use super::protocol::Step;

/// Matches `unwind_rs_inject_fn` in `tests/modules/race/unwind_inject.h`.
type InjectFn = unsafe extern "C" fn(step: c_int);

static HOOK: AtomicPtr<core::ffi::c_void> = AtomicPtr::new(core::ptr::null_mut());

/// Calls the registered function, if any, for step `s`.
pub(crate) fn fire(s: Step) {
    let f = HOOK.load(Ordering::Acquire);
    if !f.is_null() {
        // SAFETY: Only `unwind_rs_inject_set()` stores here, from an
        // `InjectFn`; the test module clears it and waits before unloading.
        unsafe { core::mem::transmute::<*mut core::ffi::c_void, InjectFn>(f)(s as c_int) };
    }
}

/// Registers `f` (NULL to clear).
#[no_mangle]
pub(crate) extern "C" fn unwind_rs_inject_set(f: Option<InjectFn>) {
    let p = f.map_or(core::ptr::null_mut(), |f| f as *mut core::ffi::c_void);
    HOOK.store(p, Ordering::Release);
}

static FAIL_QUEUE: AtomicBool = AtomicBool::new(false);

/// True once after `unwind_rs_inject_fail_queue()`.
pub(crate) fn queue_fails() -> bool {
    FAIL_QUEUE.swap(false, Ordering::AcqRel)
}

/// Makes the next queueing of a task work fail with -ESRCH.
#[no_mangle]
pub(crate) extern "C" fn unwind_rs_inject_fail_queue() {
    FAIL_QUEUE.store(true, Ordering::Release);
}
