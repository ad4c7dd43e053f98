// SPDX-License-Identifier: GPL-2.0

//! Context cookies: one per kernel entry of a task, never 0, unique
//! system-wide.
//!
//! The cookie is `(cpu + 1) << 48 | per-CPU count`: the CPU part keeps it
//! non-zero and the per-CPU counters apart.  `protocol.rs` installs one on
//! the first request in an entry and drops it on the way back to user space.

use core::sync::atomic::{AtomicU64, Ordering};
use kernel::bindings;

use crate::shim;

const NR_CPUS: usize = bindings::CONFIG_NR_CPUS as usize;
const COUNT_BITS: u32 = 48;

/// A per-CPU counter on its own cache line.
#[repr(align(64))]
struct CpuCounter(AtomicU64);

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: CpuCounter = CpuCounter(AtomicU64::new(0));
static COUNTERS: [CpuCounter; NR_CPUS] = [ZERO; NR_CPUS];

/// A cookie never handed out before.  Interrupts must be off so the CPU
/// cannot change under the per-CPU counter.
pub(crate) fn next() -> u64 {
    let cpu = shim::cpu() as usize % NR_CPUS;
    let count = COUNTERS[cpu]
        .0
        .fetch_add(1, Ordering::Relaxed)
        .wrapping_add(1);
    ((cpu as u64 + 1) << COUNT_BITS) | (count & ((1 << COUNT_BITS) - 1))
}
