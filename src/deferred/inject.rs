// SPDX-License-Identifier: GPL-2.0

//! Test-only injection points, built only with `--cfg unwind_inject`
//! (`make UNWIND_RS_INJECT=1`): a test module registers a function that
//! `protocol::Task::step()` calls between the protocol's atomic steps, where
//! it fires real NMIs and interrupts; it can also make the next queueing of
//! a task work fail, as `task_work_add()` does for an exiting task.
//! At unload, [`unload_dequeued()`] lets a task work stalled off its queue
//! run between the unload's cancel and its write of the mask.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use kernel::bindings;
use kernel::c_str;
use kernel::ffi::c_int;
use kernel::prelude::*;

use super::protocol::{Step, PENDING};

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

extern "C" {
    fn unwind_rs_inject_going_delay();
}

/// At the start of the module's exit: sleeps for the `inject_going_ms`
/// parameter (`inject.c`), the module GOING with every hook in place,
/// and says what came in meanwhile (`perf_defer_going` reads it).
pub(crate) fn going_delay() {
    use crate::sys::stats::{read, Stat};
    const SEEN: [Stat; 3] = [Stat::PerfGoing, Stat::Requests, Stat::Callbacks];
    let before = SEEN.map(read);
    // SAFETY: Sleeps; called from the module's exit, which may.
    unsafe { unwind_rs_inject_going_delay() };
    let [refused, requests, callbacks] = SEEN.map(read);
    pr_info!(
        "inject: while going: {} perf requests refused, {} requests, {} callbacks\n",
        refused.wrapping_sub(before[0]),
        requests.wrapping_sub(before[1]),
        callbacks.wrapping_sub(before[2])
    );
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

/// `bool unwind_stall_release(void)` in `tests/modules/unwind_stall.c`.
const STALL_RELEASE: &CStr = c_str!("unwind_stall_release");

/// Called by the unload for a task whose task work it could not cancel
/// while `mask` still holds `PENDING`: the work is off the queue, not yet
/// run.  If `unwind_stall.ko` holds that task in front of its work, lets
/// it go and waits (up to 5 s) for the kernel's trampoline, which finds
/// no hooks, to clear the mask: the interleaving of issue 23's first
/// defect, which a write of the unload must not undo.
/// `race_unload_trampoline*` check the task is served after a reload.
pub(crate) fn unload_dequeued(mask: &AtomicUsize) {
    if mask.load(Ordering::Acquire) & PENDING == 0 {
        return;
    }
    // Found by name: neither module may depend on the other, both unload.
    // SAFETY: The name is NUL-terminated; a non-NULL result holds a
    // reference on its module until `__symbol_put()` below.
    let f = unsafe { bindings::__symbol_get(STALL_RELEASE.as_char_ptr()) };
    if f.is_null() {
        return;
    }
    // SAFETY: `unwind_stall.c` exports it with this type; its module is
    // pinned (above).
    let released = unsafe {
        core::mem::transmute::<*mut core::ffi::c_void, unsafe extern "C" fn() -> bool>(f)()
    };
    let mut waited = 0;
    // The unload walks the threads under `rcu_read_lock()`: no sleeping.
    while released && mask.load(Ordering::Acquire) & PENDING != 0 && waited < 5000 {
        // SAFETY: A busy wait of 1 ms, allowed in any context.
        unsafe { bindings::__udelay(1000) };
        waited += 1;
    }
    // SAFETY: Drops the reference `__symbol_get()` took.
    unsafe { bindings::__symbol_put(STALL_RELEASE.as_char_ptr()) };
    if released {
        pr_info!(
            "inject: a dequeued work ran during unload after {} ms, mask {:#x}\n",
            waited,
            mask.load(Ordering::Acquire)
        );
    }
}
