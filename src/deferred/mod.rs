// SPDX-License-Identifier: GPL-2.0

//! Deferred requests: callable from any context, NMI included; the walk
//! happens once, in task context, before the task returns to user space.
//!
//! Every registered work owns one bit of the task's request mask; the
//! mask/cookie protocol lives in `protocol.rs` (with its guarantee), this
//! file wires it to the kernel: the task work, the cache, the works.

use core::ptr;
use core::sync::atomic::{AtomicI32, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use kernel::bindings;
use kernel::ffi::c_int;
use kernel::prelude::*;

use crate::sys::context::{self, IrqGuard, NoFaultGuard, RequestCtx};
use crate::sys::stats::{self, Stat};
use crate::task::{cache, Current, TaskInfo};
use crate::unwind::{self, UnwindStacktrace};
use hook::ReadGuard;
use protocol::{Step, RESERVED_BITS, RESERVED_MASK};

mod cookie;
mod hook;
#[cfg(unwind_inject)]
pub(crate) mod inject;
mod unload;
// Plain `pub` items: the same file is a module of the host test crate.
#[allow(unreachable_pub)]
pub(crate) mod protocol;

pub(crate) use hook::InHook;
pub(crate) use protocol::PENDING as UNWIND_PENDING;
pub(crate) use unload::unload;
pub(crate) const NR_BITS: usize = usize::BITS as usize;

/// The protocol's view of one task's state; with the guard of the
/// interrupts-off section it runs in, if any.
struct Proto<'a>(&'a TaskInfo<'a>, Option<&'a IrqGuard>);

impl protocol::Task for Proto<'_> {
    fn mask(&self) -> &AtomicUsize {
        self.0.mask()
    }
    fn cookie(&self) -> &AtomicU64 {
        self.0.cookie()
    }
    fn new_cookie(&self) -> u64 {
        match self.1 {
            Some(irq) => cookie::next(irq),
            // Only requests install cookies, and they hold a guard.
            None => cookie::next(&IrqGuard::new()),
        }
    }
    #[inline(always)]
    fn step(&self, _s: Step) {
        #[cfg(unwind_inject)]
        inject::fire(_s);
    }
}

/// Whether a task work queued now must force a re-entry before user code
/// runs: from NMI, and from task context with interrupts off, which may be
/// past the exit-to-user work loop (see `protocol.rs`).
fn prompt(in_nmi: bool, in_hardirq: bool, irqs_were_off: bool) -> bool {
    in_nmi || (irqs_were_off && !in_hardirq)
}

/// Queues current's task work; on failure clears `undo` from the mask.
fn queue(info: &Current, prompt: bool, undo: usize) -> Result {
    let mode = if prompt {
        bindings::task_work_notify_mode_TWA_NMI_CURRENT
    } else {
        bindings::task_work_notify_mode_TWA_RESUME
    };
    let head = info.work().as_ptr();
    // SAFETY: The caller set `PENDING`, so the head is not queued and nobody
    // else writes it; `info` is current's; the kernel trampoline outlives
    // this module.
    let add = || unsafe {
        (*head).func = Some(bindings::unwind_hooks_task_work);
        bindings::task_work_add(info.task_ptr(), head, mode)
    };
    // The injection build can fail it as for an exiting task.
    #[cfg(unwind_inject)]
    let ret = if inject::queue_fails() {
        ESRCH.to_errno()
    } else {
        add()
    };
    #[cfg(not(unwind_inject))]
    let ret = add();
    if ret != 0 {
        // The task is exiting: nobody will run the work.  Clear only what
        // this request set; the cookie may already be handed out.
        info.mask().fetch_and(!undo, Ordering::AcqRel);
        return Err(Error::from_errno(ret));
    }
    stats::inc(Stat::Queued);
    Ok(())
}

/// Matches `unwind_callback_t`.
pub(crate) type UnwindCallback =
    Option<unsafe extern "C" fn(work: *mut UnwindWork, trace: *mut UnwindStacktrace, cookie: u64)>;

/// Matches `struct unwind_work` in `include/linux/unwind_deferred.h`
/// (`api/exports.c` checks the C side).  The caller owns it; `bit` is read
/// and written atomically only (`work_bit()`), as requests read it in NMI.
#[repr(C)]
pub(crate) struct UnwindWork {
    pub(crate) list: bindings::list_head,
    pub(crate) func: UnwindCallback,
    pub(crate) bit: c_int,
}

impl UnwindWork {
    /// An unregistered work, for the module's own (`api::perf`).
    pub(crate) const EMPTY: Self = Self {
        list: bindings::list_head {
            next: ptr::null_mut(),
            prev: ptr::null_mut(),
        },
        func: None,
        bit: -1,
    };
}

const _: () = {
    assert!(core::mem::size_of::<UnwindWork>() == 32);
    assert!(core::mem::offset_of!(UnwindWork, func) == 16);
    assert!(core::mem::offset_of!(UnwindWork, bit) == 24);
};

/// The registered works, indexed by bit.  Readers hold the hooks' SRCU (task
/// work, exit) or run with interrupts off (requests); cancel waits for both.
#[allow(clippy::declare_interior_mutable_const)]
const NO_WORK: AtomicPtr<UnwindWork> = AtomicPtr::new(ptr::null_mut());
static SLOTS: [AtomicPtr<UnwindWork>; NR_BITS] = [NO_WORK; NR_BITS];

/// Bits handed out; a bit is returned only once cancel has cleaned it from
/// every task, so a new work never inherits stale requests.
static USED_BITS: AtomicUsize = AtomicUsize::new(RESERVED_MASK);

/// Bits of the module's own works, which do not pin it (`Pin::No`).
static UNPINNED_BITS: AtomicUsize = AtomicUsize::new(0);

/// Whether a registered work pins the module.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pin {
    /// Another module's work: its callback and bit live here.
    Yes,
    /// The module's own work (perf's), which it cancels before unload.
    No,
}

/// The `bit` field of a work, which requests read from NMI context.
///
/// # Safety
///
/// `work` must point to a live `struct unwind_work`.
unsafe fn work_bit<'a>(work: *mut UnwindWork) -> &'a AtomicI32 {
    // SAFETY: Valid per the contract; `c_int` and `AtomicI32` share a layout.
    unsafe { AtomicI32::from_ptr(&raw mut (*work).bit) }
}

/// The bit of a registered work, or `None` if `work` is not registered.
///
/// # Safety
///
/// `work` must point to a live `struct unwind_work`.
unsafe fn registered_bit(work: *mut UnwindWork) -> Option<usize> {
    // SAFETY: Per the contract.
    let bit = unsafe { work_bit(work) }.load(Ordering::Relaxed);
    let bit = usize::try_from(bit).ok()?;
    if bit < RESERVED_BITS as usize || bit >= NR_BITS {
        return None;
    }
    (SLOTS[bit].load(Ordering::Acquire) == work).then_some(bit)
}

/// `unwind_deferred_init()`.
///
/// # Safety
///
/// `work` must be NULL or point to memory for a `struct unwind_work` that
/// stays valid until `cancel()` returns for it.  With `Pin::No`, the
/// module must cancel `work` before it unloads.
pub(crate) unsafe fn init(work: *mut UnwindWork, func: UnwindCallback, pin: Pin) -> Result {
    if work.is_null() || func.is_none() {
        return Err(EINVAL);
    }
    // SAFETY: `work` is valid per the contract (its content may be garbage,
    // which `registered_bit()` copes with).
    if unsafe { registered_bit(work) }.is_some() {
        return Err(EBUSY);
    }
    let mut used = USED_BITS.load(Ordering::Relaxed);
    let bit = loop {
        if used == usize::MAX {
            return Err(EBUSY);
        }
        let bit = (!used).trailing_zeros() as usize;
        match USED_BITS.compare_exchange_weak(
            used,
            used | (1 << bit),
            Ordering::AcqRel,
            Ordering::Relaxed,
        ) {
            Ok(_) => break bit,
            Err(cur) => used = cur,
        }
    };
    // SAFETY: `work` is valid and not yet visible to anybody else.
    unsafe {
        let list = &raw mut (*work).list;
        (*list).next = list;
        (*list).prev = list;
        (*work).func = func;
        work_bit(work).store(bit as c_int, Ordering::Relaxed);
    }
    if pin == Pin::Yes {
        // SAFETY: `THIS_MODULE` is this live module.
        unsafe { bindings::__module_get(crate::THIS_MODULE.as_ptr()) };
    } else {
        UNPINNED_BITS.fetch_or(1 << bit, Ordering::Relaxed);
    }
    SLOTS[bit].store(work, Ordering::Release);
    Ok(())
}

/// `unwind_deferred_cancel()`.
///
/// # Safety
///
/// `work` must be NULL or point to a live `struct unwind_work`.  Must not be
/// called from one of the callbacks (it waits for them).
pub(crate) unsafe fn cancel(work: *mut UnwindWork) {
    // SAFETY: Per the contract.
    unsafe { cancel_all(&[work]) };
}

/// Cancels `works` with one wait for requests and callbacks, not one per
/// work (perf's several works at unload).
///
/// # Safety
///
/// As [`cancel()`], for each of `works`.
pub(crate) unsafe fn cancel_all(works: &[*mut UnwindWork]) {
    let mut bits = 0usize;
    for &work in works {
        if work.is_null() {
            continue;
        }
        // SAFETY: Valid per the contract.
        let Some(bit) = (unsafe { registered_bit(work) }) else {
            continue;
        };
        if SLOTS[bit]
            .compare_exchange(work, ptr::null_mut(), Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            // A concurrent cancel won.
            continue;
        }
        // SAFETY: Valid per the contract.
        unsafe { work_bit(work) }.store(-1, Ordering::Relaxed);
        bits |= 1 << bit;
    }
    if bits == 0 {
        return;
    }
    // Requests run with interrupts off (an RCU read-side section): after
    // this none can still set the bits.  Callbacks only run from the task
    // work and exit hooks, inside the hooks' SRCU section: wait for them.
    // SAFETY: Cancel runs in process context.
    unsafe {
        bindings::synchronize_rcu();
        bindings::unwind_hooks_synchronize();
    }
    TaskInfo::for_each_thread(|info| {
        info.mask().fetch_and(!bits, Ordering::AcqRel);
        if let Some(c) = cache::get(&info) {
            c.completed().fetch_and(!bits, Ordering::AcqRel);
        }
    });
    // A task work that read its mask before the loop above may still hold
    // a bit: wait for it before a new work can get the bit.
    // SAFETY: As above.
    unsafe { bindings::unwind_hooks_synchronize() };
    let mut left = bits;
    while left != 0 {
        let b = 1usize << left.trailing_zeros();
        left &= left - 1;
        let unpinned = UNPINNED_BITS.fetch_and(!b, Ordering::Relaxed) & b != 0;
        USED_BITS.fetch_and(!b, Ordering::AcqRel);
        if !unpinned {
            // SAFETY: Drops the reference taken in `init()`.
            unsafe { bindings::module_put(crate::THIS_MODULE.as_ptr()) };
        }
    }
}

/// What a successful [`request()`] found (see [`protocol::Request`]).
pub(crate) struct Requested {
    /// The work had already requested in this entry.
    pub(crate) already: bool,
    /// ... and its callback for this entry has begun (its batch was
    /// taken) or is done.
    pub(crate) taken: bool,
}

/// `unwind_deferred_request()`: `already` when the work had requested in
/// this entry already (its callback queued, running or done).
///
/// # Safety
///
/// `work` must be NULL or point to a live `struct unwind_work`.
#[inline]
pub(crate) unsafe fn request(work: *mut UnwindWork, cookie: &mut u64) -> Result<Requested> {
    *cookie = 0;
    stats::inc(Stat::Requests);
    if work.is_null() {
        return Err(EINVAL);
    }
    // A user task in an entry from user mode; an exiting task's requests
    // are run by the exit hook, once.  Interrupts off from here: the CPU is
    // stable for the cookie, and cancel's `synchronize_rcu()` waits for us.
    let ctx = RequestCtx::begin().ok_or(EINVAL)?;
    // SAFETY: `work` is valid per the contract.
    let bit = unsafe { registered_bit(work) }.ok_or(EINVAL)?;
    // SAFETY: `begin()` returns current.
    let info = unsafe { Current::from_task(ctx.task) };
    let r = protocol::request(&Proto(&info, Some(&ctx.irq)), bit as u32);
    if r.queue {
        let p = prompt(ctx.in_nmi, ctx.in_hardirq, ctx.irqs_were_off);
        queue(&info, p, r.undo)?;
    }
    *cookie = r.cookie;
    // Its callback may also be done while another work's request set
    // `PENDING` again: `completed` says so (reset with the mask).
    let done = || {
        cache::get(&info).is_some_and(|c| c.completed().load(Ordering::Acquire) & (1 << bit) != 0)
    };
    Ok(Requested {
        already: r.already,
        taken: r.taken || (r.already && done()),
    })
}

/// The trace of this entry: the cache, or a walk that fills it.
fn cached_walk(cur: &Current, trace: &mut UnwindStacktrace) -> Result {
    let (nr, entries) = cache::get_or_alloc(cur)?.trace(cur, |e, maps| unwind::unwind(e, maps))?;
    trace.nr = nr;
    trace.entries = entries;
    Ok(())
}

/// `unwind_user_faultable()`: the trace of this entry, from the cache or
/// from a walk that fills it.
pub(crate) fn faultable(trace: &mut UnwindStacktrace) -> Result {
    if !context::can_fault() || !context::is_user_task() || !unwind::has_user_regs() {
        return Err(EINVAL);
    }
    let cur = Current::get();
    {
        // The cache belongs to this entry: the return to user space must
        // reset it, which a valid cookie makes sure of.  Interrupts are on
        // here, so no re-entry is needed.
        let irq = IrqGuard::new();
        protocol::get_cookie(&Proto(&cur, Some(&irq)), false);
    }
    cached_walk(&cur, trace)
}

/// `unwind_user_get_cookie()`: 0 for kernel threads and user workers.
pub(crate) fn get_cookie() -> u64 {
    if !context::is_user_task() {
        return 0;
    }
    let irqs_were_off = context::irqs_disabled();
    let irq = IrqGuard::new();
    let info = Current::get();
    let prompt = prompt(context::in_nmi(), context::in_hardirq(), irqs_were_off);
    let (cookie, must_queue) = protocol::get_cookie(&Proto(&info, Some(&irq)), prompt);
    if must_queue && queue(&info, true, UNWIND_PENDING).is_err() {
        return 0;
    }
    cookie
}

/// Whether the walk of [`process()`] may fault user pages in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Faults {
    /// The task work's walk: page faults, tables read from files.
    Allowed,
    /// The walk of a task that must not wait on anyone: exec, exit, a
    /// dying task's work (see `api::hooks`).  Present pages only, the
    /// tables already cached, frame pointers otherwise; no file read, and
    /// no lock it would wait for.
    Never,
}

/// Runs the pending requests of current: one walk, one callback per work.
///
/// Called from the task_work, exit and exec hooks (`InHook`: task context,
/// module pinned).  The walk runs outside any read-side section; the
/// callbacks inside the hooks' SRCU read side, which `cancel()` waits for.
pub(crate) fn process(cur: &Current, _hook: &InHook, faults: Faults) {
    let p = Proto(cur, None);
    let Some(batch) = protocol::process_begin(&p) else {
        return;
    };
    let mut trace = UnwindStacktrace {
        nr: 0,
        entries: ptr::null_mut(),
    };
    if batch.bits != 0 {
        // Only around the walk: the callbacks are the consumers'.
        let _nofault = (faults == Faults::Never).then(NoFaultGuard::new);
        // On failure (no memory) the callbacks still run, with an empty trace.
        let _ = cached_walk(cur, &mut trace);
    }
    // Without a cache (no memory) nothing records completed works.
    let none = AtomicUsize::new(0);
    let completed = cache::get(cur).map_or(&none, |c| c.completed());
    let _srcu = ReadGuard::new();
    protocol::process_deliver(&p, batch, completed, |bit, cookie| {
        // Cancel waits for the read side we hold: a work seen here stays
        // valid until we are done.
        let work = SLOTS[bit as usize].load(Ordering::Acquire);
        if work.is_null() {
            return false;
        }
        // SAFETY: The work stays valid while registered, and cancel waits
        // for the read side we hold before returning it.
        if let Some(func) = unsafe { (*work).func } {
            // SAFETY: The callback's contract is `unwind_callback_t`'s.
            unsafe { func(work, &mut trace, cookie) };
            stats::inc(Stat::Callbacks);
        }
        true
    });
}

/// Drops the per-entry state on the way back to user space (interrupts
/// off, after the exit-to-user work loop).
pub(crate) fn exit_to_user(cur: &Current) {
    if protocol::exit_reset(&Proto(cur, None)) {
        cache::reset(cur);
    }
}

/// Starts a new entry at `execve()`, once the old program's requests were
/// delivered: the new program must not inherit its cookie or cache.
/// Returns false if a request came in meanwhile (`PENDING`).
pub(crate) fn exec_reset(cur: &Current) -> bool {
    let _irq = IrqGuard::new();
    exit_to_user(cur);
    cur.mask().load(Ordering::Acquire) & UNWIND_PENDING == 0
}

/// `pending_unqueued` in debugfs: the threads whose mask has `PENDING` set
/// while their work head is not on their task work queue.
///
/// `PENDING` means "a task work will run the requests": with the head
/// neither queued nor running, nothing ever clears it, and every later
/// request of the task queues nothing and gets no callback (issue 23's
/// unload race).  It is 0 on a quiet system; it is also briefly true in
/// two windows, which a reader rules out by reading again: between a
/// request's setting of `PENDING` and its `task_work_add()`, and between
/// `task_work_run()`'s taking of the list and `process()`'s clear.
pub(crate) extern "C" fn pending_unqueued() -> u64 {
    let mut n = 0u64;
    TaskInfo::for_each_thread(|info| {
        if info.mask().load(Ordering::Acquire) & UNWIND_PENDING != 0 && !info.work_queued() {
            n += 1;
        }
    });
    n
}
