// SPDX-License-Identifier: GPL-2.0

//! Compat (IA32 emulation) specifics of the frame-pointer unwinder.
//!
//! 32-bit tasks use 4-byte stack slots and segmented addresses: the linear
//! address of an IP is `CS base + ip`, of a stack slot `SS base + offset`,
//! as perf's `perf_callchain_user32()` computes them.

use kernel::bindings;

use crate::shim::IrqGuard;
use crate::user::{UnwindUserState, TYPE_COMPAT_FP};

/// Sets up `state` for a compat task from its saved registers.
pub(crate) fn start(state: &mut UnwindUserState, regs: *mut bindings::pt_regs) {
    // A sibling's modify_ldt() frees the old LDT only after an IPI that
    // cannot be taken while interrupts are off; the GDT read is this CPU's.
    let irq = IrqGuard::new();
    // SAFETY: `regs` points to current's saved user registers (see caller);
    // `cs` and `ss` are the plain selector views of their FRED unions;
    // `segment_base_address()` needs interrupts off, which `irq` ensures,
    // and copes with any selector.
    let (cs_base, ss_base) = unsafe {
        (
            bindings::segment_base_address((*regs).__bindgen_anon_1.cs as u32) as usize,
            bindings::segment_base_address((*regs).__bindgen_anon_2.ss as u32) as usize,
        )
    };
    drop(irq);
    state.current_type = TYPE_COMPAT_FP;
    state.ws = 4;
    state.cs_base = cs_base;
    state.ss_base = ss_base;
    state.ip = linear(state.ip, cs_base);
    state.sp = linear(state.sp, ss_base);
    state.fp = linear(state.fp, ss_base);
}

/// Turns the 32-bit values just read from a frame into linear addresses.
pub(crate) fn next(state: &mut UnwindUserState) {
    state.ip = linear(state.ip, state.cs_base);
    state.fp = linear(state.fp, state.ss_base);
}

/// The linear address of `offset` in a segment at `base`: 32-bit
/// arithmetic, wrapping at 4 GiB as the CPU's does (perf's `compat_ptr()`).
fn linear(offset: usize, base: usize) -> usize {
    (offset as u32).wrapping_add(base as u32) as usize
}
