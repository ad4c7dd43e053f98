// SPDX-License-Identifier: GPL-2.0

//! Finding the unwind rules for a PC: a binary search of the sorted FDEs
//! for the last one starting at or before the PC, a check that the PC is
//! inside that function, then a linear scan of its FREs for the last one
//! starting at or before the PC's offset in the function (PCMASK FDEs:
//! the offset modulo `rep_size`, the PC's offset in its repeated block).
//!
//! A lookup reads at most 33 FDE starts and [`super::MAX_FRES_PER_FDE`]
//! FREs, whatever the bytes: [`Work`] counts both so that tests can check
//! the bound.  In a validated section nothing here fails; in any other
//! the result is an error or a wrong row, never a panic.

use super::super::table::Row;
use super::error::SframeError;
use super::format::{row, Fde, Fre};
use super::section::Section;
use super::validate::MAX_FRES_PER_FDE;

/// What one lookup did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Work {
    /// FDE start addresses read by the binary search.
    pub fde_probes: u32,
    /// FREs decoded by the scan.
    pub fre_steps: u32,
}

impl<'a> Section<'a> {
    /// The index and FDE of the function that contains `pc` (a link-time
    /// address), if any.
    pub fn find_fde(&self, pc: u64, work: &mut Work) -> Result<Option<(u32, Fde)>, SframeError> {
        // Invariant: FDEs before `lo` start at or before pc, from `hi` on
        // after it.  At most 33 iterations for 2^32 FDEs.
        let mut lo: u32 = 0;
        let mut hi: u32 = self.num_fdes();
        while lo < hi {
            // lo < hi: neither the midpoint nor mid + 1 can overflow;
            // wrapping says so without a panic path.
            let mid = lo.wrapping_add((hi - lo) / 2);
            work.fde_probes = work.fde_probes.saturating_add(1);
            if self.fde_start(mid)? <= pc {
                lo = mid.wrapping_add(1);
            } else {
                hi = mid;
            }
        }
        let Some(i) = lo.checked_sub(1) else {
            return Ok(None);
        };
        let fde = self.fde(i)?;
        // pc >= fde.start here; a function of size 0 covers nothing.
        match pc.checked_sub(fde.start) {
            Some(off) if off < fde.size as u64 => Ok(Some((i, fde))),
            _ => Ok(None),
        }
    }

    /// The rules for `pc` (a link-time address), or `None` when no
    /// function contains it or its function has no FRE that covers it.
    pub fn lookup(&self, pc: u64) -> Result<Option<Row>, SframeError> {
        self.lookup_counted(pc, &mut Work::default())
    }

    /// [`Section::lookup`], adding what it did to `work`.
    pub fn lookup_counted(&self, pc: u64, work: &mut Work) -> Result<Option<Row>, SframeError> {
        let Some((_, fde)) = self.find_fde(pc, work)? else {
            return Ok(None);
        };
        // find_fde checked start <= pc < start + size <= start + u32::MAX.
        let mut off = pc.checked_sub(fde.start).ok_or(SframeError::Overflow)?;
        if fde.pcmask {
            off = off
                .checked_rem(fde.rep_size as u64)
                .ok_or(SframeError::ZeroRepSize)?;
        }
        let fres = self.fres();
        let mut at = fde.fres_off;
        let mut found: Option<Fre> = None;
        // Start offsets increase (validated), so the first FRE past the
        // offset ends the scan.
        for _ in 0..fde.num_fres.min(MAX_FRES_PER_FDE) {
            work.fre_steps = work.fre_steps.saturating_add(1);
            let (fre, next) = Fre::decode(fres, at, fde.fre_type)?;
            if fre.start as u64 > off {
                break;
            }
            found = Some(fre);
            at = next;
        }
        match found {
            Some(fre) => Ok(Some(row(fres, self.fixed(), &fde, &fre)?)),
            None => Ok(None),
        }
    }
}
