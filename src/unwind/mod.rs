// SPDX-License-Identifier: GPL-2.0

//! The unwinders of current's user stack.
//!
//! `regs.rs` reads the user registers saved at kernel entry, once per walk;
//! `walk.rs` is the walk and its state (the C API's `struct
//! unwind_user_state`): an unwind-table step where there is a row for the
//! IP, a frame-pointer step otherwise, many frames at a time in C where
//! it can (`user_loops.c`); `ffi.rs` mirrors the layouts and declares the
//! C helpers (`unwind.h`); `compat.rs` adds IA32 emulation's
//! segment bases; `call_site.rs` tells whether a return address follows
//! a call instruction (the topmost frame of code without a row).
//!
//! Unwind tables: the formats are pure `core` (`sframe/`, `ehframe/`,
//! `elf.rs`: the same files compile into the host tests; a lookup by
//! function searches either's sorted index with `sorted.rs`), each compiled
//! into the engine's one form (`table/`, also pure `core`); the kernel
//! side reads a file's section and compiles it (`table_read.rs`), caches
//! the compiled tables by file identity (`table_cache.rs`; a large
//! file's functions one at a time, `table_fns.rs`; both evict the least
//! recently used in O(1), `lru.rs`) and finds a mapping's table
//! (`table_find.rs`).  Dependencies go one way: `walk` uses
//! `call_site`, `compat`, `regs`, `table` and `table_find`, which uses
//! `table_read` and `table_cache`, which use the formats and `table`.

mod call_site;
mod compat;
// Plain `pub` items: the same files are modules of the host test crates.
#[allow(unreachable_pub)]
mod ehframe;
#[allow(unreachable_pub)]
mod elf;
mod ffi;
#[allow(unreachable_pub)]
mod lru;
mod regs;
#[allow(unreachable_pub)]
mod sframe;
#[allow(unreachable_pub)]
mod sorted;
#[allow(unreachable_pub)]
mod table;
mod table_cache;
mod table_find;
mod table_fns;
mod table_read;
mod walk;

pub(crate) use regs::{has_user_regs, UserRegs};
pub(crate) use table_find::{MapSet, Memo};
pub(crate) use walk::{unwind, unwind_from, UnwindStacktrace, UnwindUserState};

/// The table cache's lifetime: emptied when the module unloads.
pub(crate) struct TableCache;

impl Drop for TableCache {
    fn drop(&mut self) {
        table_cache::clear();
    }
}
