// SPDX-License-Identifier: GPL-2.0

//! The unwinders of current's user stack.
//!
//! `regs.rs` reads the user registers saved at kernel entry, once per walk;
//! `fp.rs` is the frame-pointer unwinder and the walk's state (the C API's
//! `struct unwind_user_state`); `compat.rs` adds IA32 emulation's segment
//! bases.  Dependencies go one way: `fp` uses `compat` and `regs`, which
//! use nothing here.  An SFrame unwinder joins as `sframe.rs` (the format)
//! plus a `TYPE_SFRAME` step in `fp.rs`'s state machine.

mod compat;
mod fp;
mod regs;

pub(crate) use fp::{unwind, UnwindStacktrace, UnwindUserState};
pub(crate) use regs::has_user_regs;
