// SPDX-License-Identifier: GPL-2.0

//! Why `.eh_frame_hdr` could not be used at all.  A bad FDE or CIE is not
//! an error: it is skipped and counted in [`super::Stats`], so that one
//! damaged entry costs one function, not the whole file.

use super::super::table::{BuildError, Stopped};

/// Why [`super::hdr_info`] or [`super::compile`] gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EhError {
    /// The header or its table is shorter than it says.
    Truncated,
    /// The header's version is not 1.
    Version,
    /// An encoding the header may not use: `eh_frame_ptr_enc` not a
    /// supported pointer encoding, `fde_count_enc` omitted or relative,
    /// `table_enc` other than `DW_EH_PE_datarel | DW_EH_PE_sdata4`.
    Encoding,
    /// The FDE count does not fit in a `u32`.
    Count,
    /// An initial location below the one before it: the table is not
    /// the sorted one a binary search needs, so nothing in it is trusted.
    Unsorted,
    /// The unwind-table engine's limits (memory, width, rows).
    Build(BuildError),
    /// The caller's `keep_going` hook said stop.
    Stopped,
}

impl From<BuildError> for EhError {
    fn from(e: BuildError) -> Self {
        EhError::Build(e)
    }
}

impl From<Stopped> for EhError {
    fn from(_: Stopped) -> Self {
        EhError::Stopped
    }
}
