// SPDX-License-Identifier: GPL-2.0

//! `.eh_frame` (with `.eh_frame_hdr`, `PT_GNU_EH_FRAME`) compiled into
//! the unwind-table engine ([`super::table`]), in pure `core` Rust, so
//! that `tests/host/ehframe.rs` compiles these same files, checks them
//! against binutils' `readelf --debug-dump=frames-interp` on sections
//! made by real compilers, and fuzzes them.  Every binary and library
//! has `.eh_frame` (SFrame and frame pointers are rare in distributions),
//! so this is the format that makes user stacks unwindable in practice.
//!
//! Why compile instead of interpreting at sample time: a CFA program must
//! be run from its FDE's start to reach a PC's rules, so a lookup in raw
//! `.eh_frame` costs a search plus a whole program.  Compiled once per
//! file, a lookup is one binary search of the engine's table.
//!
//! Interpreted (x86-64 only): the header (version 1, any pointer encoding
//! for `eh_frame_ptr`, the `datarel|sdata4` table every linker writes),
//! CIEs (versions 1 and 3; augmentations `z`, `R`, `P`, `L`, `S`; 32-
//! and 64-bit lengths), FDEs (`pc_begin` absolute or PC-relative in any
//! integer format), and every DWARF CFA instruction GCC, Clang and GNU as
//! emit for x86-64.  Tracked: the CFA (register + offset, or the PLT
//! expression, expanded into plain rows per 16-byte block), the return
//! address and RBP; other registers are decoded and ignored, since a
//! walk past the topmost frame only knows SP, FP and PC.
//!
//! Refused, as "no row" for the range (the engine then falls back to
//! frame pointers): any other CFA expression, a CFA register above 16 or
//! an offset beyond `i32`, a return address anywhere but `CFA + n` or
//! undefined, RBP as a value or expression.  Skipped, per FDE (counted in
//! [`Stats`]): a CIE with another augmentation (e.g. the ancient `eh`),
//! version or RA column; an FDE encoding that is `datarel`, `textrel`,
//! `funcrel`, `aligned` or indirect; a CFA program with an unknown
//! opcode, an operand past its FDE, a bad LEB128 (over 10 bytes), a
//! location going backwards, `remember_state` over [`MAX_STACK`] deep or
//! `restore_state` with nothing remembered; an FDE whose `pc_begin` is
//! not the header's location; an FDE over 64 KiB; an FDE overlapping the
//! previous one.  An unusable header or a table not sorted by location
//! ([`EhError`]) stops the whole compilation: the table is what orders
//! the functions.
//!
//! Limits: work is linear in the input (a budget of [`WORK_PER_BYTE`]
//! units per byte, PLT blocks included, never given back; real files use
//! under 1; `compile.rs` states the bound), no recursion, no allocation;
//! PLT expansion is capped at [`MAX_PLT_BLOCKS`] blocks per range and
//! [`MAX_PLT_BLOCKS_TOTAL`] per compilation.  IA32 (i386 `.eh_frame`:
//! other register numbers, 4-byte pointers) is out of scope for now.
//!
//! - `reader.rs`: bounded reads, LEB128, `DW_EH_PE_*` pointers;
//! - `hdr.rs`: `.eh_frame_hdr`; `entry.rs`: CIE/FDE framing;
//! - `cie.rs`, `fde.rs`: parsing; `cfa.rs`: the CFA interpreter;
//! - `compile.rs`: the rows, into a [`super::table::Builder`];
//! - `lookup.rs`: one function's rows, found through the header's table
//!   and read piece by piece (files too large to compile whole);
//! - `scan.rs`: a header made for an `.eh_frame` that has none (static
//!   executables: ld writes `.eh_frame_hdr` only with `--eh-frame-hdr`);
//! - `error.rs`: why a header was refused.

mod cfa;
mod cie;
mod compile;
mod entry;
mod error;
mod fde;
mod hdr;
mod lookup;
mod reader;
mod scan;

pub use compile::compile;
pub use error::EhError;
pub use hdr::{hdr_info, ENTRY_LEN};
pub use lookup::{lookup, row_at, FnRow, Index, LookupError, Source};
pub use lookup::{MAX_FN_ROWS, PROBE_MEMO, SCRATCH_LEN, SMALL_ROWS, SMALL_SCRATCH_LEN};
#[cfg(test)]
pub use scan::synth_hdr;
pub use scan::{count_fdes, synth_hdr_at, SYNTH_HEAD_LEN};

// The rest of the API: what callers may name (the types of the results)
// and what the host tests inspect.
#[cfg(test)]
pub use cfa::MAX_STACK;
#[cfg(test)]
pub use cie::MAX_CIE_INSNS;
#[cfg(test)]
pub use compile::{Stats, MAX_PLT_BLOCKS, MAX_PLT_BLOCKS_TOTAL, WORK_BASE, WORK_PER_BYTE};
#[cfg(test)]
pub use hdr::HdrInfo;
#[cfg(test)]
pub use lookup::{BLOCK_ENTRIES, MAX_PROBES, MAX_STEPS};
