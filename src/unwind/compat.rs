// SPDX-License-Identifier: GPL-2.0

//! Compat (IA32 emulation) specifics of the frame-pointer unwinder.
//!
//! 32-bit tasks use 4-byte stack slots and segmented addresses: the linear
//! address of an IP is `CS base + ip`, of a stack slot `SS base + offset`,
//! as perf's `perf_callchain_user32()` computes them.

use super::regs::UserRegs;
use crate::sys::context::{self, IrqGuard};

/// The linear bases of the code and stack segments of `regs`.
pub(super) fn segment_bases(regs: &UserRegs) -> (usize, usize) {
    // A sibling's modify_ldt() frees the old LDT only after an IPI that
    // cannot be taken while interrupts are off; the GDT read is this CPU's.
    let irq = IrqGuard::new();
    (
        context::segment_base(regs.cs, &irq),
        context::segment_base(regs.ss, &irq),
    )
}

/// The linear address of `offset` in a segment at `base`: 32-bit
/// arithmetic, wrapping at 4 GiB as the CPU's does (perf's `compat_ptr()`).
pub(super) fn linear(offset: usize, base: usize) -> usize {
    (offset as u32).wrapping_add(base as u32) as usize
}
