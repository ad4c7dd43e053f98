// SPDX-License-Identifier: GPL-2.0

//! `.eh_frame`: not interpreted yet (the parser lands in the next commit);
//! every file without SFrame gets a negative entry, as before.

use super::table::{Builder, Storage};

/// What `.eh_frame_hdr` says.
pub struct HdrInfo {
    /// `.eh_frame`'s link-time address.
    pub eh_frame_addr: u64,
}

/// Why a section is not used.
pub enum EhError {
    /// Not interpreted yet.
    Unsupported,
}

/// What a compile did.
pub struct Stats;

/// Refuses every header.
pub fn hdr_info(_hdr: &[u8], _hdr_addr: u64) -> Result<HdrInfo, EhError> {
    Err(EhError::Unsupported)
}

/// Refuses every section.
pub fn compile<S: Storage>(
    _hdr: &[u8],
    _hdr_addr: u64,
    _eh: &[u8],
    _eh_addr: u64,
    _b: &mut Builder<S>,
) -> Result<Stats, EhError> {
    Err(EhError::Unsupported)
}
