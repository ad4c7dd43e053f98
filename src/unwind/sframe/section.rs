// SPDX-License-Identifier: GPL-2.0

//! [`Section`]: a parsed view of one `.sframe` section's bytes, with
//! the link-time address it was loaded from.  Building one costs O(1)
//! (the header); [`super::validate`] checks the rest once
//! ([`Section::new`] is there, so that this file does not depend on it).  Every
//! accessor is bounds-checked, so a section that was never validated
//! gives wrong answers or errors, never a panic.
//!
//! A section may also be a window ([`Section::window`]): one FDE and the
//! bytes of the FRE sub-section from its first FRE on, as a lookup by
//! function reads them from the file; the same accessors decode them.

use super::error::SframeError;
use super::format::{read_i32, read_i64, read_u16, read_u32, read_u8, Fde, Fixed, Header, Version};
use super::format::{Layout, V3_ATTR_LEN};

/// The block size of a v1 PCMASK FDE (see [`Section::fde`]).
pub const V1_PCMASK_REP_SIZE: u8 = 16;

/// A parsed SFrame section.  Addresses (FDE starts, lookup PCs) are
/// link-time addresses: the kernel subtracts the load bias first.
#[derive(Clone, Copy, Debug)]
pub struct Section<'a> {
    /// The decoded header.
    pub header: Header,
    /// The FDE sub-section.
    fdes: &'a [u8],
    /// The FRE sub-section.
    fres: &'a [u8],
    /// The link-time address of the FDE sub-section (the base of PCREL
    /// starts).
    fdes_addr: u64,
    /// The link-time address of the section (the base of other starts).
    addr: u64,
    /// The number of bytes of the section that are used.
    len: usize,
    /// The index of the first FDE in `fdes` (0 but in a window).
    fde_base: u32,
    /// The offset of `fres` in the FRE sub-section (0 but in a window).
    fre_base: usize,
}

impl<'a> Section<'a> {
    /// Parses the header of the section in `data`, loaded at link-time
    /// address `addr` (`PT_GNU_SFRAME`'s `p_vaddr`).  `data` may be
    /// longer than the section (ld pads the segment); bytes past the
    /// header-derived length are ignored.  Does not validate FDEs or
    /// FREs: see [`super::validate`] or [`Section::new`].
    pub fn parse(data: &'a [u8], addr: u64) -> Result<Section<'a>, SframeError> {
        let header = Header::parse(data)?;
        let l: Layout = header.layout()?;
        if l.len > data.len() {
            return Err(SframeError::Truncated);
        }
        let fdes = data
            .get(l.fdes_start..l.fdes_end)
            .ok_or(SframeError::Truncated)?;
        let fres = data
            .get(l.fres_start..l.fres_end)
            .ok_or(SframeError::Truncated)?;
        let fdes_addr = addr
            .checked_add(l.fdes_start as u64)
            .ok_or(SframeError::Overflow)?;
        Ok(Section {
            header,
            fdes,
            fres,
            fdes_addr,
            addr,
            len: l.len,
            fde_base: 0,
            fre_base: 0,
        })
    }

    /// A window on the section at `addr` whose header is `header`: FDE
    /// `i`'s bytes `fde` (at link-time address `fde_addr`) and the FRE
    /// sub-section's bytes from offset `fre_base` on (`fres`, maybe not
    /// to its end).  [`Section::fde`] of `i` decodes them, with
    /// [`Fde::fres_off`] counted in `fres`; other FDEs are out of bounds.
    pub fn window(
        header: Header,
        addr: u64,
        i: u32,
        fde: &'a [u8],
        fde_addr: u64,
        fre_base: usize,
        fres: &'a [u8],
    ) -> Section<'a> {
        Section {
            header,
            fdes: fde,
            fres,
            fdes_addr: fde_addr,
            addr,
            len: 0,
            fde_base: i,
            fre_base,
        }
    }

    /// The number of bytes the section uses (from its header).
    pub const fn len(&self) -> usize {
        self.len
    }

    /// The number of FDEs.
    pub const fn num_fdes(&self) -> u32 {
        self.header.num_fdes
    }

    /// The FRE sub-section.
    pub(crate) const fn fres(&self) -> &'a [u8] {
        self.fres
    }

    /// The header's fixed offsets.
    pub(crate) const fn fixed(&self) -> Fixed {
        self.header.fixed()
    }

    /// The offset of FDE `i` in `fdes`.
    fn fde_off(&self, i: u32) -> Result<usize, SframeError> {
        let i = i.checked_sub(self.fde_base).ok_or(SframeError::Truncated)?;
        (i as usize)
            .checked_mul(self.header.version.fde_len())
            .ok_or(SframeError::Overflow)
    }

    /// The absolute start address of FDE `i`'s function: only the index
    /// part, for the binary search.
    pub fn fde_start(&self, i: u32) -> Result<u64, SframeError> {
        let off = self.fde_off(i)?;
        let rel = match self.header.version {
            Version::V1 | Version::V2 => read_i32(self.fdes, off)? as i64,
            Version::V3 => read_i64(self.fdes, off)?,
        };
        // PCREL: from the field itself, the first of the FDE.  Otherwise
        // from the start of the section.
        let base = if self.header.pcrel() {
            self.fdes_addr
                .checked_add(off as u64)
                .ok_or(SframeError::Overflow)?
        } else {
            self.addr
        };
        base.checked_add_signed(rel).ok_or(SframeError::Overflow)
    }

    /// Decodes FDE `i` (for v3, with its attribute from the FRE
    /// sub-section).  The FDE's fields are checked; its FREs are not.
    pub fn fde(&self, i: u32) -> Result<Fde, SframeError> {
        if i >= self.header.num_fdes {
            return Err(SframeError::Truncated);
        }
        let start = self.fde_start(i)?;
        let off = self.fde_off(i)?;
        let at = |d: usize| off.checked_add(d).ok_or(SframeError::Overflow);
        let v = self.header.version;
        // The first FRE's offset (v3: the attribute's) in `fres`.
        let rebase = |o: u32| {
            (o as usize)
                .checked_sub(self.fre_base)
                .ok_or(SframeError::FreOffsetOutOfBounds)
        };
        let (size, num_fres, info, info2, rep_size, fres_off) = match v {
            Version::V1 | Version::V2 => {
                let fre_off = rebase(read_u32(self.fdes, at(v.fre_off_at())?)?)?;
                let rep_size = if v == Version::V2 {
                    read_u8(self.fdes, at(17)?)?
                } else {
                    0
                };
                (
                    read_u32(self.fdes, at(4)?)?,
                    read_u32(self.fdes, at(12)?)?,
                    read_u8(self.fdes, at(16)?)?,
                    0,
                    rep_size,
                    fre_off,
                )
            }
            Version::V3 => {
                let a = rebase(read_u32(self.fdes, at(v.fre_off_at())?)?)?;
                let attr = |d: usize| a.checked_add(d).ok_or(SframeError::Overflow);
                let oob = |_| SframeError::FreOffsetOutOfBounds;
                (
                    read_u32(self.fdes, at(8)?)?,
                    read_u16(self.fres, attr(0)?).map_err(oob)? as u32,
                    read_u8(self.fres, attr(2)?).map_err(oob)?,
                    read_u8(self.fres, attr(3)?).map_err(oob)?,
                    read_u8(self.fres, attr(4)?).map_err(oob)?,
                    attr(V3_ATTR_LEN)?,
                )
            }
        };
        let (fre_type, pcmask, flex, signal) = Fde::decode_info(v, info, info2)?;
        // v1 FDEs have no rep_size.  binutils 2.40's ld emits PCMASK FDEs
        // only for .plt, whose x86-64 entries are 16 bytes.
        let rep_size = if v == Version::V1 && pcmask {
            V1_PCMASK_REP_SIZE
        } else {
            rep_size
        };
        if pcmask && rep_size == 0 {
            return Err(SframeError::ZeroRepSize);
        }
        // The first FRE must start inside the FRE sub-section (v3: it may
        // be at its end when there are none).
        if (num_fres > 0 && fres_off >= self.fres.len()) || fres_off > self.fres.len() {
            return Err(SframeError::FreOffsetOutOfBounds);
        }
        Ok(Fde {
            start,
            size,
            fres_off,
            num_fres,
            fre_type,
            pcmask,
            rep_size,
            flex,
            signal,
        })
    }
}
