// SPDX-License-Identifier: GPL-2.0

//! [`Common`]: the form of nearly every row a compiler emits, which a
//! walk steps with one read of the two words below the CFA, and which
//! packs into 32 bits, so that a walk's row memo can keep it and step a
//! remembered frame without looking at the table again.  Pure `core`.

use super::layout::{CFA_MIN, COMMON_CFA_FP, COMMON_EH, COMMON_FP_SLOT_MASK};
use super::layout::{COMMON_FP_SLOT_SHIFT, COMMON_OFF_SHIFT, COMMON_VALID};
use super::row::{CfaRule, Reg, Row, Rule};
use super::step::Regs;

/// A row of the common form: CFA = (FP if `cfa_fp`, else SP) + `off`,
/// the return address at CFA - 8, the caller's FP at CFA - 8 x `fp_slot`
/// (2 to 15: a frame-pointer prologue's `push %rbp` saves it at CFA - 16,
/// code without frame pointers that uses RBP pushes it after up to five
/// other registers), or unchanged (`fp_slot` 0); no dereference, no
/// signal frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Common {
    /// The CFA's base is FP (else SP).
    pub cfa_fp: bool,
    /// Added to the base; fits in [`Common::pack`]'s 25 bits.
    pub off: i32,
    /// The caller's FP is the word at CFA - 8 x `fp_slot`; 0: it is this
    /// frame's.
    pub fp_slot: u8,
}

/// The bits of a packed [`Common`] below its offset.
const PACK_SHIFT: u32 = COMMON_OFF_SHIFT;
/// The largest `fp_slot`.
const MAX_FP_SLOT: i32 = COMMON_FP_SLOT_MASK as i32;

impl Common {
    /// `row`'s common form, if it has one (and its offset packs).
    #[inline]
    pub fn of(row: &Row) -> Option<Self> {
        if row.signal || row.cfa.deref || row.ra != Some(Rule::AtCfa(-8)) {
            return None;
        }
        let fp_slot = match row.fp {
            None => 0,
            Some(Rule::AtCfa(o)) if o % 8 == 0 && (-8 * MAX_FP_SLOT..=-16).contains(&o) => {
                (-o / 8) as u8
            }
            Some(_) => return None,
        };
        let cfa_fp = match row.cfa.reg {
            Reg::Sp => false,
            Reg::Fp => true,
            Reg::Dwarf(_) => return None,
        };
        let off = row.cfa.offset;
        // The offset must survive `pack()`.
        if (off << PACK_SHIFT) >> PACK_SHIFT != off {
            return None;
        }
        Some(Self {
            cfa_fp,
            off,
            fp_slot,
        })
    }

    /// The row this is the form of.
    pub fn row(self) -> Row {
        Row {
            cfa: CfaRule {
                reg: if self.cfa_fp { Reg::Fp } else { Reg::Sp },
                offset: self.off,
                deref: false,
            },
            ra: Some(Rule::AtCfa(-8)),
            fp: (self.fp_slot != 0).then_some(Rule::AtCfa(-8 * self.fp_slot as i32)),
            signal: false,
        }
    }

    /// The CFA from `sp` and `fp`, with [`super::step`]'s checks (no
    /// overflow, above SP, 8-byte aligned) and room for the slots below
    /// it.
    #[inline]
    pub fn cfa(self, sp: u64, fp: u64) -> Option<u64> {
        let base = if self.cfa_fp { fp } else { sp };
        let cfa = base.checked_add_signed(self.off as i64)?;
        (cfa > sp && cfa % 8 == 0 && cfa >= CFA_MIN).then_some(cfa)
    }

    /// The caller's registers from this frame's, the return address and
    /// the word at CFA - 8 x `fp_slot` (unused if `fp_slot` is 0): what
    /// [`super::step`] gives with the row.
    #[inline]
    pub fn caller(self, cfa: u64, regs: &Regs, ra: u64, saved_fp: u64) -> Regs {
        Regs {
            pc: ra,
            sp: cfa,
            fp: if self.fp_slot != 0 { saved_fp } else { regs.fp },
        }
    }

    /// 32 bits, never 0, with `tag` (one bit of the caller's) kept too.
    #[inline]
    pub fn pack(self, tag: bool) -> u32 {
        COMMON_VALID
            | if self.cfa_fp { COMMON_CFA_FP } else { 0 }
            | if tag { COMMON_EH } else { 0 }
            | (self.fp_slot as u32 & COMMON_FP_SLOT_MASK) << COMMON_FP_SLOT_SHIFT
            | (self.off as u32) << PACK_SHIFT
    }

    /// The form and tag `pack()` made `p` from; `None` for 0.
    #[inline]
    pub fn unpack(p: u32) -> Option<(Self, bool)> {
        if p & COMMON_VALID == 0 {
            return None;
        }
        let c = Self {
            cfa_fp: p & COMMON_CFA_FP != 0,
            off: (p as i32) >> PACK_SHIFT,
            fp_slot: (p >> COMMON_FP_SLOT_SHIFT & COMMON_FP_SLOT_MASK) as u8,
        };
        Some((c, p & COMMON_EH != 0))
    }
}
