// SPDX-License-Identifier: GPL-2.0

//! The mappings a task's cache keeps between walks ([`MapSet`]), and the
//! registry that lets unload find every one of them.
//!
//! A task that exited but is still referenced (a perf event holds it) is
//! off the thread list, so unload's walk of that list misses its cache,
//! and when the task is freed after the module is gone the kernel frees
//! the cache page alone: a set that page pointed to would leak, and a
//! different build loaded meanwhile would drop it with its own layout.
//! So every set is also on a registry, and unload takes each one out of
//! its cache ([`drain`]) before the hooks go: a cache page freed later
//! holds plain data only.
//!
//! Who owns a set: whoever swaps the cache's pointer from it to NULL, and
//! that one takes it off the registry.  The owning task's walks use it in
//! place (no walk runs during unload: each pins the module), a cache
//! being freed swaps ([`release`]), and [`drain`] swaps under the
//! registry's lock.  A set leaves the registry before its cache is freed
//! (`release` runs first), so `drain` may read the pointer of every
//! cache whose set it finds there.

use core::mem::MaybeUninit;
use core::ptr::{addr_of_mut, null_mut};
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

use crate::unwind::MapSet;

// The registry in `task_sys.c` (`task.h`).
extern "C" {
    /// Adds `node` to the registry of saved mappings.
    fn unwind_rs_saved_maps_link(node: *mut bindings::list_head);
    /// Takes `node` off the registry (or off nothing: `list_del_init()`).
    fn unwind_rs_saved_maps_unlink(node: *mut bindings::list_head);
    /// Under the registry's lock, moves to `out` every node `claim` takes.
    fn unwind_rs_saved_maps_claim(
        out: *mut bindings::list_head,
        claim: unsafe extern "C" fn(node: *mut bindings::list_head) -> bool,
    );
    /// The first node of `list`, taken off it, or NULL.
    fn unwind_rs_list_pop(list: *mut bindings::list_head) -> *mut bindings::list_head;
}

/// A task's saved mappings, on the registry.
///
/// # Invariants
///
/// While `link` is on the registry, `owner` is the live pointer of the
/// cache that holds this set.
#[repr(C)]
pub(crate) struct SavedMaps {
    /// First, so that a registry node is the set's address.
    link: Opaque<bindings::list_head>,
    owner: *const AtomicPtr<SavedMaps>,
    set: MapSet,
}

/// The set `slot` points to, allocated and registered first if there is
/// none; `None` without memory (the walk then keeps its mappings on its
/// stack).
///
/// # Safety
///
/// `slot` is the set pointer of current's cache, which lives until
/// [`release`] is called on it, and nothing else uses its set while the
/// returned reference lives.
pub(super) unsafe fn get_or_alloc(slot: &AtomicPtr<SavedMaps>) -> Option<&mut MapSet> {
    let mut p = slot.load(Ordering::Relaxed);
    if p.is_null() {
        let saved = SavedMaps {
            link: Opaque::uninit(),
            owner: slot,
            set: MapSet::new(),
        };
        p = KBox::into_raw(KBox::new(saved, GFP_KERNEL_ACCOUNT).ok()?);
        // SAFETY: `p` is a set at its final address, on no list.
        // INVARIANT: `slot` lives until `release()`, which unlinks first.
        unsafe { unwind_rs_saved_maps_link((*p).link.get()) };
        slot.store(p, Ordering::Release);
    }
    // SAFETY: `p` came from `KBox::into_raw()` and is freed only by whoever
    // swaps it out of `slot`, which per the contract nobody does while we
    // use it, nor uses its set.
    Some(unsafe { &mut (*p).set })
}

/// Frees the set `slot` points to, if any (its cache is being freed).
pub(super) fn release(slot: &AtomicPtr<SavedMaps>) {
    let p = slot.swap(null_mut(), Ordering::AcqRel);
    if p.is_null() {
        return;
    }
    // SAFETY: The swap made us the set's only owner; it came from
    // `KBox::into_raw()`, and leaves the registry before it is freed.
    unsafe {
        unwind_rs_saved_maps_unlink((*p).link.get());
        drop(KBox::from_raw(p));
    }
}

/// Takes every saved set out of its cache and frees it; returns how many.
///
/// # Safety
///
/// No walk runs or starts (unload: each walk pins the module).
pub(crate) unsafe fn drain() -> usize {
    unsafe extern "C" fn claim(node: *mut bindings::list_head) -> bool {
        let p = node.cast::<SavedMaps>();
        // SAFETY: `node` is on the registry, whose lock the caller holds:
        // it is the first field of a live set, whose `owner` is live by the
        // type invariant (its cache unlinks the set, under the same lock,
        // before it is freed).
        let owner = unsafe { &*(*p).owner };
        owner
            .compare_exchange(p, null_mut(), Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
    let mut out = MaybeUninit::<bindings::list_head>::uninit();
    let head = out.as_mut_ptr();
    // SAFETY: An empty list head points to itself; it stays on this stack
    // frame, unmoved, until the last node is popped below.
    unsafe {
        addr_of_mut!((*head).next).write(head);
        addr_of_mut!((*head).prev).write(head);
        unwind_rs_saved_maps_claim(head, claim);
    }
    let mut n = 0;
    loop {
        // SAFETY: `head` is the list built above, ours alone.
        let node = unsafe { unwind_rs_list_pop(head) };
        if node.is_null() {
            return n;
        }
        // SAFETY: `claim` swapped the set out of its cache, so we own it,
        // and the pop took it off every list; it came from `KBox::into_raw()`.
        drop(unsafe { KBox::from_raw(node.cast::<SavedMaps>()) });
        n += 1;
    }
}
