// SPDX-License-Identifier: GPL-2.0

//! An FDE: its CIE, the function's range and its CFA program.  The CIE
//! pointer is relative to its own field and must lead back to a CIE
//! inside the given bytes; `pc_begin` is decoded with the CIE's `R`
//! encoding (absolute or PC-relative to the field's link-time address),
//! `pc_range` with the same format and no application.

use super::cie::Cie;
use super::entry::{entry, EntryError};
use super::reader::{ReadError, Reader};

/// The most bytes of one FDE (length fields included), compiled whole or
/// looked up by function.  Real FDEs have tens of bytes; the largest in
/// Debian's libLLVM has a few KiB.
pub const MAX_FDE_LEN: usize = 1 << 16;

/// A parsed FDE.
#[derive(Clone, Copy, Debug)]
pub struct Fde<'a> {
    /// The function's first address (link-time).
    pub pc_begin: u64,
    /// The function's length in bytes.
    pub pc_range: u64,
    /// The CFA program.
    pub insns: Reader<'a>,
}

/// Why an FDE is skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdeError {
    /// The FDE's own bytes: cut short, malformed, or not an FDE.
    Fde,
    /// Its CIE pointer leads outside the bytes or to no usable CIE.
    Cie,
}

impl From<ReadError> for FdeError {
    fn from(_: ReadError) -> Self {
        FdeError::Fde
    }
}

/// The CIE offset an FDE whose pointer field is at `id_off` names.
fn cie_off(id_off: usize, id: u32) -> Option<usize> {
    id_off.checked_sub(id as usize)
}

/// The offset of the CIE of the FDE at `off`, and the FDE's bytes after
/// the CIE pointer; no more is read, so that a caller can reuse a CIE it
/// already parsed.
pub fn fde_cie(eh: &[u8], eh_addr: u64, off: usize) -> Result<(usize, Reader<'_>), FdeError> {
    let e = entry(eh, eh_addr, off).map_err(|e| match e {
        EntryError::Terminator | EntryError::Read(_) => FdeError::Fde,
    })?;
    if e.id == 0 {
        // A CIE where an FDE should be.
        return Err(FdeError::Fde);
    }
    let cie = cie_off(e.id_off, e.id).ok_or(FdeError::Cie)?;
    Ok((cie, e.body))
}

/// The rest of an FDE (`r`: after its CIE pointer), under `cie`.
pub fn parse_body<'a>(mut r: Reader<'a>, cie: Cie<'a>) -> Result<Fde<'a>, FdeError> {
    let pc_begin = r.pointer(cie.fde_enc, None)?;
    let pc_range = r.format(cie.fde_enc)?;
    if cie.has_z {
        let len = usize::try_from(r.uleb()?).map_err(|_| FdeError::Fde)?;
        r.skip(len)?;
    }
    Ok(Fde {
        pc_begin,
        pc_range,
        insns: r,
    })
}
