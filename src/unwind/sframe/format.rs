// SPDX-License-Identifier: GPL-2.0

//! The SFrame on-disk format (versions 1, 2 and 3, AMD64 only), decoded
//! from a byte slice with bounds-checked, unaligned, little-endian reads.
//!
//! A section is a 28-byte header, an optional auxiliary header, then two
//! sub-sections whose offsets count from the end of the (auxiliary)
//! header:
//!
//! ```text
//! header   u16 magic 0xdee2, u8 version, u8 flags, u8 abi (3 = AMD64),
//!          i8 fixed FP offset, i8 fixed RA offset, u8 auxhdr_len,
//!          u32 num_fdes, u32 num_fres, u32 fre_len, u32 fdeoff, u32 freoff
//! FDEs     v1: 17 bytes {i32 start, u32 size, u32 fre_off, u32 num_fres, u8 info}
//!          v2: 20 bytes, v1 + {u8 rep_size, u16 padding}
//!          v3: 16 bytes {i64 start, u32 size, u32 fre_off}; the rest
//!              (5 bytes {u16 num_fres, u8 info, u8 info2, u8 rep_size})
//!              sits at fre_off in the FRE sub-section, its FREs after it
//! FREs     {start: u8|u16|u32 (FDE's FRE type), u8 info, N data words of S bytes}
//! ```
//!
//! Nothing in the format is aligned (v3's i64 sits at 4 mod 8), so every
//! field is read byte-wise.  Every read is checked: a short slice is an
//! error value, never a panic.

use super::super::table::{CfaRule, Reg, Row, Rule};
use super::error::SframeError;

/// The magic number, in the target's (little-endian) byte order.
pub const MAGIC: u16 = 0xdee2;
/// The size of the fixed header.
pub const HEADER_LEN: usize = 28;
/// `sfh_abi_arch` of AMD64 (little-endian), the only ABI accepted.
pub const ABI_AMD64_LITTLE: u8 = 3;

/// Flag: FDEs are sorted by function start address.
pub const F_FDE_SORTED: u8 = 0x1;
/// Flag (v1, v2): every function keeps a frame pointer.  Informational.
pub const F_FRAME_POINTER: u8 = 0x2;
/// Flag (v2 erratum 1, v3): an FDE's function start is counted from the
/// start field itself rather than from the start of the section.
pub const F_FDE_FUNC_START_PCREL: u8 = 0x4;

/// The size of a v3 function descriptor attribute (in the FRE sub-section).
pub const V3_ATTR_LEN: usize = 5;

/// Reads `N` bytes at `off`.
fn bytes<const N: usize>(b: &[u8], off: usize) -> Result<[u8; N], SframeError> {
    let end = off.checked_add(N).ok_or(SframeError::Truncated)?;
    let s = b.get(off..end).ok_or(SframeError::Truncated)?;
    <[u8; N]>::try_from(s).map_err(|_| SframeError::Truncated)
}

/// Little-endian `u8` at `off`.
pub fn read_u8(b: &[u8], off: usize) -> Result<u8, SframeError> {
    b.get(off).copied().ok_or(SframeError::Truncated)
}

/// Little-endian `u16` at `off`.
pub fn read_u16(b: &[u8], off: usize) -> Result<u16, SframeError> {
    Ok(u16::from_le_bytes(bytes(b, off)?))
}

/// Little-endian `u32` at `off`.
pub fn read_u32(b: &[u8], off: usize) -> Result<u32, SframeError> {
    Ok(u32::from_le_bytes(bytes(b, off)?))
}

/// Little-endian `i32` at `off`.
pub fn read_i32(b: &[u8], off: usize) -> Result<i32, SframeError> {
    Ok(i32::from_le_bytes(bytes(b, off)?))
}

/// Little-endian `i64` at `off`.
pub fn read_i64(b: &[u8], off: usize) -> Result<i64, SframeError> {
    Ok(i64::from_le_bytes(bytes(b, off)?))
}

/// The format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Version {
    /// binutils 2.40 (the first `--gsframe`).
    V1,
    /// binutils 2.41 to 2.45; 2.45 adds the PCREL flag.
    V2,
    /// binutils 2.46 and later.
    V3,
}

impl Version {
    /// The size of one entry of the FDE sub-section.
    pub const fn fde_len(self) -> usize {
        match self {
            Version::V1 => 17,
            Version::V2 => 20,
            Version::V3 => 16,
        }
    }

    /// Where an FDE keeps the offset of its first FRE (v3: of its
    /// attribute) in the FRE sub-section: a `u32` this many bytes in.
    pub const fn fre_off_at(self) -> usize {
        match self {
            Version::V1 | Version::V2 => 8,
            Version::V3 => 12,
        }
    }

    /// The flags this version defines.
    const fn known_flags(self) -> u8 {
        match self {
            Version::V1 => F_FDE_SORTED | F_FRAME_POINTER,
            Version::V2 => F_FDE_SORTED | F_FRAME_POINTER | F_FDE_FUNC_START_PCREL,
            Version::V3 => F_FDE_SORTED | F_FDE_FUNC_START_PCREL,
        }
    }
}

/// The decoded header, checked for everything that does not need the
/// rest of the section: magic, version, flags, ABI, fixed offsets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// The format version.
    pub version: Version,
    /// `F_*` flags (only those of the version).
    pub flags: u8,
    /// The fixed offset of the saved FP from the CFA, 0 if none (AMD64
    /// has none: FREs carry it).
    pub fixed_fp_offset: i8,
    /// The fixed offset of the return address from the CFA (-8 on AMD64).
    pub fixed_ra_offset: i8,
    /// The length of the auxiliary header, skipped.
    pub auxhdr_len: u8,
    /// The number of FDEs.
    pub num_fdes: u32,
    /// The total number of FREs.
    pub num_fres: u32,
    /// The size of the FRE sub-section.
    pub fre_len: u32,
    /// The offset of the FDE sub-section from the end of the headers.
    pub fdeoff: u32,
    /// The offset of the FRE sub-section from the end of the headers.
    pub freoff: u32,
}

/// Where the parts of a section are, in bytes from its start.  All ends
/// were computed in `u64` with overflow checks, then converted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The start of the FDE sub-section.
    pub fdes_start: usize,
    /// Its end (exclusive).
    pub fdes_end: usize,
    /// The start of the FRE sub-section.
    pub fres_start: usize,
    /// Its end (exclusive).
    pub fres_end: usize,
    /// The bytes the section needs: the furthest end.  Bytes after it
    /// (ld pads `PT_GNU_SFRAME`) are ignored.
    pub len: usize,
}

impl Header {
    /// Decodes and checks the header at the start of `b`.
    pub fn parse(b: &[u8]) -> Result<Header, SframeError> {
        if b.len() < HEADER_LEN {
            return Err(SframeError::Truncated);
        }
        match read_u16(b, 0)? {
            MAGIC => {}
            m if m == MAGIC.swap_bytes() => return Err(SframeError::ForeignEndian),
            _ => return Err(SframeError::BadMagic),
        }
        let version = match read_u8(b, 2)? {
            1 => Version::V1,
            2 => Version::V2,
            3 => Version::V3,
            _ => return Err(SframeError::BadVersion),
        };
        let flags = read_u8(b, 3)?;
        if flags & !version.known_flags() != 0 {
            return Err(SframeError::UnknownFlags);
        }
        // Object files from gas are unsorted (ld sorts); a process only
        // maps linked objects, and lookups binary-search.
        if flags & F_FDE_SORTED == 0 {
            return Err(SframeError::NotSorted);
        }
        if read_u8(b, 4)? != ABI_AMD64_LITTLE {
            return Err(SframeError::BadAbi);
        }
        let fixed_fp_offset = read_u8(b, 5)? as i8;
        let fixed_ra_offset = read_u8(b, 6)? as i8;
        // AMD64 never tracks RA in FREs: the header must say where it is.
        // Stack slots are 8-byte words.
        if fixed_ra_offset == 0 || fixed_ra_offset % 8 != 0 {
            return Err(SframeError::BadFixedRaOffset);
        }
        if fixed_fp_offset % 8 != 0 {
            return Err(SframeError::BadFixedFpOffset);
        }
        Ok(Header {
            version,
            flags,
            fixed_fp_offset,
            fixed_ra_offset,
            auxhdr_len: read_u8(b, 7)?,
            num_fdes: read_u32(b, 8)?,
            num_fres: read_u32(b, 12)?,
            fre_len: read_u32(b, 16)?,
            fdeoff: read_u32(b, 20)?,
            freoff: read_u32(b, 24)?,
        })
    }

    /// The fixed offsets that rows fall back on.
    pub const fn fixed(&self) -> Fixed {
        Fixed {
            ra: self.fixed_ra_offset,
            fp: self.fixed_fp_offset,
        }
    }

    /// Whether FDE start addresses are counted from the field itself.
    /// v3 sections from binutils always set it; without it, they count
    /// from the start of the section.
    pub const fn pcrel(&self) -> bool {
        self.flags & F_FDE_FUNC_START_PCREL != 0
    }

    /// Computes where the sub-sections are and checks that they do not
    /// overlap and that the FRE sub-section can hold the FREs claimed.
    /// It does not look at the section's bytes: `len` says how many the
    /// caller must read.
    pub fn layout(&self) -> Result<Layout, SframeError> {
        let hdr_end = HEADER_LEN as u64 + self.auxhdr_len as u64;
        let fde_bytes = (self.num_fdes as u64)
            .checked_mul(self.version.fde_len() as u64)
            .ok_or(SframeError::Overflow)?;
        // All u32 + u8 sums fit in u64: these cannot overflow, but say so.
        let fdes_start = hdr_end
            .checked_add(self.fdeoff as u64)
            .ok_or(SframeError::Overflow)?;
        let fdes_end = fdes_start
            .checked_add(fde_bytes)
            .ok_or(SframeError::Overflow)?;
        let fres_start = hdr_end
            .checked_add(self.freoff as u64)
            .ok_or(SframeError::Overflow)?;
        let fres_end = fres_start
            .checked_add(self.fre_len as u64)
            .ok_or(SframeError::Overflow)?;
        let empty_fdes = fdes_start == fdes_end;
        let empty_fres = fres_start == fres_end;
        if !empty_fdes && !empty_fres && fdes_start < fres_end && fres_start < fdes_end {
            return Err(SframeError::SubsectionsOverlap);
        }
        // Every FRE takes at least 2 bytes (1-byte start, info); in v3
        // every FDE's attribute takes 5 more.  This bounds the validation
        // pass by the section's size.
        let mut min_fre_bytes = (self.num_fres as u64)
            .checked_mul(2)
            .ok_or(SframeError::Overflow)?;
        if self.version == Version::V3 {
            min_fre_bytes = min_fre_bytes
                .checked_add(
                    (self.num_fdes as u64)
                        .checked_mul(V3_ATTR_LEN as u64)
                        .ok_or(SframeError::Overflow)?,
                )
                .ok_or(SframeError::Overflow)?;
        }
        if min_fre_bytes > self.fre_len as u64 {
            return Err(SframeError::FreCountMismatch);
        }
        let len = fdes_end.max(fres_end).max(hdr_end);
        let conv = |v: u64| usize::try_from(v).map_err(|_| SframeError::Overflow);
        Ok(Layout {
            fdes_start: conv(fdes_start)?,
            fdes_end: conv(fdes_end)?,
            fres_start: conv(fres_start)?,
            fres_end: conv(fres_end)?,
            len: conv(len)?,
        })
    }
}

/// How many bytes the section that starts with `header` needs, from its
/// header alone (at least [`HEADER_LEN`] bytes).  The kernel reads this
/// much, not the `PT_GNU_SFRAME` size, which ld pads.
pub fn section_len(header: &[u8]) -> Result<usize, SframeError> {
    Ok(Header::parse(header)?.layout()?.len)
}

/// The size of an FRE's start-offset field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreType {
    /// `u8` start offsets (functions under 256 bytes).
    Addr1,
    /// `u16` start offsets.
    Addr2,
    /// `u32` start offsets.
    Addr4,
}

impl FreType {
    /// Decodes bits 0-3 of an FDE info byte.
    pub fn from_info(info: u8) -> Result<FreType, SframeError> {
        match info & 0xf {
            0 => Ok(FreType::Addr1),
            1 => Ok(FreType::Addr2),
            2 => Ok(FreType::Addr4),
            _ => Err(SframeError::BadFreType),
        }
    }

    /// The size of the start field in bytes.
    pub const fn len(self) -> usize {
        match self {
            FreType::Addr1 => 1,
            FreType::Addr2 => 2,
            FreType::Addr4 => 4,
        }
    }
}

/// FDE info bit 4: the PC type.  PCMASK FDEs describe a block of
/// `rep_size` bytes repeated over the function (ld's `.plt` entries):
/// FREs are matched against `(pc - start) % rep_size`.
pub const FDE_INFO_PCMASK: u8 = 0x10;
/// FDE info bit 5: the aarch64 PAuth key; must be clear on AMD64.
const FDE_INFO_PAUTH_KEY: u8 = 0x20;
/// FDE info bit 7 (v3): the function is a signal trampoline.
pub const FDE_INFO_V3_SIGNAL: u8 = 0x80;

/// A decoded FDE, with the function start made absolute (a link-time
/// address, like the PCs given to lookups).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fde {
    /// The function's first byte.
    pub start: u64,
    /// The function's size in bytes.
    pub size: u32,
    /// The offset of the first FRE in the FRE sub-section (in v3, just
    /// after the attribute).
    pub fres_off: usize,
    /// The number of FREs.
    pub num_fres: u32,
    /// The FRE start-offset size.
    pub fre_type: FreType,
    /// A repetitive block (PCMASK) FDE.
    pub pcmask: bool,
    /// The block size of a PCMASK FDE; non-zero once validated.
    pub rep_size: u8,
    /// A v3 flexible FDE: FRE data words are (control, offset) pairs.
    pub flex: bool,
    /// A v3 signal-frame FDE.
    pub signal: bool,
}

impl Fde {
    /// Checks and decodes an info byte (v1-v3) and info2 byte (v3).
    pub fn decode_info(
        version: Version,
        info: u8,
        info2: u8,
    ) -> Result<(FreType, bool, bool, bool), SframeError> {
        let fre_type = FreType::from_info(info)?;
        let allowed = match version {
            Version::V1 | Version::V2 => 0x1f,
            Version::V3 => 0x1f | FDE_INFO_V3_SIGNAL,
        };
        if info & !allowed != 0 || info & FDE_INFO_PAUTH_KEY != 0 {
            return Err(SframeError::BadFdeInfo);
        }
        let flex = match info2 {
            0 => false,
            1 => true,
            _ => return Err(SframeError::BadFdeType),
        };
        Ok((
            fre_type,
            info & FDE_INFO_PCMASK != 0,
            flex,
            info & FDE_INFO_V3_SIGNAL != 0,
        ))
    }
}

/// FRE info bit 0: the CFA base register of a default FDE's FRE, 1 SP,
/// 0 FP (unused by flexible FDEs).
const FRE_INFO_BASE_SP: u8 = 0x1;
/// FRE info bit 7: aarch64's mangled RA; must be clear on AMD64.
const FRE_INFO_MANGLED_RA: u8 = 0x80;

/// A decoded FRE header: where its data words are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fre {
    /// The offset of the first PC it covers from the function start (or,
    /// for PCMASK, from the start of the block).
    pub start: u32,
    /// The info byte.
    pub info: u8,
    /// The offset of the first data word in the FRE sub-section.
    words_off: usize,
    /// The size S of one data word: 1, 2 or 4 bytes.
    word_len: u8,
    /// The number N of data words, 0 to 15.
    count: u8,
}

impl Fre {
    /// Decodes the FRE at `off` in the FRE sub-section `fres`; returns it
    /// and the offset just past it.  The whole FRE must be inside `fres`.
    pub fn decode(fres: &[u8], off: usize, fre_type: FreType) -> Result<(Fre, usize), SframeError> {
        let t = |_| SframeError::FreTruncated;
        let start = match fre_type {
            FreType::Addr1 => read_u8(fres, off).map_err(t)? as u32,
            FreType::Addr2 => read_u16(fres, off).map_err(t)? as u32,
            FreType::Addr4 => read_u32(fres, off).map_err(t)?,
        };
        let info_off = off
            .checked_add(fre_type.len())
            .ok_or(SframeError::FreTruncated)?;
        let info = read_u8(fres, info_off).map_err(t)?;
        let word_len = match (info >> 5) & 0x3 {
            0 => 1u8,
            1 => 2,
            2 => 4,
            _ => return Err(SframeError::BadDataWordSize),
        };
        let count = (info >> 1) & 0xf;
        let words_off = info_off.checked_add(1).ok_or(SframeError::FreTruncated)?;
        // At most 15 * 4 bytes: no overflow in the product.
        let end = words_off
            .checked_add(count as usize * word_len as usize)
            .ok_or(SframeError::FreTruncated)?;
        if end > fres.len() {
            return Err(SframeError::FreTruncated);
        }
        Ok((
            Fre {
                start,
                info,
                words_off,
                word_len,
                count,
            },
            end,
        ))
    }

    /// The number of data words (for the host tests).
    #[cfg(test)]
    pub const fn count(&self) -> u8 {
        self.count
    }

    /// The data-word size in bytes (for the host tests).
    #[cfg(test)]
    pub const fn word_len(&self) -> u8 {
        self.word_len
    }

    /// Data word `i`, sign-extended (an offset).
    fn word(&self, fres: &[u8], i: u8) -> Result<i32, SframeError> {
        if i >= self.count {
            return Err(SframeError::BadDataWordCount);
        }
        let off = self
            .words_off
            .checked_add(i as usize * self.word_len as usize)
            .ok_or(SframeError::FreTruncated)?;
        let t = |_| SframeError::FreTruncated;
        Ok(match self.word_len {
            1 => read_u8(fres, off).map_err(t)? as i8 as i32,
            2 => read_u16(fres, off).map_err(t)? as i16 as i32,
            _ => read_i32(fres, off).map_err(t)?,
        })
    }

    /// Data word `i`, zero-extended (a flexible FDE's control word).
    fn uword(&self, fres: &[u8], i: u8) -> Result<u32, SframeError> {
        let w = self.word(fres, i)?;
        Ok(match self.word_len {
            1 => w as u32 & 0xff,
            2 => w as u32 & 0xffff,
            _ => w as u32,
        })
    }
}

/// The fixed offsets of the section header that rows fall back on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixed {
    /// The fixed RA offset from the CFA (non-zero: checked by the header).
    pub ra: i8,
    /// The fixed FP offset from the CFA, 0 if none.
    pub fp: i8,
}

/// Decodes a flexible FDE's control word (v3): bit 0 `reg_p` (based on
/// register `regnum` rather than on the CFA), bit 1 `deref_p` (load from
/// the computed address), bit 2 reserved, bits 3 and up `regnum`.
/// Returns `(reg_p, deref_p, regnum)`.
fn flex_control(ctrl: u32) -> Result<(bool, bool, u8), SframeError> {
    if ctrl & 0x4 != 0 {
        return Err(SframeError::BadFlexControl);
    }
    let regnum = u8::try_from(ctrl >> 3).map_err(|_| SframeError::BadFlexControl)?;
    Ok((ctrl & 1 != 0, ctrl & 2 != 0, regnum))
}

/// A flexible FRE's FP or RA rule from its (control, offset) pair:
/// `reg_p = 0` means the word at `CFA + offset` (a load: the deref bit
/// must be clear and the register 0, so that a CFA-based rule with
/// offset is `{0, offset}`); `reg_p = 1` means `reg + offset`, loaded
/// from if `deref_p`.
fn flex_rule(ctrl: u32, offset: i32) -> Result<Rule, SframeError> {
    match flex_control(ctrl)? {
        (false, false, 0) => Ok(Rule::AtCfa(offset)),
        (false, _, _) => Err(SframeError::BadFlexControl),
        (true, deref, n) => Ok(Rule::Reg {
            reg: Reg::from_dwarf(n),
            offset,
            deref,
        }),
    }
}

/// The rules of one FRE of `fde`.  Checks everything about the FRE that
/// the header and FDE decide: the mangled-RA bit, and the number and
/// meaning of data words.
///
/// Default FDEs (AMD64): N = 0 is the outermost frame (RA undefined);
/// N = 1 is `CFA = base + w0`, RA at the fixed offset, FP unchanged (or
/// at the fixed FP offset); N = 2 adds `FP = *(CFA + w1)`.
///
/// Flexible FDEs (v3): data words are pairs in the order CFA, RA, FP.
/// N = 0 outermost; 2 CFA only; 4 CFA and RA; 5 CFA, one zero padding
/// word for RA (RA at the fixed offset), FP; 6 CFA, RA, FP.  The CFA's
/// control word must name a register.
pub fn row(fres: &[u8], fixed: Fixed, fde: &Fde, fre: &Fre) -> Result<Row, SframeError> {
    if fre.info & FRE_INFO_MANGLED_RA != 0 {
        return Err(SframeError::MangledRa);
    }
    let outermost = Row {
        cfa: CfaRule {
            reg: Reg::Sp,
            offset: 0,
            deref: false,
        },
        ra: None,
        fp: None,
        signal: fde.signal,
    };
    let fixed_ra = Some(Rule::AtCfa(fixed.ra as i32));
    let fixed_fp = if fixed.fp != 0 {
        Some(Rule::AtCfa(fixed.fp as i32))
    } else {
        None
    };
    if fre.count == 0 {
        return Ok(outermost);
    }
    if !fde.flex {
        let reg = if fre.info & FRE_INFO_BASE_SP != 0 {
            Reg::Sp
        } else {
            Reg::Fp
        };
        let cfa = CfaRule {
            reg,
            offset: fre.word(fres, 0)?,
            deref: false,
        };
        let fp = match fre.count {
            1 => fixed_fp,
            2 => Some(Rule::AtCfa(fre.word(fres, 1)?)),
            _ => return Err(SframeError::BadDataWordCount),
        };
        return Ok(Row {
            cfa,
            ra: fixed_ra,
            fp,
            signal: fde.signal,
        });
    }
    // Flexible: the count decides the layout; a word that should be
    // padding must be 0.
    if !matches!(fre.count, 2 | 4 | 5 | 6) {
        return Err(SframeError::BadDataWordCount);
    }
    let cfa = match flex_control(fre.uword(fres, 0)?)? {
        (true, deref, n) => CfaRule {
            reg: Reg::from_dwarf(n),
            offset: fre.word(fres, 1)?,
            deref,
        },
        (false, _, _) => return Err(SframeError::BadFlexControl),
    };
    let (ra, fp) = match fre.count {
        2 => (fixed_ra, fixed_fp),
        4 => (
            Some(flex_rule(fre.uword(fres, 2)?, fre.word(fres, 3)?)?),
            fixed_fp,
        ),
        5 => {
            if fre.uword(fres, 2)? != 0 {
                return Err(SframeError::BadFlexControl);
            }
            (
                fixed_ra,
                Some(flex_rule(fre.uword(fres, 3)?, fre.word(fres, 4)?)?),
            )
        }
        _ => (
            Some(flex_rule(fre.uword(fres, 2)?, fre.word(fres, 3)?)?),
            Some(flex_rule(fre.uword(fres, 4)?, fre.word(fres, 5)?)?),
        ),
    };
    Ok(Row {
        cfa,
        ra,
        fp,
        signal: fde.signal,
    })
}
