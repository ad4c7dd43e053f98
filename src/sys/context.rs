// SPDX-License-Identifier: GPL-2.0

//! The current context, as types: interrupts off (`IrqGuard`), page
//! faults off (`NoFaultGuard`), a request's context (`RequestCtx`), and
//! the questions every layer asks of it (may it fault, is it an NMI, is
//! current a user task), with the per-CPU cookie counters.
//!
//! The C helpers (`context.c`, declared in `sys.h`) wrap inline functions
//! and macros that `bindgen` cannot turn into callable functions; a hot
//! path's checks are gathered in one call (`unwind_rs_request_begin()`).

use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::ffi::{c_uint, c_ulong, c_void};

extern "C" {
    /// User registers saved at kernel entry of `current`, NULL for a
    /// kernel thread or when the entry did not come from user mode.
    pub(crate) fn unwind_rs_user_regs() -> *mut bindings::pt_regs;
    /// Whether the current context may take page faults.
    fn unwind_rs_can_fault() -> bool;
    fn unwind_rs_dying() -> bool;
    fn unwind_rs_module_live() -> bool;
    fn unwind_rs_in_nmi() -> bool;
    fn unwind_rs_in_hardirq() -> bool;
    fn unwind_rs_irqs_disabled() -> bool;
    fn unwind_rs_cookie_count(cpu: *mut c_uint) -> u64;
    fn unwind_rs_cookie_seed();
    /// Returns current (`struct task_struct`, `c_void` here: bindgen's
    /// holds a zero-sized member that `improper_ctypes` refuses) or NULL.
    fn unwind_rs_request_begin(c: *mut RequestCtxC) -> *mut c_void;
    fn unwind_rs_pagefault_disable();
    fn unwind_rs_pagefault_enable();
    fn unwind_rs_irq_save() -> c_ulong;
    fn unwind_rs_irq_restore(flags: c_ulong);
}

/// Interrupts disabled on this CPU for the guard's lifetime.
///
/// Functions that need interrupts off take a `&IrqGuard` as proof.
///
/// # Invariants
///
/// Local interrupts are disabled from `new()` until `drop()`, which restores
/// the state `self.0` saved, on the CPU that created the guard: the guard is
/// neither `Send` nor `Sync`, so it cannot be dropped on, or lent to,
/// another CPU.
#[must_use = "interrupts are enabled again when the guard is dropped"]
pub(crate) struct IrqGuard(c_ulong, PhantomData<*mut ()>);

impl IrqGuard {
    pub(crate) fn new() -> Self {
        // SAFETY: Saving and disabling local interrupts is always allowed;
        // `Drop` restores the saved state.
        let flags = unsafe { unwind_rs_irq_save() };
        // INVARIANT: interrupts are off now, on this CPU.
        Self(flags, PhantomData)
    }
}

/// Matches `struct unwind_rs_request_ctx` in `sys.h` (checked by `api/exports.c`).
#[repr(C)]
#[derive(Default)]
struct RequestCtxC {
    flags: c_ulong,
    in_nmi: bool,
    in_hardirq: bool,
    irqs_were_off: bool,
}

const _: () = assert!(core::mem::size_of::<RequestCtxC>() == 16);

/// A request's context, checked in one helper call: current may request,
/// and interrupts are off until `irq` is dropped.
pub(crate) struct RequestCtx {
    /// Current.
    pub(crate) task: NonNull<bindings::task_struct>,
    /// The request came from NMI context.
    pub(crate) in_nmi: bool,
    /// The request came from a hard interrupt.
    pub(crate) in_hardirq: bool,
    /// Interrupts were already off.
    pub(crate) irqs_were_off: bool,
    /// Interrupts off.
    pub(crate) irq: IrqGuard,
}

impl RequestCtx {
    /// `None` if current may not request: a kernel thread, a user worker,
    /// an exiting task, or an entry that did not come from user mode.
    pub(crate) fn begin() -> Option<Self> {
        let mut c = RequestCtxC::default();
        // SAFETY: `c` is writable; the helper only reads current's state,
        // and disables interrupts only when it returns current.
        let task = NonNull::new(unsafe { unwind_rs_request_begin(&mut c) })?.cast();
        Some(Self {
            task,
            in_nmi: c.in_nmi,
            in_hardirq: c.in_hardirq,
            irqs_were_off: c.irqs_were_off,
            // INVARIANT: the helper disabled interrupts on this CPU and
            // saved the previous state in `c.flags`.
            irq: IrqGuard(c.flags, PhantomData),
        })
    }
}

impl Drop for IrqGuard {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `self.0` was saved by
        // `unwind_rs_irq_save()` on this CPU, and nothing has restored it.
        unsafe { unwind_rs_irq_restore(self.0) };
    }
}

/// While it lives, a user access that would fault fails at once instead
/// (`pagefault_disable()`), and `can_fault()` says no: a walk reads only
/// present pages, with the tables already cached (where the context may
/// sleep) or frame pointers, and reads no file.
///
/// # Invariants
///
/// Page faults are disabled for current from `new()` until `drop()`; the
/// count is current's, so the guard is neither `Send` nor `Sync`.
#[must_use = "page faults are allowed again when the guard is dropped"]
pub(crate) struct NoFaultGuard(PhantomData<*mut ()>);

impl NoFaultGuard {
    pub(crate) fn new() -> Self {
        // SAFETY: Disabling page faults for current is always allowed (it
        // nests); `Drop` enables them again, on the same task.
        unsafe { unwind_rs_pagefault_disable() };
        // INVARIANT: disabled now, for current.
        Self(PhantomData)
    }
}

impl Drop for NoFaultGuard {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `new()` disabled them for this task.
        unsafe { unwind_rs_pagefault_enable() };
    }
}

/// The linear base of user segment `selector` of current: base 0 for a
/// selector that names no present user code or data segment.
pub(crate) fn segment_base(selector: u16, _irq: &IrqGuard) -> usize {
    // SAFETY: Interrupts are off (`_irq`), which the helper requires, and it
    // copes with any selector.
    unsafe { bindings::segment_base_address(u32::from(selector)) as usize }
}

/// Starts every CPU's cookie counter from the clock (module init, before
/// any cookie is handed out).
pub(crate) fn cookie_seed() {
    // SAFETY: Called once at init, before the hooks are registered: no
    // counter is in use.
    unsafe { unwind_rs_cookie_seed() };
}

/// This CPU and its next cookie count (a per-CPU counter, never 0).
pub(crate) fn cookie_count(_irq: &IrqGuard) -> (u32, u64) {
    let mut cpu = 0;
    // SAFETY: Interrupts are off (`_irq`): the CPU is stable and nothing
    // else on it touches the counter meanwhile; `cpu` is writable.
    let count = unsafe { unwind_rs_cookie_count(&mut cpu) };
    (cpu, count)
}

/// Current's `PF_*` flags.
pub(crate) fn current_flags() -> u32 {
    // SAFETY: `current` is valid in every context this module runs in.
    unsafe { (*bindings::get_current()).flags }
}

/// Whether current has a user stack of its own, as 6.12's `is_user_task()`
/// decides: not a kernel thread, nor a user worker (io_uring, vhost), whose
/// saved registers are no user context.
pub(crate) fn is_user_task() -> bool {
    current_flags() & (bindings::PF_KTHREAD | bindings::PF_USER_WORKER) == 0
}

/// Whether the current context may take page faults.
pub(crate) fn can_fault() -> bool {
    // SAFETY: Only reads the current context's state.
    unsafe { unwind_rs_can_fault() }
}

/// Whether current is dying: a fatal signal is pending, or it is an OOM
/// victim.
pub(crate) fn dying() -> bool {
    // SAFETY: Only reads current's signal and OOM state.
    unsafe { unwind_rs_dying() }
}

/// Whether the current context is an NMI.
/// False once `rmmod` has begun to unload this module (it is GOING), even
/// before its exit runs.
pub(crate) fn module_live() -> bool {
    // SAFETY: Reads this module's state; any context.
    unsafe { unwind_rs_module_live() }
}

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
