// SPDX-License-Identifier: GPL-2.0

//! The bottom layer: what every other layer builds on, and which uses
//! nothing else of this crate.  `context` holds the current context as
//! types (interrupts off, page faults off, a request's context), the
//! questions asked of it and the per-CPU cookie counters, over the C
//! helpers of `context.c`; `stats` the event counters and their debugfs
//! directory (`debugfs.c`).

pub(crate) mod context;
pub(crate) mod stats;
