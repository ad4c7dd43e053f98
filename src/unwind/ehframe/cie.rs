// SPDX-License-Identifier: GPL-2.0

//! A CIE: what its FDEs share.  Accepted: version 1 or 3, an
//! augmentation string of `z` followed by `R`, `P`, `L`, `S` (or empty),
//! return-address register 16 (x86-64's RIP).  Anything else (GCC's
//! ancient `eh`, a vendor letter, another architecture's RA column) makes
//! the CIE unusable: its FDEs are skipped rather than guessed at.

use super::entry::{entry, EntryError};
use super::reader::{ReadError, Reader, DW_EH_PE_INDIRECT, DW_EH_PE_OMIT, DW_EH_PE_PCREL};

/// The longest CIE initial-instruction program run, in bytes.  Real CIEs
/// have a few bytes (GCC: `def_cfa rsp 8; offset rip -8`, then padding);
/// the cap keeps the per-FDE cost of replaying its CIE a constant.
pub const MAX_CIE_INSNS: usize = 128;
/// The DWARF number of x86-64's return-address column.
pub const RA_REG: u64 = 16;

/// A parsed CIE.
#[derive(Clone, Copy, Debug)]
pub struct Cie<'a> {
    /// The offset of the CIE in `.eh_frame`.
    pub off: usize,
    /// The factor of `advance_loc` deltas.
    pub code_align: u64,
    /// The factor of `offset`-style register offsets.
    pub data_align: i64,
    /// `R`: how FDEs encode `pc_begin` (absptr without `R`).
    pub fde_enc: u8,
    /// `z`: FDEs carry augmentation data (skipped by its length).
    pub has_z: bool,
    /// `S`: the FDEs are signal trampolines.
    pub signal: bool,
    /// The initial instructions.
    pub insns: Reader<'a>,
}

/// Why a CIE is unusable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CieError {
    /// Not a CIE (an FDE, the terminator) or cut short.
    NotCie,
    /// A field out of bounds or malformed.
    Read(ReadError),
    /// Version, augmentation or RA register not supported.
    Unsupported,
}

impl From<ReadError> for CieError {
    fn from(e: ReadError) -> Self {
        CieError::Read(e)
    }
}

/// Whether `enc` can encode an FDE's `pc_begin`: a known format, absolute
/// or PC-relative, not indirect.  `datarel` has no base in x86-64
/// `.eh_frame`, and `textrel`/`funcrel`/`aligned` no use there.
pub fn fde_enc_ok(enc: u8) -> bool {
    let format_ok = matches!(enc & 0x0f, 0x00..=0x04 | 0x09..=0x0c);
    let app_ok = matches!(enc & 0x70, 0 | DW_EH_PE_PCREL);
    enc != DW_EH_PE_OMIT && enc & DW_EH_PE_INDIRECT == 0 && format_ok && app_ok
}

/// The CIE at offset `off` of `eh` (loaded at `eh_addr`).
pub fn parse_cie(eh: &[u8], eh_addr: u64, off: usize) -> Result<Cie<'_>, CieError> {
    let e = entry(eh, eh_addr, off).map_err(|e| match e {
        EntryError::Terminator => CieError::NotCie,
        EntryError::Read(r) => CieError::Read(r),
    })?;
    if e.id != 0 {
        return Err(CieError::NotCie);
    }
    let mut r = e.body;
    let version = r.u8()?;
    if version != 1 && version != 3 {
        return Err(CieError::Unsupported);
    }
    // The augmentation string: at most "zRPLS" and its NUL.
    let mut aug = [0u8; 6];
    let mut n = 0usize;
    loop {
        let c = r.u8()?;
        if c == 0 {
            break;
        }
        let slot = aug.get_mut(n).ok_or(CieError::Unsupported)?;
        *slot = c;
        n = n.saturating_add(1);
    }
    let aug = aug.get(..n).ok_or(CieError::Unsupported)?;
    let has_z = aug.first() == Some(&b'z');
    if !aug.is_empty() && !has_z {
        return Err(CieError::Unsupported);
    }
    let code_align = r.uleb()?;
    let data_align = r.sleb()?;
    let ra = if version == 1 {
        r.u8()? as u64
    } else {
        r.uleb()?
    };
    if ra != RA_REG {
        return Err(CieError::Unsupported);
    }
    let mut fde_enc = 0u8;
    let mut signal = false;
    if has_z {
        let len = usize::try_from(r.uleb()?).map_err(|_| ReadError::Truncated)?;
        let mut data = r.sub(len)?;
        for &c in aug.get(1..).unwrap_or(&[]) {
            match c {
                b'R' => fde_enc = data.u8()?,
                b'P' => {
                    // The personality routine: parsed to find what
                    // follows, never dereferenced, so indirect is fine.
                    let enc = data.u8()?;
                    data.pointer(enc, None)?;
                }
                b'L' => {
                    data.u8()?;
                }
                b'S' => signal = true,
                _ => return Err(CieError::Unsupported),
            }
        }
    }
    if !fde_enc_ok(fde_enc) {
        return Err(CieError::Unsupported);
    }
    if r.remaining() > MAX_CIE_INSNS {
        return Err(CieError::Unsupported);
    }
    Ok(Cie {
        off,
        code_align,
        data_align,
        fde_enc,
        has_z,
        signal,
        insns: r,
    })
}
