// SPDX-License-Identifier: GPL-2.0

//! Context cookies: one per kernel entry of a task, never 0, unique
//! system-wide.
//!
//! The cookie is `(cpu + 1) << 48 | per-CPU count`: the CPU part keeps it
//! non-zero and the per-CPU counters apart (16 bits hold any `NR_CPUS`).
//! The counters start from the clock at every load (`sys/context.c`), so a
//! reloaded module never hands out a cookie of an earlier load (the count
//! wraps after 2^48 units of 16 ns, 52 days: no cookie lives that long).
//! `protocol.rs` installs one on the first request in an entry and drops it
//! on the way back to user space.

use crate::sys::context::{self, IrqGuard};

const COUNT_BITS: u32 = 48;

/// A cookie never handed out before; interrupts are off (`irq`), so the
/// CPU cannot change under the per-CPU counter.
pub(super) fn next(irq: &IrqGuard) -> u64 {
    let (cpu, count) = context::cookie_count(irq);
    ((u64::from(cpu) + 1) << COUNT_BITS) | (count & ((1 << COUNT_BITS) - 1))
}
