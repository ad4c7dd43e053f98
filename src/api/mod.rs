// SPDX-License-Identifier: GPL-2.0

//! The top layer: what the kernel and other modules call.  `hooks` is the
//! table the kernel patch calls (fork, exit, exec, free, exit to user,
//! task work), `perf` perf core's works, reached through the hooks, and
//! `exports` the C API of `include/linux/unwind_*.h`, exported by
//! `exports.c`, which also checks every layout C and Rust share.  Nothing
//! below imports from here.

pub(crate) mod exports;
pub(crate) mod hooks;
pub(crate) mod perf;
