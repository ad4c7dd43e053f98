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

// The source tree shows the architecture; dependencies go down this list.
mod deferred; // the request protocol, works and cookies
mod glue; // kernel glue: hooks and C API on top, C shim and counters below
mod task; // per-task state: mask, cookie, cache
mod unwind; // the unwinders of the user stack

module! {
    type: UnwindDeferred,
    name: "unwind_deferred",
    author: "unwind-rs developers",
    description: "Deferred unwinding of user-space stack traces",
    license: "GPL",
}

struct UnwindDeferred {
    // Dropped first: perf's requests fail from now on (synchronous
    // callchains), before the hooks go.
    _perf: glue::perf::Registration,
    // Unregisters the hooks and cleans every task.
    _hooks: glue::hooks::Registration,
    _debugfs: glue::stats::Debugfs,
    // Last: no walk runs any more.
    _sframe: unwind::TableCache,
}

impl kernel::Module for UnwindDeferred {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let debugfs = glue::stats::Debugfs::new(deferred::pending_unqueued);
        glue::shim::cookie_seed();
        let hooks = glue::hooks::Registration::new()?;
        let perf = glue::perf::Registration::new()?;
        pr_info!("deferred user unwinding ready\n");
        Ok(Self {
            _perf: perf,
            _hooks: hooks,
            _debugfs: debugfs,
            _sframe: unwind::TableCache,
        })
    }
}
