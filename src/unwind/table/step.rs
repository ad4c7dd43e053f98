// SPDX-License-Identifier: GPL-2.0

//! One unwind step: from a frame's registers and the [`Row`] for its PC,
//! the caller's registers.  User memory is read through a closure, so
//! that the kernel can pass a faulting copy and the host tests a model.
//!
//! `CFA = base + offset` (loaded from, for a flexible FDE's `deref`);
//! the caller's PC is the return address, its SP the CFA, its FP the
//! saved one or the current one when the row says FP is unchanged.  The
//! CFA must be above SP (every step moves up the stack, so a walk ends)
//! and 8-byte aligned.

use super::row::{Reg, Row, Rule};

/// The registers known in every frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Regs {
    /// The instruction pointer (a return address above the topmost frame).
    pub pc: u64,
    /// The stack pointer.
    pub sp: u64,
    /// The frame pointer (RBP).
    pub fp: u64,
}

/// [`step_with`] for frames where only PC, SP and FP are known (all but
/// the topmost).
pub fn step<M>(row: &Row, regs: &Regs, read_word: M) -> Result<Option<Regs>, StepError>
where
    M: FnMut(u64) -> Option<u64>,
{
    step_with(row, regs, |_| None, read_word)
}

/// The caller's registers, or `None` when `row` marks the outermost
/// frame (RA undefined: the walk ends cleanly).  `reg(n)` gives DWARF
/// register `n` other than RSP and RBP (the topmost frame's saved user
/// registers, for a DRAP register such as R10); `read_word(addr)` reads
/// the 8-byte little-endian word at `addr` of user memory, `None` if it
/// faults.  Signal frames are refused: the caller's registers are in the
/// signal frame, which the row does not describe.
pub fn step_with<G, M>(
    row: &Row,
    regs: &Regs,
    reg: G,
    mut read_word: M,
) -> Result<Option<Regs>, StepError>
where
    G: Fn(u8) -> Option<u64>,
    M: FnMut(u64) -> Option<u64>,
{
    let Some(ra_rule) = row.ra else {
        return Ok(None);
    };
    if row.signal {
        return Err(StepError::SignalFrame);
    }
    let value = |r: Reg| match r {
        Reg::Sp => Some(regs.sp),
        Reg::Fp => Some(regs.fp),
        Reg::Dwarf(n) => reg(n),
    };
    let base = value(row.cfa.reg).ok_or(StepError::RegisterUnavailable)?;
    let mut cfa = base
        .checked_add_signed(row.cfa.offset as i64)
        .ok_or(StepError::Overflow)?;
    if row.cfa.deref {
        cfa = read_word(cfa).ok_or(StepError::Fault)?;
    }
    if cfa <= regs.sp {
        return Err(StepError::CfaNotAboveSp);
    }
    if cfa % 8 != 0 {
        return Err(StepError::MisalignedCfa);
    }
    let mut recover = |rule: Rule| -> Result<u64, StepError> {
        let (addr, deref) = match rule {
            Rule::AtCfa(off) => (cfa.checked_add_signed(off as i64), true),
            Rule::Reg {
                reg: r,
                offset,
                deref,
            } => {
                let v = value(r).ok_or(StepError::RegisterUnavailable)?;
                (v.checked_add_signed(offset as i64), deref)
            }
        };
        let addr = addr.ok_or(StepError::Overflow)?;
        if deref {
            read_word(addr).ok_or(StepError::Fault)
        } else {
            Ok(addr)
        }
    };
    let pc = recover(ra_rule)?;
    let fp = match row.fp {
        Some(rule) => recover(rule)?,
        None => regs.fp,
    };
    Ok(Some(Regs { pc, sp: cfa, fp }))
}

/// Why one unwind step ([`step`]) could not produce the caller's
/// registers.  The walk then ends or falls back to frame pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepError {
    /// The rule needs a register that is not known in this frame (only
    /// SP, FP and PC are, except in the topmost frame).
    RegisterUnavailable,
    /// The CFA, or an address computed from it, overflowed.
    Overflow,
    /// The CFA is not above SP: the walk would not move up the stack.
    CfaNotAboveSp,
    /// The CFA is not 8-byte aligned.
    MisalignedCfa,
    /// Reading user memory failed.
    Fault,
    /// The row is a signal trampoline's (v3): the caller's registers are
    /// in the signal frame, which the row does not describe.
    SignalFrame,
}
