// SPDX-License-Identifier: GPL-2.0

//! Declarations of the C helpers in `shim.c` (see `shim.h`).
//!
//! They wrap inline functions and macros that `bindgen` cannot turn into
//! callable functions; each one is a single call on the C side.

use kernel::bindings;
use kernel::ffi::{c_char, c_int, c_uint, c_ulong, c_void};

extern "C" {
    /// User registers saved at kernel entry of `current`, NULL for a
    /// kernel thread or when the entry did not come from user mode.
    pub(crate) fn unwind_rs_user_regs() -> *mut bindings::pt_regs;
    /// Whether `regs` are those of a 32-bit (IA32 emulation) task.
    pub(crate) fn unwind_rs_regs_compat(regs: *mut bindings::pt_regs) -> bool;
    /// Two consecutive user words at `addr` (4 bytes each if `compat`),
    /// without faulting: 0 or `-EFAULT`.
    pub(crate) fn unwind_rs_read_words_nofault(
        addr: c_ulong,
        out: *mut c_ulong,
        compat: bool,
    ) -> c_int;
    /// Whether the current context may take page faults.
    pub(crate) fn unwind_rs_can_fault() -> bool;
    pub(crate) fn unwind_rs_in_nmi() -> bool;
    pub(crate) fn unwind_rs_in_hardirq() -> bool;
    pub(crate) fn unwind_rs_irqs_disabled() -> bool;
    pub(crate) fn unwind_rs_cpu() -> c_uint;
    pub(crate) fn unwind_rs_irq_save() -> c_ulong;
    pub(crate) fn unwind_rs_irq_restore(flags: c_ulong);
    /// Calls `f` for every thread of every process, under `rcu_read_lock()`.
    pub(crate) fn unwind_rs_walk_threads(
        f: unsafe extern "C" fn(t: *mut bindings::task_struct, arg: *mut c_void),
        arg: *mut c_void,
    );
    pub(crate) fn unwind_rs_debugfs_create(
        names: *const *const c_char,
        values: *mut u64,
        n: c_uint,
    ) -> c_int;
    pub(crate) fn unwind_rs_debugfs_remove();
}

/// Interrupts disabled on this CPU for the guard's lifetime.
pub(crate) struct IrqGuard(c_ulong);

impl IrqGuard {
    pub(crate) fn new() -> Self {
        // SAFETY: Saving and disabling local interrupts is always allowed;
        // `Drop` restores the saved state.
        Self(unsafe { unwind_rs_irq_save() })
    }
}

impl Drop for IrqGuard {
    fn drop(&mut self) {
        // SAFETY: `self.0` was returned by `unwind_rs_irq_save()` on this CPU.
        unsafe { unwind_rs_irq_restore(self.0) };
    }
}

/// Whether the current context may take page faults.
pub(crate) fn can_fault() -> bool {
    // SAFETY: Only reads the current context's state.
    unsafe { unwind_rs_can_fault() }
}

/// Whether the current context is an NMI.
pub(crate) fn in_nmi() -> bool {
    // SAFETY: Only reads the preempt count.
    unsafe { unwind_rs_in_nmi() }
}

/// Whether the current context is a hard interrupt.
pub(crate) fn in_hardirq() -> bool {
    // SAFETY: Only reads the preempt count.
    unsafe { unwind_rs_in_hardirq() }
}

/// Whether interrupts are disabled on this CPU.
pub(crate) fn irqs_disabled() -> bool {
    // SAFETY: Only reads the CPU's interrupt flag.
    unsafe { unwind_rs_irqs_disabled() }
}

/// The CPU this code runs on (stable while interrupts are off).
pub(crate) fn cpu() -> u32 {
    // SAFETY: Only reads the per-CPU id.
    unsafe { unwind_rs_cpu() }
}

/// Calls `f` for every thread, under `rcu_read_lock()`, so `f` must not sleep.
pub(crate) fn for_each_thread<F: FnMut(*mut bindings::task_struct)>(mut f: F) {
    unsafe extern "C" fn trampoline<F: FnMut(*mut bindings::task_struct)>(
        t: *mut bindings::task_struct,
        arg: *mut c_void,
    ) {
        // SAFETY: `arg` is the `&mut F` passed below, alive for the whole walk.
        let f = unsafe { &mut *arg.cast::<F>() };
        f(t);
    }
    // SAFETY: `trampoline::<F>` matches the callback type and `arg` points to
    // `f`, which outlives the call.
    unsafe { unwind_rs_walk_threads(trampoline::<F>, (&raw mut f).cast()) };
}
