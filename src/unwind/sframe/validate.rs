// SPDX-License-Identifier: GPL-2.0

//! The one-time validation pass over a whole section.  After it, every
//! lookup in the section succeeds or finds nothing: no FDE or FRE that a
//! lookup can reach is malformed.
//!
//! Rules, besides the header's ([`super::format::Header::parse`]) and the
//! layout's ([`super::format::Header::layout`]):
//! - FDEs are sorted by start address and do not overlap (a function
//!   ends at or before the next one starts), and no end overflows;
//! - every FDE's info bytes are known, PCMASK FDEs have `rep_size != 0`,
//!   and its first FRE (v3: its attribute) is inside the FRE sub-section;
//! - no FDE has more than [`MAX_FRES_PER_FDE`] FREs, and the FDEs' FRE
//!   counts add up to the header's;
//! - every FRE is inside the FRE sub-section, its start offsets strictly
//!   increase and stay below the function size (PCMASK: below
//!   `rep_size`), data words are 1, 2 or 4 bytes, and their number and
//!   meaning fit the FDE type ([`super::format::row`]).
//!
//! Cost: one pass over the FDEs and over at most the header's number of
//! FREs, which the layout check bounded by the section's size.

use super::super::table::Row;
use super::error::SframeError;
use super::format::{row, Fde, Fixed, Fre};
use super::section::Section;

/// The most FREs one function may have.  A lookup scans its function's
/// FREs linearly; this bounds that scan.  v3 stores the count in 16
/// bits, and no compiled function comes close.
pub const MAX_FRES_PER_FDE: u32 = 0xffff;

impl<'a> Section<'a> {
    /// Parses and fully validates: the section the kernel caches.
    pub fn new(data: &'a [u8], addr: u64) -> Result<Section<'a>, SframeError> {
        let s = Section::parse(data, addr)?;
        validate(&s)?;
        Ok(s)
    }
}

/// Checks every FDE and FRE of `s` (see the module documentation).
pub fn validate(s: &Section<'_>) -> Result<(), SframeError> {
    let fres = s.fres();
    let fixed = s.fixed();
    let claimed = s.header.num_fres as u64;
    let mut seen: u64 = 0;
    let mut prev: Option<(u64, u64)> = None;
    for i in 0..s.num_fdes() {
        let fde = s.fde(i)?;
        let end = fde
            .start
            .checked_add(fde.size as u64)
            .ok_or(SframeError::FunctionEndOverflow)?;
        if let Some((prev_start, prev_end)) = prev {
            if fde.start < prev_start {
                return Err(SframeError::FdesUnsorted);
            }
            if fde.start < prev_end {
                return Err(SframeError::FdesOverlap);
            }
        }
        prev = Some((fde.start, end));
        if fde.num_fres > MAX_FRES_PER_FDE {
            return Err(SframeError::TooManyFres);
        }
        // Count before scanning, so that FDEs sharing FREs cannot make
        // the pass quadratic.
        // At most 2^32 counts below 2^32 each: no overflow in u64.
        seen = seen.wrapping_add(fde.num_fres as u64);
        if seen > claimed {
            return Err(SframeError::FreCountMismatch);
        }
        fde_rows(fres, fixed, &fde, &mut |_, _| true)?;
    }
    if seen != claimed {
        return Err(SframeError::FreCountMismatch);
    }
    Ok(())
}

/// Checks the FREs of `fde` in `fres` (the FRE sub-section, or a window
/// on it from the FDE's first FRE on), as the validation pass does: in
/// bounds, starts strictly increasing and below the function's end
/// (PCMASK: the block's), rules valid.  Gives each FRE's start and rules
/// to `each`, in order; `Ok(false)` as soon as `each` says stop.
pub(crate) fn fde_rows(
    fres: &[u8],
    fixed: Fixed,
    fde: &Fde,
    each: &mut dyn FnMut(u32, Row) -> bool,
) -> Result<bool, SframeError> {
    let limit = if fde.pcmask {
        fde.rep_size as u32
    } else {
        fde.size
    };
    let mut off = fde.fres_off;
    let mut last: Option<u32> = None;
    for _ in 0..fde.num_fres {
        let (fre, next) = Fre::decode(fres, off, fde.fre_type)?;
        if last.is_some_and(|l| fre.start <= l) {
            return Err(SframeError::FreStartNotIncreasing);
        }
        if fre.start >= limit {
            return Err(SframeError::FreStartPastEnd);
        }
        if !each(fre.start, row(fres, fixed, fde, &fre)?) {
            return Ok(false);
        }
        last = Some(fre.start);
        off = next;
    }
    Ok(true)
}
