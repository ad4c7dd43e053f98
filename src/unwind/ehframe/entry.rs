// SPDX-License-Identifier: GPL-2.0

//! The framing shared by CIEs and FDEs: a 4-byte length (`0xffffffff`:
//! an 8-byte length follows, the 64-bit DWARF format), then the 4-byte
//! CIE id (0) or CIE pointer.  The LSB keeps that field 4 bytes long in
//! both formats, so the 64-bit form changes the length only.

use super::reader::{ReadError, Reader};

/// One CIE or FDE in `.eh_frame`.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'a> {
    /// The offset of the id (CIE) or CIE pointer (FDE) field.
    pub id_off: usize,
    /// The id field: 0 for a CIE, else the FDE's backwards distance
    /// from the field to its CIE.
    pub id: u32,
    /// The bytes after the id field, up to the entry's end.
    pub body: Reader<'a>,
}

/// Why an entry could not be framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryError {
    /// A zero length: the section's terminator, not an entry.
    Terminator,
    /// The length runs past the bytes, or is too short for the id.
    Read(ReadError),
}

impl From<ReadError> for EntryError {
    fn from(e: ReadError) -> Self {
        EntryError::Read(e)
    }
}

/// The entry at offset `off` of `eh` (loaded at `eh_addr`).
pub fn entry(eh: &[u8], eh_addr: u64, off: usize) -> Result<Entry<'_>, EntryError> {
    let rest = eh.get(off..).ok_or(ReadError::Truncated)?;
    let mut r = Reader::new(rest, eh_addr.wrapping_add(off as u64));
    let len = match r.u32()? {
        0 => return Err(EntryError::Terminator),
        0xffff_ffff => r.u64()?,
        n => n as u64,
    };
    let len = usize::try_from(len).map_err(|_| ReadError::Truncated)?;
    let id_off = off.checked_add(r.pos()).ok_or(ReadError::Truncated)?;
    let mut body = r.sub(len)?;
    let id = body.u32()?;
    Ok(Entry { id_off, id, body })
}
