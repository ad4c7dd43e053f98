// SPDX-License-Identifier: GPL-2.0

//! `.eh_frame_hdr` (`PT_GNU_EH_FRAME`): version 1, the encoded address of
//! `.eh_frame`, the FDE count and the sorted table of (initial location,
//! FDE address) pairs.  Only the table encoding every linker writes,
//! `DW_EH_PE_datarel | DW_EH_PE_sdata4` (relative to the header's start),
//! is accepted: it is what makes the table fixed-size and searchable, and
//! the compiler walks it instead of the whole `.eh_frame`, so that
//! functions come in address order, as the engine needs them.

use super::error::EhError;
use super::reader::{ReadError, Reader, DW_EH_PE_INDIRECT, DW_EH_PE_OMIT};

/// The one table encoding accepted: `DW_EH_PE_datarel | DW_EH_PE_sdata4`.
pub const TABLE_ENC: u8 = 0x3b;
/// The bytes of one table entry.
pub const ENTRY_LEN: usize = 8;

/// What the header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HdrInfo {
    /// The link-time address of `.eh_frame` (`eh_frame_ptr`, decoded).
    pub eh_frame_addr: u64,
    /// The number of entries of the sorted table.
    pub fde_count: u32,
}

/// A parsed header: its info and where the table starts.
#[derive(Clone, Copy, Debug)]
pub struct Hdr<'a> {
    /// What the header says.
    pub info: HdrInfo,
    /// Exactly `fde_count` entries.
    pub table: &'a [u8],
    /// The header's link-time address (the `datarel` base).
    pub addr: u64,
}

fn hdr_err(e: ReadError) -> EhError {
    match e {
        ReadError::Truncated | ReadError::Leb => EhError::Truncated,
        ReadError::Encoding => EhError::Encoding,
    }
}

/// The fixed part of the header: what it says and the table's offset.
pub(super) fn head(hdr: &[u8], addr: u64) -> Result<(HdrInfo, usize), EhError> {
    let mut r = Reader::new(hdr, addr);
    let version = r.u8().map_err(hdr_err)?;
    let ptr_enc = r.u8().map_err(hdr_err)?;
    let count_enc = r.u8().map_err(hdr_err)?;
    let table_enc = r.u8().map_err(hdr_err)?;
    if version != 1 {
        return Err(EhError::Version);
    }
    // An indirect pointer would have to be read from memory.
    if ptr_enc & DW_EH_PE_INDIRECT != 0 || ptr_enc == DW_EH_PE_OMIT {
        return Err(EhError::Encoding);
    }
    // A count is a number, not an address: no application.
    if count_enc == DW_EH_PE_OMIT || count_enc & 0xf0 != 0 || table_enc != TABLE_ENC {
        return Err(EhError::Encoding);
    }
    let eh_frame_addr = r.pointer(ptr_enc, Some(addr)).map_err(hdr_err)?;
    let count = r.format(count_enc).map_err(hdr_err)?;
    let fde_count = u32::try_from(count).map_err(|_| EhError::Count)?;
    Ok((
        HdrInfo {
            eh_frame_addr,
            fde_count,
        },
        r.pos(),
    ))
}

impl<'a> Hdr<'a> {
    /// Parses the header in `hdr` (loaded at `addr`); the table must be
    /// there whole.
    pub fn parse(hdr: &'a [u8], addr: u64) -> Result<Self, EhError> {
        let (info, at) = head(hdr, addr)?;
        let len = (info.fde_count as usize)
            .checked_mul(ENTRY_LEN)
            .ok_or(EhError::Truncated)?;
        let end = at.checked_add(len).ok_or(EhError::Truncated)?;
        let table = hdr.get(at..end).ok_or(EhError::Truncated)?;
        Ok(Hdr { info, table, addr })
    }

    /// Entry `i`: (initial location, FDE address), both link-time.
    pub fn entry(&self, i: u32) -> Option<(u64, u64)> {
        let at = (i as usize).checked_mul(ENTRY_LEN)?;
        decode_entry(self.table.get(at..at.checked_add(ENTRY_LEN)?)?, self.addr)
    }
}

/// A table entry's bytes `e` (of a header at link-time address `addr`):
/// (initial location, FDE address), both link-time.
pub(super) fn decode_entry(e: &[u8], addr: u64) -> Option<(u64, u64)> {
    let word = |b: &[u8]| -> Option<i64> { Some(i32::from_le_bytes(b.try_into().ok()?) as i64) };
    let loc = addr.wrapping_add_signed(word(e.get(0..4)?)?);
    let fde = addr.wrapping_add_signed(word(e.get(4..8)?)?);
    Some((loc, fde))
}

/// From `.eh_frame_hdr` (the bytes of `PT_GNU_EH_FRAME`, at link-time
/// address `hdr_addr`): the link-time address of `.eh_frame` and the
/// number of table entries.  Only the fixed part is read: the table may
/// be cut off (the caller can read the header first to find the rest).
pub fn hdr_info(hdr: &[u8], hdr_addr: u64) -> Result<HdrInfo, EhError> {
    Ok(head(hdr, hdr_addr)?.0)
}
