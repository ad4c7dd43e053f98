// SPDX-License-Identifier: GPL-2.0

//! The hook table registered with the kernel patch (`linux/unwind_hooks.h`).
//!
//! The kernel calls these inside an SRCU read-side section of its own, so
//! unregistering waits until none runs; tasks still holding a queued work
//! then only reach the kernel's trampoline.

use core::sync::atomic::Ordering;
use kernel::bindings;
use kernel::prelude::*;

use crate::cache;
use crate::deferred::{self, UNWIND_PENDING};
use crate::shim;
use crate::stats::{self, Stat};
use crate::task::TaskInfo;

unsafe extern "C" fn task_fork(_task: *mut bindings::task_struct) {
    // The kernel already zeroed the new task's state.
    stats::inc(Stat::Fork);
}

unsafe extern "C" fn task_exit(task: *mut bindings::task_struct) {
    stats::inc(Stat::Exit);
    // SAFETY: The kernel passes the exiting task, which is current.
    let info = unsafe { TaskInfo::of(task) };
    if info.mask().load(Ordering::Acquire) & UNWIND_PENDING != 0 {
        // The mm is still there: deliver the pending requests now, since the
        // queued task work would only run once it is gone.
        deferred::process(&info);
        // SAFETY: `task` is current and alive.
        unsafe { bindings::task_work_cancel(task, info.work()) };
    }
}

unsafe extern "C" fn task_free(task: *mut bindings::task_struct) {
    stats::inc(Stat::Free);
    // SAFETY: The kernel passes a task that is being freed, nobody else
    // uses its state any more.
    cache::free(&unsafe { TaskInfo::of(task) });
}

unsafe extern "C" fn exit_to_user() {
    stats::inc(Stat::ExitToUser);
    deferred::exit_to_user(&TaskInfo::current());
}

unsafe extern "C" fn task_work(head: *mut bindings::callback_head) {
    stats::inc(Stat::TaskWork);
    // SAFETY: The kernel only calls this for the `work` head of a task's
    // state, and a task work runs on its own task (current).
    deferred::process(&unsafe { TaskInfo::from_work(head) });
}

static HOOKS: bindings::unwind_hooks = bindings::unwind_hooks {
    task_fork: Some(task_fork),
    task_exit: Some(task_exit),
    task_free: Some(task_free),
    exit_to_user: Some(exit_to_user),
    task_work: Some(task_work),
};

/// The registered hook table; dropping it unregisters and cleans every task.
pub(crate) struct Registration;

impl Registration {
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: `HOOKS` is static and complete.
        kernel::error::to_result(unsafe { bindings::unwind_hooks_register(&HOOKS) })?;
        Ok(Self)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // SAFETY: `HOOKS` was registered in `new()`.  On return no hook runs.
        unsafe { bindings::unwind_hooks_unregister(&HOOKS) };
        // No code of this module runs on any task's behalf now: take back
        // queued works and free every cache.
        let mut pending = 0u64;
        shim::for_each_thread(|t| {
            // SAFETY: `for_each_thread()` hands out live tasks.
            let info = unsafe { TaskInfo::of(t) };
            let bits = info.mask().load(Ordering::Acquire);
            // SAFETY: `t` is alive; cancelling takes the task's own lock.
            let cancelled = unsafe { bindings::task_work_cancel(t, info.work()) };
            if cancelled {
                pending += 1;
            }
            // A work already taken off the queue but not yet run clears the
            // mask itself in the kernel's trampoline.
            if cancelled || bits & UNWIND_PENDING == 0 {
                info.mask().store(0, Ordering::Release);
            }
            info.cookie().store(0, Ordering::Relaxed);
            cache::free(&info);
        });
        pr_info!("unloaded, {} pending task works cancelled\n", pending);
    }
}
