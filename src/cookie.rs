// SPDX-License-Identifier: GPL-2.0

//! Context cookies: one per kernel entry of a task, never 0, unique
//! system-wide.
//!
//! The cookie is `(cpu + 1) << 48 | per-CPU count`: the CPU part keeps it
//! non-zero and the per-CPU counters apart.  It is handed out on first
//! request in an entry and dropped on the way back to user space.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::bindings;

use crate::shim;
use crate::task::TaskInfo;

const NR_CPUS: usize = bindings::CONFIG_NR_CPUS as usize;
const COUNT_BITS: u32 = 48;

/// A per-CPU counter on its own cache line.
#[repr(align(64))]
struct CpuCounter(AtomicU64);

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: CpuCounter = CpuCounter(AtomicU64::new(0));
static COUNTERS: [CpuCounter; NR_CPUS] = [ZERO; NR_CPUS];

/// The cookie of the current entry of the task owning `info`.
///
/// Interrupts must be off so the CPU cannot change; an NMI may race with us
/// and the compare-and-exchange keeps whichever cookie was installed first.
pub(crate) fn get(info: &TaskInfo) -> u64 {
    let cur = info.cookie().load(Ordering::Relaxed);
    if cur != 0 {
        return cur;
    }
    let cpu = shim::cpu() as usize % NR_CPUS;
    let count = COUNTERS[cpu]
        .0
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_add(1);
    let new = ((cpu as u64 + 1) << COUNT_BITS) | (count & ((1 << COUNT_BITS) - 1));
    match info
        .cookie()
        .compare_exchange(0, new, Ordering::Relaxed, Ordering::Relaxed)
    {
        Ok(_) => new,
        Err(installed) => installed,
    }
}
