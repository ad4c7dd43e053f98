// SPDX-License-Identifier: GPL-2.0

//! Deferred unwinding of user-space stack traces.
//!
//! Profilers and tracers sample in NMI or IRQ context, where user memory may
//! not be read with faults.  They ask this module instead: it walks the user
//! stack once, in task context, just before the task returns to user space,
//! and hands the same trace and a cookie that ties it to their kernel-side
//! samples to every caller that asked.  The C API is the one of Linux 6.17
//! (`include/linux/unwind_deferred.h`).

use kernel::prelude::*;

mod cache;
mod compat;
mod cookie;
mod deferred;
mod exports;
mod hooks;
#[cfg(unwind_inject)]
mod inject;
mod protocol;
mod shim;
mod stats;
mod task;
mod user;

module! {
    type: UnwindDeferred,
    name: "unwind_deferred",
    author: "unwind-rs developers",
    description: "Deferred unwinding of user-space stack traces",
    license: "GPL",
}

struct UnwindDeferred {
    // Dropped first: unregisters the hooks and cleans every task.
    _hooks: hooks::Registration,
    _debugfs: stats::Debugfs,
}

impl kernel::Module for UnwindDeferred {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let debugfs = stats::Debugfs::new()?;
        let hooks = hooks::Registration::new()?;
        pr_info!("deferred user unwinding ready\n");
        Ok(Self {
            _hooks: hooks,
            _debugfs: debugfs,
        })
    }
}
