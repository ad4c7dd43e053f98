// SPDX-License-Identifier: GPL-2.0

//! SFrame (`.sframe`, `PT_GNU_SFRAME`): the format, its validation, PC
//! lookups and the unwind step, in pure `core` Rust with no kernel
//! dependency, so that `tests/host/sframe.rs` compiles these same files
//! and fuzzes them.
//!
//! - `format.rs`: the on-disk layout (v1, v2, v3; AMD64) and decoding of
//!   the header, FDEs' info bytes, FREs and their rules ([`Row`]);
//! - `section.rs`: [`Section`], the parsed view of one section's bytes
//!   at a link-time address;
//! - `validate.rs`: the one-time full check of a section;
//! - `lookup.rs`: the rules for a PC;
//! - `step.rs`: one unwind step with those rules;
//! - `error.rs`: why a section or a step was refused.
//!
//! Use: read the header ([`format::HEADER_LEN`] bytes), get the length
//! with [`section_len`], read that much, [`Section::new`] (validates)
//! once and cache the bytes; later [`Section::parse`] (O(1)) on the
//! cached bytes, [`Section::lookup`] with `ip - bias`, then [`step`].
//!
//! It joins the module as `mod sframe;` in `src/unwind/mod.rs`, with a
//! `TYPE_SFRAME` step in `fp.rs`'s state machine.

mod error;
mod format;
mod lookup;
mod section;
mod step;
mod validate;

pub use format::{section_len, Row, HEADER_LEN};
pub use section::Section;
pub use step::{step, step_with, Regs};

// The rest of the API is what the host tests inspect; the module does not
// name these types.
#[allow(unused_imports)]
pub use error::{SframeError, StepError};
#[allow(unused_imports)]
pub use format::{CfaRule, Fde, FreType, Header, Reg, Rule, Version};
#[allow(unused_imports)]
pub use lookup::Work;
#[allow(unused_imports)]
pub use validate::{validate, MAX_FRES_PER_FDE};
