// SPDX-License-Identifier: GPL-2.0

//! The request protocol of one task: its request mask and its cookie.
//!
//! Pure `core` Rust with no kernel dependency: the module runs these
//! functions on a task's state, and the host model
//! (`tests/host/protocol_model.rs`) runs the very same functions under every
//! interleaving of NMIs between their atomic steps, which `Task::step()`
//! marks.
//!
//! The mask holds `PENDING` (a task work is queued), `COOKIE_VALID` (the
//! cookie field belongs to this kernel entry) and one bit per work.  The
//! mask is the single linearisation point: the cookie field is written only
//! while `COOKIE_VALID` is clear, by a compare-and-exchange from the value
//! read before the mask, and only the exit reset clears `COOKIE_VALID`, with
//! one compare-and-exchange of the whole mask to 0; the reset never writes
//! the cookie field.  A work bit is only ever set together with
//! `COOKIE_VALID`, and `PENDING` by whoever then queues the task work.
//!
//! Guarantee: for every interleaving of requests (task, IRQ or NMI
//! context), `process()` and the exit reset, each non-zero cookie returned
//! for a work gets exactly one callback for that work, carrying that cookie
//! and the trace of the kernel entry in which the cookie was handed out; no
//! callback carries cookie 0 and none is made for a work that did not
//! request in that entry.  This needs one promise from the caller: a
//! `COOKIE_VALID` set from NMI context, or from task context with
//! interrupts disabled (possibly after the exit-to-user work loop), comes
//! with a task work queued so that the task re-enters the kernel before it
//! runs user code (`TWA_NMI_CURRENT`).

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A task work is queued (or running) for the task.
pub const PENDING: usize = 1 << 0;
/// The cookie field holds this entry's cookie.
pub const COOKIE_VALID: usize = 1 << 1;
/// Bits below this one are not work bits.
pub const RESERVED_BITS: u32 = 2;
/// `PENDING | COOKIE_VALID`.
pub const RESERVED_MASK: usize = (1 << RESERVED_BITS) - 1;

/// The points between two atomic steps, where an NMI may land.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// `request()`/`get_cookie()`: the cookie field was read.
    CookieRead,
    /// `request()`/`get_cookie()`: the mask was read.
    MaskRead,
    /// `request()`/`get_cookie()`: a new cookie was offered.
    CookieInstalled,
    /// `request()`/`get_cookie()`: the mask was updated.
    MaskSet,
    /// `process()`: `PENDING` was seen.
    PendingSeen,
    /// `process()`: `PENDING` was cleared.
    PendingCleared,
    /// `process()`: the walk was made (or the cache taken).
    Walked,
    /// `process()`: before one callback.
    BeforeCallback,
    /// `process()`: after one callback.
    AfterCallback,
    /// Exit reset: the mask was read.
    ResetRead,
    /// Exit reset: the mask was set to 0.
    ResetDone,
}

/// Every step, for tests that visit them all.
#[cfg(test)]
pub const STEPS: [Step; 11] = [
    Step::CookieRead,
    Step::MaskRead,
    Step::CookieInstalled,
    Step::MaskSet,
    Step::PendingSeen,
    Step::PendingCleared,
    Step::Walked,
    Step::BeforeCallback,
    Step::AfterCallback,
    Step::ResetRead,
    Step::ResetDone,
];

/// The protocol state of one task and what the protocol needs around it.
pub trait Task {
    /// The request mask.
    fn mask(&self) -> &AtomicUsize;
    /// The cookie field.
    fn cookie(&self) -> &AtomicU64;
    /// A cookie never handed out before, never 0.
    fn new_cookie(&self) -> u64;
    /// Marks a point between two atomic steps: test injection only.
    #[inline(always)]
    fn step(&self, _s: Step) {}
}

/// What `request()` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// The cookie of this entry, never 0.
    pub cookie: u64,
    /// The work had already requested in this entry.
    pub already: bool,
    /// `already`, and no task work was pending: this entry's batch with
    /// the work was taken, so its callback has begun or is done.  A deferred
    /// perf sample after its record would stay unmerged: perf asks another
    /// of its works instead.
    pub taken: bool,
    /// This request set `PENDING`: the caller queues the task work, and
    /// clears `undo` from the mask if it cannot.
    pub queue: bool,
    /// The bits this request set, besides `COOKIE_VALID`.
    pub undo: usize,
}

/// Reads the cookie field, then the mask.
fn snapshot<T: Task>(t: &T) -> (u64, usize) {
    let k0 = t.cookie().load(Ordering::Acquire);
    t.step(Step::CookieRead);
    let m = t.mask().load(Ordering::Acquire);
    t.step(Step::MaskRead);
    (k0, m)
}

/// Offers a new cookie unless `m` (read after `k0`) says this entry has one.
fn install<T: Task>(t: &T, k0: u64, m: usize) {
    if m & COOKIE_VALID == 0 {
        // Fails only if a nested context installed a cookie since `k0` was
        // read; it set `COOKIE_VALID` before returning.  Cookies are never
        // reused, so there is no ABA.
        let _ =
            t.cookie()
                .compare_exchange(k0, t.new_cookie(), Ordering::AcqRel, Ordering::Relaxed);
        t.step(Step::CookieInstalled);
    }
}

/// Requests a callback for the work owning `bit` (interrupts off).
pub fn request<T: Task>(t: &T, bit: u32) -> Request {
    let b = 1usize << bit;
    let (k0, m) = snapshot(t);
    if m & (COOKIE_VALID | b) == COOKIE_VALID | b {
        // Once set, the bit and the cookie stay until the exit reset, which
        // cannot run before we return.
        return Request {
            cookie: t.cookie().load(Ordering::Acquire),
            already: true,
            taken: m & PENDING == 0,
            queue: false,
            undo: 0,
        };
    }
    install(t, k0, m);
    let old = t
        .mask()
        .fetch_or(COOKIE_VALID | PENDING | b, Ordering::AcqRel);
    t.step(Step::MaskSet);
    // `COOKIE_VALID` is set: the cookie field stays until the exit reset.
    // A bit without it was left by an unloaded module: not a request.
    let already = old & (COOKIE_VALID | b) == COOKIE_VALID | b;
    Request {
        cookie: t.cookie().load(Ordering::Acquire),
        already,
        taken: already && old & PENDING == 0,
        queue: old & PENDING == 0,
        undo: (PENDING | b) & !old,
    }
}

/// The cookie of this entry (interrupts off).  With `force`, a new cookie
/// also sets `PENDING`; the return value then says whether the caller must
/// queue the task work (see the module documentation).
pub fn get_cookie<T: Task>(t: &T, force: bool) -> (u64, bool) {
    let (k0, m) = snapshot(t);
    if m & COOKIE_VALID != 0 {
        return (t.cookie().load(Ordering::Acquire), false);
    }
    install(t, k0, m);
    let set = COOKIE_VALID | if force { PENDING } else { 0 };
    let old = t.mask().fetch_or(set, Ordering::AcqRel);
    t.step(Step::MaskSet);
    (
        t.cookie().load(Ordering::Acquire),
        force && old & PENDING == 0,
    )
}

/// The works to call back, taken by `process_begin()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Work bits seen with `PENDING`.
    pub bits: usize,
    /// The cookie they were handed out with.
    pub cookie: u64,
}

/// Starts running the task's pending requests (task context): clears
/// `PENDING`, so that any later request queues a new task work.
pub fn process_begin<T: Task>(t: &T) -> Option<Batch> {
    if t.mask().load(Ordering::Acquire) & PENDING == 0 {
        return None;
    }
    t.step(Step::PendingSeen);
    let m = t.mask().fetch_and(!PENDING, Ordering::AcqRel);
    t.step(Step::PendingCleared);
    if m & COOKIE_VALID == 0 {
        // Left by an unloaded module: no request of ours is in it.
        return Some(Batch { bits: 0, cookie: 0 });
    }
    Some(Batch {
        bits: m & !RESERVED_MASK,
        cookie: t.cookie().load(Ordering::Acquire),
    })
}

/// Calls back each work of `batch` not yet `completed` in this entry
/// (`call` returns false if the bit has no work), then marks it completed.
///
/// A bit cleared from the live mask since `process_begin()` was cancelled:
/// skip it, it may already belong to a new work.
pub fn process_deliver<T: Task, F: FnMut(u32, u64) -> bool>(
    t: &T,
    batch: Batch,
    completed: &AtomicUsize,
    mut call: F,
) {
    t.step(Step::Walked);
    let mut bits = batch.bits;
    while bits != 0 {
        let bit = bits.trailing_zeros();
        let b = 1usize << bit;
        bits &= bits - 1;
        if completed.load(Ordering::Acquire) & b != 0 {
            continue;
        }
        t.step(Step::BeforeCallback);
        if t.mask().load(Ordering::Acquire) & b == 0 {
            continue;
        }
        if call(bit, batch.cookie) {
            completed.fetch_or(b, Ordering::AcqRel);
        }
        t.step(Step::AfterCallback);
    }
}

/// The reset on the way back to user space (interrupts off, after the
/// exit-to-user work loop).  Returns true if it cleared the mask: the caller
/// then forgets this entry's cache.  With `PENDING` set a task work runs
/// first (the caller's promise above), and resets at its own return.
pub fn exit_reset<T: Task>(t: &T) -> bool {
    let mut m = t.mask().load(Ordering::Acquire);
    t.step(Step::ResetRead);
    loop {
        if m == 0 || m & PENDING != 0 {
            return false;
        }
        match t
            .mask()
            .compare_exchange(m, 0, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => break,
            Err(cur) => m = cur,
        }
    }
    // A request landing from here on sees no `COOKIE_VALID`, installs a new
    // cookie and queues a task work that runs before user code.
    t.step(Step::ResetDone);
    true
}
