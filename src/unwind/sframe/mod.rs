// SPDX-License-Identifier: GPL-2.0

//! SFrame (`.sframe`, `PT_GNU_SFRAME`): the format, its validation, PC
//! lookups and its compilation into the unwind-table engine
//! ([`super::table`]), in pure `core` Rust with no kernel dependency, so
//! that `tests/host/sframe.rs` compiles these same files and fuzzes them.
//!
//! - `format.rs`: the on-disk layout (v1, v2, v3; AMD64) and decoding of
//!   the header, FDEs' info bytes, FREs and their rules ([`Row`]);
//! - `section.rs`: [`Section`], the parsed view of one section's bytes
//!   at a link-time address;
//! - `validate.rs`: the one-time full check of a section;
//! - `lookup.rs`: the rules for a PC (the reference the compiled table
//!   is tested against);
//! - `compile.rs`: every row of a validated section, into a
//!   [`super::table::Builder`];
//! - `function.rs`: one function's rows, found through the sorted FDE
//!   array and read piece by piece (sections too large to compile whole);
//! - `error.rs`: why a section was refused.
//!
//! Use: read the header ([`format::HEADER_LEN`] bytes), get the length
//! with [`section_len`], read that much, [`Section::new`] (validates),
//! then [`compile`] it into a table; the section's bytes are not kept.
//! Or, for a section too large for that: [`Index::parse`] its header
//! and [`lookup_function`] the function of each PC a walk meets.

mod compile;
mod error;
mod format;
mod function;
// The reference lookup, which the host tests check compiled tables
// against; the module looks rows up in compiled tables only.
#[cfg(test)]
mod lookup;
mod section;
mod validate;

pub use compile::{compile, CompileError};
pub use format::{section_len, HEADER_LEN};
pub use function::{lookup_function, Index, LookupError, SCRATCH_LEN, SMALL_SCRATCH_LEN};
pub use section::Section;

// The rest of the API is what the host tests inspect (built with
// `rustc --test`); the module does not name these.
#[cfg(test)]
pub use compile::{MAX_PCMASK_BLOCKS, MAX_PCMASK_ROWS_TOTAL};
#[cfg(test)]
pub use error::SframeError;
#[cfg(test)]
pub use format::{Fde, FreType, Header, Version};
#[cfg(test)]
pub use function::{Found, MAX_FN_FRES, MAX_FRE_LEN, MAX_PROBES, MAX_STEPS};
#[cfg(test)]
pub use lookup::Work;
#[cfg(test)]
pub use validate::{validate, MAX_FRES_PER_FDE};
