// SPDX-License-Identifier: GPL-2.0

//! Unload: every task's queued work taken back, and its request mask left
//! as the protocol needs it for the trampoline or a reloaded module.

use core::sync::atomic::Ordering;

use super::UNWIND_PENDING;
use crate::task::TaskInfo;

/// Cancels every task's queued work and clears its mask of this module's
/// state.  Returns how many works were cancelled.
///
/// # Safety
///
/// The hooks must be unregistered, and no work of this module registered
/// (each pins it): no code of ours runs for any task any more.
pub(crate) unsafe fn unload() -> u64 {
    let mut cancelled_works = 0u64;
    TaskInfo::for_each_thread(|info| {
        let cancelled = info.cancel_work();
        if cancelled {
            cancelled_works += 1;
        }
        // A work already taken off the queue but not yet run keeps
        // `PENDING` (the head is still in use) and nothing else: the
        // kernel's trampoline clears it, or a reloaded module's process
        // finds no cookie and no work bit in it.  A read-modify-write, so
        // that a clear by the trampoline between a read and a write of ours
        // is never undone.
        let keep = if cancelled { 0 } else { UNWIND_PENDING };
        // The injection build runs the trampoline here.
        #[cfg(unwind_inject)]
        if !cancelled {
            super::inject::unload_dequeued(info.mask());
        }
        info.mask().fetch_and(keep, Ordering::AcqRel);
    });
    cancelled_works
}
