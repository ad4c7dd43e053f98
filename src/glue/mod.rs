// SPDX-License-Identifier: GPL-2.0

//! Kernel glue.  On top, what the kernel and other modules call: `hooks`
//! (the table the kernel patch calls), `perf` (perf core's work, reached
//! through the hooks) and `exports` (the C API).  Below
//! everything else, what the rest builds on: `shim` (the C helpers in
//! `shim.c` and the context types over them) and `stats` (debugfs
//! counters).  `shim` and `stats` use nothing else of this crate.

pub(crate) mod exports;
pub(crate) mod hooks;
pub(crate) mod perf;
pub(crate) mod shim;
pub(crate) mod stats;
