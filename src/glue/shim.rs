// SPDX-License-Identifier: GPL-2.0

//! Declarations of the C helpers in `shim.c` (see `shim.h`).
//!
//! They wrap inline functions and macros that `bindgen` cannot turn into
//! callable functions.  Most are a single call on the C side; the hot
//! paths' context helpers (`unwind_rs_request_begin()`,
//! `unwind_rs_walk_ctx()`) gather several in one call, and the
//! frame-pointer loop lives there because a user access section cannot
//! span calls into Rust.

use core::marker::PhantomData;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::ffi::{c_char, c_int, c_uint, c_ulong, c_void};

extern "C" {
    /// User registers saved at kernel entry of `current`, NULL for a
    /// kernel thread or when the entry did not come from user mode.
    pub(crate) fn unwind_rs_user_regs() -> *mut bindings::pt_regs;
    /// Two consecutive user words at `addr` (4 bytes each if `compat`),
    /// without faulting: 0 or `-EFAULT`.
    pub(crate) fn unwind_rs_read_words_nofault(
        addr: c_ulong,
        out: *mut c_ulong,
        compat: bool,
    ) -> c_int;
    /// The return address at `cfa - 8` into `out[1]` and, if `fp_slot`,
    /// the word at `cfa - 8 * fp_slot` into `out[0]`, without faulting:
    /// 0 or `-EFAULT`.
    pub(crate) fn unwind_rs_read_cfa_slots_nofault(
        cfa: c_ulong,
        fp_slot: c_uint,
        out: *mut c_ulong,
    ) -> c_int;
    /// Whether the current context may take page faults.
    pub(crate) fn unwind_rs_can_fault() -> bool;
    pub(crate) fn unwind_rs_in_nmi() -> bool;
    pub(crate) fn unwind_rs_in_hardirq() -> bool;
    pub(crate) fn unwind_rs_irqs_disabled() -> bool;
    fn unwind_rs_cookie_count(cpu: *mut c_uint) -> u64;
    fn unwind_rs_cookie_seed();
    /// Current's user registers, whether SFrame may be used and the
    /// memo's key, in one call: false without user registers.
    pub(crate) fn unwind_rs_walk_ctx(c: *mut WalkCtx) -> bool;
    /// Returns current (`struct task_struct`, `c_void` here: bindgen's
    /// holds a zero-sized member that `improper_ctypes` refuses) or NULL.
    fn unwind_rs_request_begin(c: *mut RequestCtxC) -> *mut c_void;
    fn unwind_rs_pagefault_disable();
    fn unwind_rs_pagefault_enable();
    fn unwind_rs_irq_save() -> c_ulong;
    fn unwind_rs_irq_restore(flags: c_ulong);
    /// Calls `f` for every thread of every process, under `rcu_read_lock()`.
    pub(crate) fn unwind_rs_walk_threads(
        f: unsafe extern "C" fn(t: *mut bindings::task_struct, arg: *mut c_void),
        arg: *mut c_void,
    );
    /// The counters' directory: one `u64` file per name, and
    /// `pending_unqueued`, whose reads call `pending_unqueued`.
    pub(crate) fn unwind_rs_debugfs_create(
        names: *const *const c_char,
        values: *mut u64,
        n: c_uint,
        pending_unqueued: unsafe extern "C" fn() -> u64,
    );
    /// Whether `work` is on `t`'s task work queue (read only, under the
    /// task's `pi_lock` as `task_work_cancel()` walks it).
    // Only a pointer to the task crosses; some of its members are empty
    // structs in small configurations, which the lint flags.
    #[allow(improper_ctypes)]
    pub(crate) fn unwind_rs_work_queued(
        t: *mut bindings::task_struct,
        work: *mut bindings::callback_head,
    ) -> bool;
    pub(crate) fn unwind_rs_debugfs_remove();
    /// One 8-byte user word at `addr`, without faulting: 0 or `-EFAULT`.
    pub(crate) fn unwind_rs_read_word_nofault(addr: c_ulong, out: *mut c_ulong) -> c_int;
    /// The `table_cache_kb` module parameter (also `sframe_cache_kb`).
    pub(crate) fn unwind_rs_sframe_cache_kb() -> c_uint;
    /// Adds `node` to the registry of saved mappings (`task::saved_maps`).
    pub(crate) fn unwind_rs_saved_maps_link(node: *mut bindings::list_head);
    /// Takes `node` off the registry (or off nothing: `list_del_init()`).
    pub(crate) fn unwind_rs_saved_maps_unlink(node: *mut bindings::list_head);
    /// Under the registry's lock, moves to `out` every node `claim` takes.
    pub(crate) fn unwind_rs_saved_maps_claim(
        out: *mut bindings::list_head,
        claim: unsafe extern "C" fn(node: *mut bindings::list_head) -> bool,
    );
    /// The first node of `list`, taken off it, or NULL.
    pub(crate) fn unwind_rs_list_pop(list: *mut bindings::list_head) -> *mut bindings::list_head;
    /// The SFrame cache's mutex.
    pub(crate) fn unwind_rs_sframe_lock();
    pub(crate) fn unwind_rs_sframe_unlock();
    /// Current's VMA at `ip` and a reference to its `struct file` if it
    /// is an executable file mapping (NULL otherwise; `v` empty if
    /// unmapped).  The file is `c_void` here: bindgen's `struct file`
    /// holds a zero-sized member that `improper_ctypes` refuses.
    pub(crate) fn unwind_rs_vma_file(ip: c_ulong, v: *mut VmaInfo) -> *mut c_void;
    /// The identity of `file`'s current version.
    pub(crate) fn unwind_rs_file_id(file: *mut c_void, id: *mut FileId);
    /// Current's address space and the version of its mappings; false
    /// while they are being changed (or cannot be versioned).
    pub(crate) fn unwind_rs_mm_key(k: *mut MmKey) -> bool;
    /// Frame-pointer steps of a 64-bit stack in one user access section
    /// while the IPs stay in `[lo, hi)`: 0 (left the range, or full), 1
    /// (end of the chain) or `-EFAULT` (a page to fault in).
    pub(crate) fn unwind_rs_fp_frames(w: *mut FpWalk) -> c_int;
    /// Table steps while the memo `w.rows` holds each frame's row in the
    /// common form (`shim.c`).
    pub(crate) fn unwind_rs_memo_run(w: *mut MemoRun);
}

/// Matches `struct unwind_rs_fp_walk` in `shim.h` (checked by `shim.c`).
#[repr(C)]
pub(crate) struct FpWalk {
    pub(crate) ip: usize,
    pub(crate) sp: usize,
    pub(crate) fp: usize,
    pub(crate) lo: usize,
    pub(crate) hi: usize,
    pub(crate) entries: *mut usize,
    pub(crate) nr: u32,
    pub(crate) max: u32,
}

/// Matches `struct unwind_rs_memo_run` in `shim.h` (checked by `shim.c`);
/// `rows` points to a walk's row memo (`table_find::RowSlot`s).
#[repr(C)]
pub(crate) struct MemoRun {
    pub(crate) ip: usize,
    pub(crate) sp: usize,
    pub(crate) fp: usize,
    pub(crate) entries: *mut usize,
    pub(crate) rows: *const c_void,
    pub(crate) nr: u32,
    pub(crate) max: u32,
    pub(crate) eh: u32,
    pub(crate) done: bool,
}

/// Matches `struct unwind_rs_walk_ctx` in `shim.h` (checked by `shim.c`):
/// `unwind::regs::UserRegs`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct WalkCtx {
    /// Current (`struct task_struct`).
    pub(crate) task: *mut c_void,
    pub(crate) ip: usize,
    pub(crate) sp: usize,
    pub(crate) bp: usize,
    /// Valid if `key_valid`.
    pub(crate) key: MmKey,
    pub(crate) cs: u16,
    pub(crate) ss: u16,
    /// A 32-bit (IA32 emulation) user context.
    pub(crate) compat: bool,
    /// The context may take page faults.
    pub(crate) can_fault: bool,
    /// SFrame may be used: faults are allowed and the SFrame cache is on.
    pub(crate) sframe: bool,
    pub(crate) key_valid: bool,
}

/// Matches `struct unwind_rs_vma` in `shim.h` (checked by `shim.c`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct VmaInfo {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) pgoff: usize,
}

/// Matches `struct unwind_rs_file_id` in `shim.h` (checked by `shim.c`).
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FileId {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) ctime_sec: i64,
    pub(crate) mtime_sec: i64,
    pub(crate) ctime_nsec: u32,
    pub(crate) mtime_nsec: u32,
    pub(crate) generation: u32,
    pub(crate) pad: u32,
}

/// Matches `struct unwind_rs_mm_key` in `shim.h` (checked by `shim.c`).
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MmKey {
    pub(crate) mm: usize,
    pub(crate) exec_id: u64,
    pub(crate) seq: u32,
    pub(crate) pad: u32,
}

/// Current's address space and the version of its mappings: two equal
/// keys mean the same address space with no mapping changed in between.
/// `None` while a mapping is being changed.
pub(crate) fn mm_key() -> Option<MmKey> {
    let mut k = MmKey::default();
    // SAFETY: `k` is writable; the helper only reads current's state.
    unsafe { unwind_rs_mm_key(&mut k) }.then_some(k)
}

const _: () = {
    assert!(core::mem::size_of::<MmKey>() == 24);
    assert!(core::mem::size_of::<FpWalk>() == 56);
    assert!(core::mem::size_of::<MemoRun>() == 56);
    assert!(core::mem::offset_of!(MemoRun, nr) == 40);
    assert!(core::mem::offset_of!(MemoRun, done) == 52);
    assert!(core::mem::offset_of!(FpWalk, nr) == 48);
    assert!(core::mem::offset_of!(MmKey, seq) == 16);
    assert!(core::mem::size_of::<WalkCtx>() == 64);
    assert!(core::mem::offset_of!(WalkCtx, cs) == 56);
    assert!(core::mem::size_of::<VmaInfo>() == 24);
    assert!(core::mem::size_of::<FileId>() == 56);
    assert!(core::mem::offset_of!(FileId, ctime_nsec) == 40);
    assert!(core::mem::offset_of!(FileId, generation) == 48);
};

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

/// Matches `struct unwind_rs_request_ctx` in `shim.h` (checked by `shim.c`).
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
/// present pages, with frame pointers (no table lookup, no file read).
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
