// SPDX-License-Identifier: GPL-2.0

//! Deferred requests: callable from any context, NMI included; the walk
//! happens once, in task context, before the task returns to user space.
//!
//! Every registered work owns one bit of a `usize`.  A request sets that bit
//! and `UNWIND_PENDING` in the task's mask with one atomic fetch-or; the
//! request that sets `UNWIND_PENDING` queues the task work.  The task work
//! clears `UNWIND_PENDING`, walks (or takes the cached trace) and calls the
//! callback of every work whose bit it saw, inside the hooks' SRCU section.
//! The bits stay set until the return to user space, so a second request in
//! the same entry is answered "already done".

use core::ptr;
use core::sync::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use kernel::bindings;
use kernel::ffi::c_int;
use kernel::prelude::*;

use crate::cache;
use crate::cookie;
use crate::shim::{self, IrqGuard};
use crate::stats::{self, Stat};
use crate::task::TaskInfo;
use crate::user::{self, UnwindStacktrace};

pub(crate) const UNWIND_PENDING: usize = 1 << 0;
pub(crate) const UNWIND_USED: usize = 1 << 1;
const RESERVED_BITS: u32 = 2;
const RESERVED_MASK: usize = (1 << RESERVED_BITS) - 1;
pub(crate) const NR_BITS: usize = usize::BITS as usize;

/// Matches `unwind_callback_t`.
pub(crate) type UnwindCallback =
    Option<unsafe extern "C" fn(work: *mut UnwindWork, trace: *mut UnwindStacktrace, cookie: u64)>;

/// Matches `struct unwind_work` in `include/linux/unwind_deferred.h`.
#[repr(C)]
pub(crate) struct UnwindWork {
    pub(crate) list: bindings::list_head,
    pub(crate) func: UnwindCallback,
    pub(crate) bit: c_int,
}

/// The registered works, indexed by bit.  Readers hold the hooks' SRCU (task
/// work, exit) or run with interrupts off (requests); cancel waits for both.
#[allow(clippy::declare_interior_mutable_const)]
const NO_WORK: AtomicPtr<UnwindWork> = AtomicPtr::new(ptr::null_mut());
static SLOTS: [AtomicPtr<UnwindWork>; NR_BITS] = [NO_WORK; NR_BITS];

/// Bits handed out; a bit is returned only once cancel has cleaned it from
/// every task, so a new work never inherits stale requests.
static USED_BITS: AtomicUsize = AtomicUsize::new(RESERVED_MASK);

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
/// stays valid until `cancel()` returns for it.
pub(crate) unsafe fn init(work: *mut UnwindWork, func: UnwindCallback) -> Result {
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
        (*work).bit = bit as c_int;
    }
    // A registered work pins the module: its callback and bit live here.
    // SAFETY: `THIS_MODULE` is this live module.
    unsafe { bindings::__module_get(crate::THIS_MODULE.as_ptr()) };
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
    if work.is_null() {
        return;
    }
    // SAFETY: Valid per the contract.
    let Some(bit) = (unsafe { registered_bit(work) }) else {
        return;
    };
    if SLOTS[bit]
        .compare_exchange(work, ptr::null_mut(), Ordering::AcqRel, Ordering::Relaxed)
        .is_err()
    {
        // A concurrent cancel won.
        return;
    }
    // SAFETY: Valid per the contract.
    unsafe { work_bit(work) }.store(-1, Ordering::Relaxed);
    // Requests run with interrupts off (an RCU read-side section): after
    // this none can still set the bit.  Callbacks only run from the task
    // work and exit hooks, inside the hooks' SRCU section: wait for them.
    // SAFETY: Cancel runs in process context.
    unsafe {
        bindings::synchronize_rcu();
        bindings::unwind_hooks_synchronize();
    }
    let b = 1usize << bit;
    shim::for_each_thread(|t| {
        // SAFETY: `for_each_thread()` hands out live tasks.
        let info = unsafe { TaskInfo::of(t) };
        info.mask().fetch_and(!b, Ordering::AcqRel);
        let c = info.cache().load(Ordering::Acquire);
        if !c.is_null() {
            // SAFETY: A cache is freed only with its task or at unload; the
            // task is alive (RCU) and the module is pinned by `work`.
            unsafe { (*c).unwind_completed.fetch_and(!b, Ordering::AcqRel) };
        }
    });
    USED_BITS.fetch_and(!b, Ordering::AcqRel);
    // SAFETY: Drops the reference taken in `init()`.
    unsafe { bindings::module_put(crate::THIS_MODULE.as_ptr()) };
}

/// `unwind_deferred_request()`: `Ok(false)` when queued, `Ok(true)` when
/// already queued or done for this entry.
///
/// # Safety
///
/// `work` must be NULL or point to a live `struct unwind_work`.
pub(crate) unsafe fn request(work: *mut UnwindWork, cookie: &mut u64) -> Result<bool> {
    *cookie = 0;
    stats::inc(Stat::Requests);
    if work.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: `current` is valid.
    let flags = unsafe { (*bindings::get_current()).flags };
    if flags & (bindings::PF_KTHREAD | bindings::PF_EXITING) != 0 {
        return Err(EINVAL);
    }
    // SAFETY: Only reads current's saved registers.
    if unsafe { shim::unwind_rs_user_regs() }.is_null() {
        return Err(EINVAL);
    }
    // Interrupts off: the CPU is stable for the cookie, and cancel's
    // `synchronize_rcu()` waits for us.
    let _irq = IrqGuard::new();
    // SAFETY: `work` is valid per the contract.
    let bit = unsafe { registered_bit(work) }.ok_or(EINVAL)?;
    let info = TaskInfo::current();
    *cookie = cookie::get(&info);

    let b = 1usize << bit;
    if info.mask().load(Ordering::Relaxed) & b != 0 {
        return Ok(true);
    }
    let old = info.mask().fetch_or(UNWIND_PENDING | b, Ordering::AcqRel);
    if old & b != 0 {
        return Ok(true);
    }
    if old & UNWIND_PENDING != 0 {
        // The queued task work will see our bit.
        return Ok(false);
    }
    let mode = if shim::in_nmi() {
        bindings::task_work_notify_mode_TWA_NMI_CURRENT
    } else {
        bindings::task_work_notify_mode_TWA_RESUME
    };
    // SAFETY: We own `UNWIND_PENDING`, so the head is not queued; the kernel
    // trampoline outlives this module.
    let ret = unsafe {
        (*info.work()).func = Some(bindings::unwind_hooks_task_work);
        bindings::task_work_add(bindings::get_current(), info.work(), mode)
    };
    if ret != 0 {
        // The task is exiting: nobody will run the work.
        info.mask().store(0, Ordering::Release);
        *cookie = 0;
        return Err(Error::from_errno(ret));
    }
    stats::inc(Stat::Queued);
    Ok(false)
}

/// `unwind_user_faultable()`: the trace of this entry, from the cache or
/// from a walk that fills it.
pub(crate) fn faultable(trace: &mut UnwindStacktrace) -> Result {
    if !shim::can_fault() {
        return Err(EINVAL);
    }
    // SAFETY: Only reads current's saved registers.
    if unsafe { shim::unwind_rs_user_regs() }.is_null() {
        return Err(EINVAL);
    }
    let info = TaskInfo::current();
    // SAFETY: current's own cache, valid while it runs in the kernel; only
    // current touches anything but the atomic `unwind_completed`.
    let cache = unsafe { &mut *cache::get_or_alloc(&info)? };
    trace.entries = cache.entries.as_mut_ptr();
    if cache.nr_entries != 0 {
        stats::inc(Stat::CacheHits);
        trace.nr = cache.nr_entries;
        return Ok(());
    }
    let nr = user::unwind(&mut cache.entries) as u32;
    stats::inc(Stat::Walks);
    cache.nr_entries = nr;
    trace.nr = nr;
    // Make the return to user space reset the cache.
    info.mask().fetch_or(UNWIND_USED, Ordering::AcqRel);
    Ok(())
}

/// `unwind_user_get_cookie()`.
pub(crate) fn get_cookie() -> u64 {
    // SAFETY: `current` is valid.
    if unsafe { (*bindings::get_current()).flags } & bindings::PF_KTHREAD != 0 {
        return 0;
    }
    let _irq = IrqGuard::new();
    let info = TaskInfo::current();
    let cookie = cookie::get(&info);
    // Make the return to user space drop the cookie.
    info.mask().fetch_or(UNWIND_USED, Ordering::AcqRel);
    cookie
}

/// Runs the pending requests of current: one walk, one callback per work.
///
/// Only called from the task_work and exit hooks, which the kernel runs
/// inside its hooks' SRCU read-side section: `cancel()` waits for that.
pub(crate) fn process(info: &TaskInfo) {
    if info.mask().load(Ordering::Acquire) & UNWIND_PENDING == 0 {
        return;
    }
    // From here on a request queues a new task work.
    let mut bits = info.mask().fetch_and(!UNWIND_PENDING, Ordering::AcqRel);
    let mut trace = UnwindStacktrace {
        nr: 0,
        entries: ptr::null_mut(),
    };
    // On failure (no memory) the callbacks still run, with an empty trace.
    let _ = faultable(&mut trace);
    let c = info.cache().load(Ordering::Acquire);
    if !c.is_null() {
        // SAFETY: current's own cache, see `cache::get_or_alloc()`.
        bits &= !unsafe { (*c).unwind_completed.load(Ordering::Acquire) };
    }
    bits &= !RESERVED_MASK;
    let cookie = info.cookie().load(Ordering::Relaxed);

    // The callers (task work, exit hook) hold the hooks' SRCU read lock,
    // which cancel waits for: a work seen here stays valid until we are done.
    while bits != 0 {
        let bit = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let work = SLOTS[bit].load(Ordering::Acquire);
        if work.is_null() {
            continue;
        }
        // SAFETY: The work stays valid while registered, and cancel waits
        // for the hooks' SRCU section we run in before returning it.
        if let Some(func) = unsafe { (*work).func } {
            // SAFETY: The callback's contract is `unwind_callback_t`'s.
            unsafe { func(work, &mut trace, cookie) };
            stats::inc(Stat::Callbacks);
        }
        if !c.is_null() {
            // SAFETY: As above.
            unsafe { (*c).unwind_completed.fetch_or(1 << bit, Ordering::AcqRel) };
        }
    }
}

/// Drops the per-entry state on the way back to user space (interrupts off).
pub(crate) fn exit_to_user(info: &TaskInfo) {
    let mut bits = info.mask().load(Ordering::Acquire);
    if bits == 0 || bits & UNWIND_PENDING != 0 {
        // A task work still runs before the return to user space.
        return;
    }
    // Reset the cookie and cache first: a request from an NMI that lands in
    // between sets PENDING, makes the exchange below fail and keeps a fresh
    // cookie for its own task work.
    info.cookie().store(0, Ordering::Relaxed);
    cache::reset(info);
    while let Err(cur) =
        info.mask()
            .compare_exchange_weak(bits, 0, Ordering::AcqRel, Ordering::Acquire)
    {
        if cur & UNWIND_PENDING != 0 {
            return;
        }
        bits = cur;
    }
}
