// SPDX-License-Identifier: GPL-2.0

//! The unwind-table engine: one compact, sorted form for the unwind rows
//! of every format (SFrame, `.eh_frame`), built once when a file's
//! section is first read, so that a lookup never parses a format again.
//!
//! - `row.rs`: [`Row`], the rules for one PC (CFA, return address,
//!   caller's RBP);
//! - `build.rs`: [`Builder`], which a format's compiler feeds rows in
//!   increasing PC order, merging equal neighbours and sharing equal rows;
//! - `pace.rs`: [`Pace`], how a compiler lets its caller pause or stop it;
//! - `table.rs`: [`Table`], the compiled form (sorted `u32` PC offsets,
//!   a `u16` row index each, the distinct rows) and its lookup: one
//!   binary search, no scan;
//! - `step.rs`: one unwind step with a row;
//! - `common.rs`: [`Common`], the form of nearly every row, stepped with
//!   one read and packed in 32 bits for a walk's row memo;
//! - `layout.rs`: what C and Rust share of that memo and form, declared
//!   once in `src/unwind/row_slot.h` and taken through bindgen.
//!
//! Pure `core`: the storage is a trait ([`Storage`]), the kernel's kept
//! in `KVVec`s, the host tests' in `Vec`s; `tests/host/` compiles these
//! files as they are.

mod build;
mod common;
mod layout;
mod pace;
mod row;
mod step;
#[allow(clippy::module_inception)]
mod table;

pub use build::{BuildError, Builder, Storage, DEDUP_SLOTS};
pub use common::Common;
pub use layout::SLOT_STARTS;
pub use layout::{
    row_find, row_hash, RowSlot, RowSpan, COMMON_VALID, ROW_SLOTS, ROW_WAYS, SLOT_FALLBACK,
    SLOT_NO_INDEX, SLOT_OUTERMOST,
};
pub use pace::{Pace, Stopped};
pub use row::{CfaRule, Reg, Row, Rule};
pub use step::{step, step_with, Regs, StepError};
pub use table::Table;

// What the host tests inspect (built with `rustc --test`); the module
// does not name these.
#[cfg(test)]
pub use build::{hash as dedup_hash, DEDUP_PROBES, MAX_ROWS};
#[cfg(test)]
pub use layout::COMMON_OFF_SHIFT;
#[cfg(test)]
pub use layout::{CFA_MIN, COMMON_CFA_FP, COMMON_EH, COMMON_FP_SLOT_MASK, COMMON_FP_SLOT_SHIFT};
#[cfg(test)]
pub use pace::YIELD_EVERY;

#[cfg(test)]
pub use table::NO_ROW;
