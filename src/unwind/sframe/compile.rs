// SPDX-License-Identifier: GPL-2.0

//! A validated section's rows, into the unwind-table engine: each FDE's
//! FREs at their PCs, then the function's end.  A PCMASK FDE (a PLT) is
//! expanded block by block, so the compiled table needs no PC mask: at
//! most [`MAX_PCMASK_BLOCKS`] blocks, and its blocks times its FREs (at
//! least one) at most what is left of [`MAX_PCMASK_ROWS_TOTAL`] for the
//! whole section, else the FDE gets no rows.  An FDE that overlaps the
//! one before it is skipped (the engine's entries are sorted).
//!
//! Work: one builder call per FRE decoded and one per FDE.  A validated
//! section's FRE counts add up to the header's, whose FREs take 2 bytes
//! or more each, and its FDEs take 16 bytes or more; PCMASK FDEs decode
//! at most [`MAX_PCMASK_ROWS_TOTAL`] FREs in all.  So for `n` bytes:
//! builder calls <= n / 2 + 524,288, however many FDEs share FREs.  The
//! caller's `keep_going` hook ([`Pace`]) is asked every `YIELD_EVERY`
//! (4,096) of them, or FDEs skipped.

use super::super::table::{BuildError, Builder, Pace, Stopped, Storage};
use super::error::SframeError;
use super::format::{row, Fre};
use super::section::Section;
use super::validate::MAX_FRES_PER_FDE;

/// The most blocks a PCMASK FDE expands to (a PLT of 64 Ki entries).
pub const MAX_PCMASK_BLOCKS: u32 = 1 << 16;
/// The most rows (blocks times FREs) PCMASK FDEs expand to in one
/// section: a few PLTs' worth, as `.eh_frame`'s `MAX_PLT_BLOCKS_TOTAL`
/// blocks of two rows.
pub const MAX_PCMASK_ROWS_TOTAL: u64 = 1 << 19;

/// Why a section did not compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileError {
    /// The section's bytes (only for a section that was not validated).
    Sframe(SframeError),
    /// The engine's limits.
    Build(BuildError),
    /// The caller's `keep_going` hook said stop.
    Stopped,
}

impl From<SframeError> for CompileError {
    fn from(e: SframeError) -> Self {
        CompileError::Sframe(e)
    }
}

impl From<BuildError> for CompileError {
    fn from(e: BuildError) -> Self {
        CompileError::Build(e)
    }
}

impl From<Stopped> for CompileError {
    fn from(_: Stopped) -> Self {
        CompileError::Stopped
    }
}

/// Feeds every row of `section` (validated) into `b`.  Returns the number
/// of FDEs skipped (overlapping, or PCMASK too large).  `keep_going` is
/// asked now and then ([`Pace`]): false stops the compilation
/// ([`CompileError::Stopped`]).
pub fn compile<S: Storage>(
    section: &Section<'_>,
    b: &mut Builder<S>,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<u32, CompileError> {
    let fres = section.fres();
    let fixed = section.fixed();
    let mut prev_end: Option<u64> = None;
    let mut skipped = 0u32;
    let mut pcmask_left = MAX_PCMASK_ROWS_TOTAL;
    let mut pace = Pace::new(keep_going);
    // FDEs and FREs decoded.
    let mut work = 0u64;
    for i in 0..section.num_fdes() {
        work = work.saturating_add(1);
        pace.check(work)?;
        let fde = section.fde(i)?;
        let end = fde
            .start
            .checked_add(fde.size as u64)
            .ok_or(SframeError::Overflow)?;
        if fde.size == 0 || prev_end.is_some_and(|e| fde.start < e) {
            skipped += 1;
            continue;
        }
        let (blocks, rep) = if fde.pcmask {
            let rep = fde.rep_size as u32;
            if rep == 0 {
                return Err(SframeError::ZeroRepSize.into());
            }
            (fde.size.div_ceil(rep), rep)
        } else {
            (1, 0)
        };
        let num_fres = fde.num_fres.min(MAX_FRES_PER_FDE);
        // An FRE-less block costs a loop step all the same.
        let rows = if fde.pcmask {
            blocks as u64 * num_fres.max(1) as u64
        } else {
            0
        };
        if blocks > MAX_PCMASK_BLOCKS || rows > pcmask_left {
            skipped += 1;
            continue;
        }
        pcmask_left -= rows;
        prev_end = Some(end);
        for blk in 0..blocks {
            let block_start = fde.start + (blk as u64) * (rep as u64);
            let mut at = fde.fres_off;
            for _ in 0..num_fres {
                work = work.saturating_add(1);
                pace.check(work)?;
                let (fre, next): (Fre, usize) = Fre::decode(fres, at, fde.fre_type)?;
                at = next;
                let pc = block_start + fre.start as u64;
                if pc >= end {
                    break;
                }
                b.row(pc, row(fres, fixed, &fde, &fre).ok())?;
            }
        }
        b.end(end)?;
    }
    Ok(skipped)
}
