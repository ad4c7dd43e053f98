// SPDX-License-Identifier: GPL-2.0

//! Per-task state: the request mask, cookie, cache pointer and task work
//! head that the kernel patch reserves in `task_struct::unwind_hooks`, and
//! the cache (`cache.rs`) with the mappings it keeps (`saved_maps.rs`).
//!
//! The mask and the cookie change from NMI context, so they are only ever
//! accessed through atomics.  The cache's contents belong to the owning
//! task: only a [`Current`] may touch them.

pub(crate) mod cache;
pub(crate) mod saved_maps;

use core::marker::PhantomData;
use core::ops::Deref;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize};
use kernel::bindings;
use kernel::ffi::c_void;

// The C helpers of `task_sys.c` (`task.h`).
extern "C" {
    /// Calls `f` for every thread of every process, under `rcu_read_lock()`.
    fn unwind_rs_walk_threads(
        f: unsafe extern "C" fn(t: *mut bindings::task_struct, arg: *mut c_void),
        arg: *mut c_void,
    );
    /// Whether `work` is on `t`'s task work queue (read only, under the
    /// task's `pi_lock` as `task_work_cancel()` walks it).
    // Only a pointer to the task crosses; some of its members are empty
    // structs in small configurations, which the lint flags.
    #[allow(improper_ctypes)]
    fn unwind_rs_work_queued(
        t: *mut bindings::task_struct,
        work: *mut bindings::callback_head,
    ) -> bool;
}

/// The unwind state of one task.
///
/// # Invariants
///
/// `self.0` points to the `unwind_hooks` member of a `task_struct` that
/// stays allocated for `'a`.
#[derive(Clone, Copy)]
pub(crate) struct TaskInfo<'a>(
    NonNull<bindings::unwind_task_hooks>,
    PhantomData<&'a bindings::unwind_task_hooks>,
);

impl<'a> TaskInfo<'a> {
    /// The state of `task`.
    ///
    /// # Safety
    ///
    /// `task` must point to a `task_struct` that stays allocated for `'a`.
    pub(crate) unsafe fn of(task: NonNull<bindings::task_struct>) -> Self {
        // SAFETY: `task` is valid per the function's contract, so the field
        // address is non-NULL.
        let p = unsafe { NonNull::new_unchecked(&raw mut (*task.as_ptr()).unwind_hooks) };
        // INVARIANT: the field of a task that lives for `'a`.
        Self(p, PhantomData)
    }

    /// The state that contains the task work head `head`.
    ///
    /// # Safety
    ///
    /// `head` must be the `work` member of an `unwind_task_hooks` whose task
    /// stays allocated for `'a`.
    pub(crate) unsafe fn from_work(head: NonNull<bindings::callback_head>) -> Self {
        let off = core::mem::offset_of!(bindings::unwind_task_hooks, work);
        // SAFETY: Per the contract `head` lies `off` bytes into the struct.
        let p = unsafe { head.byte_sub(off).cast() };
        // INVARIANT: per the contract.
        Self(p, PhantomData)
    }

    /// The request mask (`PENDING`, `COOKIE_VALID` and one bit per work, see
    /// `deferred/protocol.rs`).
    pub(crate) fn mask(&self) -> &'a AtomicUsize {
        // SAFETY: By the type invariant the field is valid for `'a`; it is
        // aligned and only ever accessed atomically (the kernel patch reads
        // it with `atomic_long_read()`).
        unsafe { AtomicUsize::from_ptr((&raw mut (*self.0.as_ptr()).unwind_mask.counter).cast()) }
    }

    /// The cookie of the current kernel entry (see `deferred/protocol.rs`).
    pub(crate) fn cookie(&self) -> &'a AtomicU64 {
        // SAFETY: As for `mask()`; the kernel only zeroes it at fork.
        unsafe { AtomicU64::from_ptr(&raw mut (*self.0.as_ptr()).cookie) }
    }

    /// The task's cache pointer, NULL until first used (see `cache.rs`).
    pub(crate) fn cache_slot(&self) -> &'a AtomicPtr<c_void> {
        // SAFETY: As for `mask()`; the kernel only zeroes it at fork.
        unsafe { AtomicPtr::from_ptr((&raw mut (*self.0.as_ptr()).cache).cast()) }
    }

    /// The task work head queued with `task_work_add()`.
    pub(crate) fn work(&self) -> NonNull<bindings::callback_head> {
        // SAFETY: Only computes the field's address, valid per the invariant.
        unsafe { NonNull::new_unchecked(&raw mut (*self.0.as_ptr()).work) }
    }

    /// The task this state belongs to.
    fn task(&self) -> *mut bindings::task_struct {
        let off = core::mem::offset_of!(bindings::task_struct, unwind_hooks);
        // SAFETY: `self.0` lies `off` bytes into an allocated `task_struct`
        // (type invariant): only computes that struct's address.
        unsafe { self.0.as_ptr().byte_sub(off).cast() }
    }

    /// Takes the task's work head back off its task work queue: false if it
    /// was not queued (never, or already taken by `task_work_run()`).
    pub(crate) fn cancel_work(&self) -> bool {
        // SAFETY: The task is allocated (type invariant);
        // `task_work_cancel()` takes the task's own lock and copes with a
        // task that has exited.
        unsafe { bindings::task_work_cancel(self.task(), self.work().as_ptr()) }
    }

    /// Whether the task's work head is on its task work queue now (false
    /// once `task_work_run()` took it, while it runs).  Changes nothing.
    pub(crate) fn work_queued(&self) -> bool {
        // SAFETY: The task is allocated (type invariant); the helper only
        // reads the queue, under the lock `task_work_cancel()` takes.
        unsafe { unwind_rs_work_queued(self.task(), self.work().as_ptr()) }
    }

    /// Calls `f` for every thread under `rcu_read_lock()`, with a state
    /// that cannot outlive the call; `f` must not sleep.
    pub(crate) fn for_each_thread<F: FnMut(TaskInfo<'_>)>(mut f: F) {
        unsafe extern "C" fn trampoline<F: FnMut(TaskInfo<'_>)>(
            t: *mut bindings::task_struct,
            arg: *mut c_void,
        ) {
            // SAFETY: `arg` is the `&mut F` passed below, alive for the walk.
            let f = unsafe { &mut *arg.cast::<F>() };
            if let Some(t) = NonNull::new(t) {
                // SAFETY: The walk runs under `rcu_read_lock()`, which keeps
                // every listed task allocated until `f` returns; the state
                // handed out cannot outlive this call.
                f(unsafe { TaskInfo::of(t) });
            }
        }
        // SAFETY: `trampoline::<F>` matches the callback type and `arg`
        // points to `f`, which outlives the call.
        unsafe { unwind_rs_walk_threads(trampoline::<F>, (&raw mut f).cast()) };
    }
}

/// The unwind state of the current task, for what only the task itself may
/// do: use its cache's contents.
///
/// # Invariants
///
/// `self.0` is the state of the task that created the value, which runs
/// the code holding it: the value is neither `Send` nor `Sync`, so it
/// stays with that task's thread of execution.
pub(crate) struct Current(TaskInfo<'static>, PhantomData<*mut ()>);

impl Current {
    /// The current task's state.
    pub(crate) fn get() -> Self {
        // SAFETY: `current` is never NULL in task, IRQ or NMI context.
        let task = unsafe { NonNull::new_unchecked(bindings::get_current()) };
        // SAFETY: A task is not freed while its own code runs, and the value
        // cannot leave this thread of execution (not `Send`).
        // INVARIANT: the state of current, held by current.
        Self(unsafe { TaskInfo::of(task) }, PhantomData)
    }

    /// The state of `task`, which is current: saves looking current up
    /// again where a helper already returned it.
    ///
    /// # Safety
    ///
    /// `task` must be the current task.
    pub(crate) unsafe fn from_task(task: NonNull<bindings::task_struct>) -> Self {
        // SAFETY: As in `get()`: current outlives its own code, and per the
        // contract `task` is current.
        // INVARIANT: the state of current, held by current.
        Self(unsafe { TaskInfo::of(task) }, PhantomData)
    }

    /// The current task.
    pub(crate) fn task_ptr(&self) -> *mut bindings::task_struct {
        self.0.task()
    }

    /// The view of `info`, whose task is current.
    ///
    /// # Safety
    ///
    /// `info` must be the state of the current task.
    pub(crate) unsafe fn assume(info: TaskInfo<'_>) -> Self {
        // SAFETY: As in `get()`: current outlives its own code, and
        // per the contract `info` is current's.
        // INVARIANT: per the contract.
        Self(TaskInfo(info.0, PhantomData), PhantomData)
    }
}

impl Deref for Current {
    type Target = TaskInfo<'static>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}
