// SPDX-License-Identifier: GPL-2.0

//! What the kernel's hooks give the protocol: proof that the code runs in
//! one of them, and the hooks' SRCU read side.

use kernel::bindings;

/// Proof that the code runs in a hook that the kernel calls in task
/// context with this module pinned (exit, exec, task work): what
/// `process()` needs.
///
/// # Invariants
///
/// Made only by [`InHook::assume`], whose callers guarantee that context.
pub(crate) struct InHook(());

impl InHook {
    /// # Safety
    ///
    /// The caller must be one of the kernel patch's pinned hooks that may
    /// walk user stacks (`task_exit`, `task_exec`, `task_work`), running in
    /// task context on behalf of current.
    pub(crate) unsafe fn assume() -> Self {
        // INVARIANT: per the contract.
        Self(())
    }
}

/// The hooks' SRCU read side, which `unwind_hooks_synchronize()` waits for.
pub(crate) struct ReadGuard(core::ffi::c_int);

impl ReadGuard {
    pub(crate) fn new() -> Self {
        // SAFETY: Entering an SRCU read side is allowed in any context that
        // may run callbacks; `Drop` leaves it.
        Self(unsafe { bindings::unwind_hooks_read_lock() })
    }
}

impl Drop for ReadGuard {
    fn drop(&mut self) {
        // SAFETY: `self.0` came from `unwind_hooks_read_lock()`.
        unsafe { bindings::unwind_hooks_read_unlock(self.0) };
    }
}
