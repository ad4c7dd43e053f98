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

// The layers, top first: each imports only from the layers below it
// (`scripts/check-layers` checks it).
mod api; // the top: the kernel's hook table, perf's works, the C API
mod deferred; // the request protocol, works and cookies
mod sys;
mod task; // per-task state: mask, cookie, cache
mod unwind; // the walk of the user stack and its unwind tables // the bottom: C helpers, context guards, per-CPU data, counters

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
    _perf: api::perf::Registration,
    // Unregisters the hooks and cleans every task.
    _hooks: api::hooks::Registration,
    _debugfs: sys::stats::Debugfs,
    // Last: no walk runs any more.
    _sframe: unwind::TableCache,
}

impl Drop for UnwindDeferred {
    fn drop(&mut self) {
        // Test builds: stay GOING a while, every hook still in place, so a
        // test sees what perf's requests get then (before the fields go).
        #[cfg(unwind_inject)]
        deferred::inject::going_delay();
    }
}

impl kernel::Module for UnwindDeferred {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let debugfs = sys::stats::Debugfs::new(deferred::pending_unqueued)?;
        sys::context::cookie_seed();
        let hooks = api::hooks::Registration::new()?;
        let perf = api::perf::Registration::new()?;
        pr_info!("deferred user unwinding ready\n");
        Ok(Self {
            _perf: perf,
            _hooks: hooks,
            _debugfs: debugfs,
            _sframe: unwind::TableCache,
        })
    }
}
