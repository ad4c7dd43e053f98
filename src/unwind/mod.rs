// SPDX-License-Identifier: GPL-2.0

//! The unwinders of current's user stack.
//!
//! `regs.rs` reads the user registers saved at kernel entry, once per walk;
//! `fp.rs` is the walk and its state (the C API's `struct
//! unwind_user_state`): an SFrame step where there is a row for the IP, a
//! frame-pointer step otherwise; `compat.rs` adds IA32 emulation's segment
//! bases.  SFrame: `sframe/` is the format (pure `core`), `elf.rs` the ELF
//! headers (pure `core`), `sframe_find.rs` the discovery of a mapping's
//! section from its file, `sframe_cache.rs` the sections cached by file
//! identity.  Dependencies go one way: `fp` uses `compat`, `regs`,
//! `sframe` and `sframe_find`, which uses `elf`, `sframe` and
//! `sframe_cache`.

mod compat;
// Plain `pub` items: the same files are modules of the host test crates.
#[allow(unreachable_pub)]
mod elf;
mod fp;
mod regs;
#[allow(unreachable_pub)]
mod sframe;
mod sframe_cache;
mod sframe_find;

pub(crate) use fp::{unwind, unwind_from, UnwindStacktrace, UnwindUserState};
pub(crate) use regs::{has_user_regs, UserRegs};
pub(crate) use sframe_find::{MapSet, Memo};

/// The SFrame cache's lifetime: emptied when the module unloads.
pub(crate) struct SframeCache;

impl Drop for SframeCache {
    fn drop(&mut self) {
        sframe_cache::clear();
    }
}
