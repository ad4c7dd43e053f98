// SPDX-License-Identifier: GPL-2.0

//! Compat (IA32 emulation) specifics of the frame-pointer unwinder.
//!
//! 32-bit tasks use 4-byte stack slots and segmented addresses: the linear
//! address of an IP is `CS base + ip`, of a stack slot `SS base + offset`,
//! as perf's `perf_callchain_user32()` computes them.

use kernel::bindings;

use crate::user::{UnwindUserState, TYPE_COMPAT_FP};

/// Sets up `state` for a compat task from its saved registers.
pub(crate) fn start(state: &mut UnwindUserState, regs: *mut bindings::pt_regs) {
    // SAFETY: `regs` points to current's saved user registers (see caller);
    // `cs` and `ss` are the plain selector views of their FRED unions;
    // `segment_base_address()` reads current's LDT or this CPU's GDT and
    // copes with any selector.
    let (cs_base, ss_base) = unsafe {
        (
            bindings::segment_base_address((*regs).__bindgen_anon_1.cs as u32) as usize,
            bindings::segment_base_address((*regs).__bindgen_anon_2.ss as u32) as usize,
        )
    };
    state.current_type = TYPE_COMPAT_FP;
    state.ws = 4;
    state.cs_base = cs_base;
    state.ss_base = ss_base;
    // Registers hold 32-bit values: drop anything above before adding bases.
    state.ip = (state.ip as u32 as usize).wrapping_add(cs_base);
    state.sp = (state.sp as u32 as usize).wrapping_add(ss_base);
    state.fp = (state.fp as u32 as usize).wrapping_add(ss_base);
}

/// Turns the 32-bit values just read from a frame into linear addresses.
pub(crate) fn next(state: &mut UnwindUserState) {
    state.ip = state.ip.wrapping_add(state.cs_base);
    state.fp = state.fp.wrapping_add(state.ss_base);
}
