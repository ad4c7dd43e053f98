// SPDX-License-Identifier: GPL-2.0

//! The hook table registered with the kernel patch (`linux/unwind_hooks.h`).
//!
//! The kernel calls the fork and free hooks inside an SRCU read-side
//! section of its own, the exit-to-user hook with interrupts off, and the
//! hooks that walk user stacks (exit, exec, task work) with this module
//! pinned and no read section held: a walk blocked in a fault
//! (userfaultfd, FUSE) never blocks `cancel()`.  The exec and exit hooks'
//! walks, and a dying task's, do not fault and read no file at all
//! (`Faults::Never`).  Callbacks run inside the SRCU read
//! side (`deferred::ReadGuard`), which `cancel()` waits for.  Tasks still
//! holding a queued work after unload only reach the kernel's trampoline.

use core::ptr::NonNull;
use core::sync::atomic::Ordering;
use kernel::bindings;
use kernel::prelude::*;

use crate::deferred::{self, Faults, InHook, UNWIND_PENDING};
use crate::sys::context;
use crate::sys::stats::{self, Stat};
use crate::task::{cache, saved_maps, Current, TaskInfo};

unsafe extern "C" fn task_fork(_task: *mut bindings::task_struct) {
    // The kernel already zeroed the new task's state.
    stats::inc(Stat::Fork);
}

/// Runs `task`'s pending requests now, instead of its queued task work.
///
/// # Safety
///
/// `task` must be current.
unsafe fn run_pending_now(task: *mut bindings::task_struct, faults: Faults) -> Option<Current> {
    let task = NonNull::new(task)?;
    // SAFETY: `task` is current per the contract.
    let cur = unsafe { Current::assume(TaskInfo::of(task)) };
    // Take the head off the queue first: once `process()` clears `PENDING`
    // a request may queue it again.
    if cur.mask().load(Ordering::Acquire) & UNWIND_PENDING != 0 && cur.cancel_work() {
        // SAFETY: Our callers are the exit and exec hooks.
        deferred::process(&cur, &unsafe { InHook::assume() }, faults);
    }
    Some(cur)
}

unsafe extern "C" fn task_exit(task: *mut bindings::task_struct) {
    stats::inc(Stat::Exit);
    // The mm is still there: deliver the pending requests now, since the
    // queued task work would only run once it is gone.  Requests are
    // refused from here on (`PF_EXITING`).  An exit waits on no one: a
    // fault or a table read on a file server that does not answer (FUSE,
    // NFS) would hold exit_group() and keep this module pinned, so this
    // walk never faults and reads no file (cached tables only).
    // SAFETY: The kernel passes the exiting task, which is current.
    unsafe { run_pending_now(task, Faults::Never) };
}

unsafe extern "C" fn task_exec(task: *mut bindings::task_struct) {
    stats::inc(Stat::Exec);
    // The old program is still mapped: its requests get its stack, and the
    // new program starts with a new cookie and an empty cache.  An NMI may
    // request in between: a few rounds deliver those too.
    //
    // execve() holds `cred_guard_mutex` here, and de_thread() has killed
    // the other threads: a fault on a userfaultfd page whose handler was
    // one of them would hold the exec (and everyone waiting for the mutex:
    // ptrace attach, /proc) until SIGKILL.  So this walk never faults: it
    // reads present pages only, with the tables already cached or frame
    // pointers (no file read, no lock it would wait for), and stops at the
    // first page that is not there.
    for _ in 0..4 {
        // SAFETY: The kernel passes the task calling execve(), current.
        let Some(cur) = (unsafe { run_pending_now(task, Faults::Never) }) else {
            return;
        };
        if deferred::exec_reset(&cur) {
            break;
        }
    }
}

unsafe extern "C" fn task_free(task: *mut bindings::task_struct) {
    stats::inc(Stat::Free);
    let Some(task) = NonNull::new(task) else {
        return;
    };
    // SAFETY: The kernel passes a task that is being freed: it is still
    // allocated during this call, and nobody uses its state any more.
    unsafe { cache::free(&TaskInfo::of(task)) };
}

unsafe extern "C" fn exit_to_user() {
    stats::inc(Stat::ExitToUser);
    deferred::exit_to_user(&Current::get());
}

unsafe extern "C" fn task_work(head: *mut bindings::callback_head) {
    stats::inc(Stat::TaskWork);
    let Some(head) = NonNull::new(head) else {
        return;
    };
    // A task that is dying (a fatal signal, the OOM killer) walks as an
    // exiting one does: it must not wait on anyone, nor allocate table
    // buffers from the reserves meant to let it exit.
    let faults = if context::dying() {
        Faults::Never
    } else {
        Faults::Allowed
    };
    // SAFETY: The kernel only calls this for the `work` head of a task's
    // state, and a task work runs on its own task, which is current.
    deferred::process(
        &unsafe { Current::assume(TaskInfo::from_work(head)) },
        // SAFETY: This is the task work hook.
        &unsafe { InHook::assume() },
        faults,
    );
}

static HOOKS: bindings::unwind_hooks = bindings::unwind_hooks {
    task_fork: Some(task_fork),
    task_exit: Some(task_exit),
    task_exec: Some(task_exec),
    task_free: Some(task_free),
    exit_to_user: Some(exit_to_user),
    task_work: Some(task_work),
    perf_request: Some(super::perf::request),
};

/// The registered hook table; dropping it unregisters and cleans every task.
pub(crate) struct Registration;

impl Registration {
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: `HOOKS` is static and complete; `THIS_MODULE` is this
        // module, which the kernel pins while a pinned hook runs.
        kernel::error::to_result(unsafe {
            bindings::unwind_hooks_register(&HOOKS, crate::THIS_MODULE.as_ptr())
        })?;
        Ok(Self)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        // First, while `task_free` still runs for tasks freed meanwhile:
        // the saved mappings of every cache, those of tasks that left the
        // thread list too (see `task::saved_maps`).
        // SAFETY: No walk runs or starts: the module is going, and every
        // walk runs in a pinned hook or for a module that depends on us.
        let saved = unsafe { saved_maps::drain() };
        // SAFETY: `HOOKS` was registered in `new()`.  On return no hook runs.
        unsafe { bindings::unwind_hooks_unregister(&HOOKS) };
        // No code of this module runs on any task's behalf now: take back
        // queued works, then every cache.
        // SAFETY: The hooks are unregistered, and this module is going, so
        // no work of it is registered (each pins it).
        let pending = unsafe { deferred::unload() };
        // SAFETY: As above, and no work is queued any more.
        unsafe { cache::take_all() };
        pr_info!(
            "unloaded, {} pending task works cancelled, {} saved mapping sets freed\n",
            pending,
            saved
        );
    }
}
