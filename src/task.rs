// SPDX-License-Identifier: GPL-2.0

//! Access to the per-task state that the kernel patch reserves for us in
//! `task_struct::unwind_hooks`.
//!
//! The request mask and the cookie are changed from NMI context, so they are
//! only ever accessed through atomics.

use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize};
use kernel::bindings;

use crate::cache::UnwindCache;

/// The per-task unwind state of one task.
#[derive(Clone, Copy)]
pub(crate) struct TaskInfo(*mut bindings::unwind_task_hooks);

impl TaskInfo {
    /// The state of `task`.
    ///
    /// # Safety
    ///
    /// `task` must point to a valid `task_struct` that outlives every use of
    /// the returned value.
    pub(crate) unsafe fn of(task: *mut bindings::task_struct) -> Self {
        // SAFETY: `task` is valid per the function's contract.
        Self(unsafe { &raw mut (*task).unwind_hooks })
    }

    /// The state of the current task.
    pub(crate) fn current() -> Self {
        // SAFETY: `current` is valid for as long as the code runs on its behalf,
        // which covers every use of a value obtained here.
        unsafe { Self::of(bindings::get_current()) }
    }

    /// The state that contains the task work head `head`.
    ///
    /// # Safety
    ///
    /// `head` must be the `work` member of a live `unwind_task_hooks`.
    pub(crate) unsafe fn from_work(head: *mut bindings::callback_head) -> Self {
        let off = core::mem::offset_of!(bindings::unwind_task_hooks, work);
        // SAFETY: Per the contract `head` lies `off` bytes into the struct.
        Self(unsafe { head.byte_sub(off).cast() })
    }

    /// The request mask (`PENDING`, `COOKIE_VALID` and one bit per work, see
    /// `protocol.rs`).
    pub(crate) fn mask(&self) -> &AtomicUsize {
        // SAFETY: The field is valid and aligned for the lifetime of the task,
        // and is only accessed atomically (the kernel patch reads it with
        // `atomic_long_read()`).
        unsafe { AtomicUsize::from_ptr((&raw mut (*self.0).unwind_mask.counter).cast()) }
    }

    /// The cookie of the current kernel entry, 0 when none was handed out.
    pub(crate) fn cookie(&self) -> &AtomicU64 {
        // SAFETY: As for `mask()`; the kernel only zeroes it at fork.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.0).cookie) }
    }

    /// The task's unwind cache, NULL until first used.
    pub(crate) fn cache(&self) -> &AtomicPtr<UnwindCache> {
        // SAFETY: As for `mask()`; the kernel only zeroes it at fork and frees
        // it with the task.
        unsafe { AtomicPtr::from_ptr((&raw mut (*self.0).cache).cast()) }
    }

    /// The task work head queued with `task_work_add()`.
    pub(crate) fn work(&self) -> *mut bindings::callback_head {
        // SAFETY: Only computes the field's address.
        unsafe { &raw mut (*self.0).work }
    }
}
