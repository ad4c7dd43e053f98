// SPDX-License-Identifier: GPL-2.0

//! Why an SFrame section, or one lookup or unwind step in it, was refused.
//!
//! Every way a section can be malformed has its own variant, so that a
//! host test can prove each rule is reachable and the kernel can count
//! rejections by cause.  None of these is a bug in the caller: they all
//! mean "fall back to frame pointers" (or end the walk).

/// A malformed section, found by [`super::Section::parse`] (header and
/// layout), by [`super::validate`] (every FDE and FRE), or by a lookup in
/// a section that was not validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SframeError {
    /// Shorter than the 28-byte header, or than the sub-sections the
    /// header describes.
    Truncated,
    /// The magic is not `0xdee2`.
    BadMagic,
    /// The magic is `0xe2de`: a big-endian section (not AMD64).
    ForeignEndian,
    /// A version other than 1, 2 or 3.
    BadVersion,
    /// A flag bit that this version does not define.
    UnknownFlags,
    /// `SFRAME_F_FDE_SORTED` is not set: lookups binary-search the FDEs.
    NotSorted,
    /// An ABI other than 3 (AMD64, little-endian).
    BadAbi,
    /// The header's fixed RA offset is 0 (AMD64 always has one: RA is
    /// never tracked per FRE) or not a multiple of 8.
    BadFixedRaOffset,
    /// The fixed FP offset is not 0 (none) and not a multiple of 8.
    BadFixedFpOffset,
    /// An offset or address computation overflowed 64 bits.
    Overflow,
    /// The FDE and FRE sub-sections overlap.
    SubsectionsOverlap,
    /// The FDEs' FRE counts do not add up to the header's count, or the
    /// header claims more FREs than the FRE sub-section can hold.
    FreCountMismatch,
    /// One FDE has more FREs than [`super::MAX_FRES_PER_FDE`] (the bound
    /// on the linear scan of one lookup).
    TooManyFres,
    /// FDE start addresses decrease.
    FdesUnsorted,
    /// An FDE starts before the previous one ends.
    FdesOverlap,
    /// A function's end address overflows.
    FunctionEndOverflow,
    /// An FDE info byte with an FRE type other than ADDR1/2/4.
    BadFreType,
    /// An FDE info byte with bits that AMD64 does not define (the aarch64
    /// PAuth key, unused bits).
    BadFdeInfo,
    /// A v3 FDE type other than DEFAULT (0) or FLEX (1), or unused bits
    /// set in `info2`.
    BadFdeType,
    /// A PCMASK FDE with `rep_size == 0` (the lookup divides by it).
    ZeroRepSize,
    /// An FDE's first FRE (v3: its attribute) is outside the FRE
    /// sub-section.
    FreOffsetOutOfBounds,
    /// An FRE runs past the end of the FRE sub-section.
    FreTruncated,
    /// FRE start offsets of one function are not strictly increasing.
    FreStartNotIncreasing,
    /// An FRE starts at or past its function's end (PCMASK: its block's
    /// end, `rep_size`).
    FreStartPastEnd,
    /// An FRE info byte with data-word size 3 (only 1, 2, 4 bytes exist).
    BadDataWordSize,
    /// An FRE with a number of data words that its FDE type cannot use.
    BadDataWordCount,
    /// An FRE with the mangled-RA bit (aarch64 only).
    MangledRa,
    /// A v3 flexible FRE whose control word is invalid: a CFA not based
    /// on a register, a CFA-based rule that is not a load, a padding word
    /// where a rule is required, or reserved bits set.
    BadFlexControl,
}
