// SPDX-License-Identifier: GPL-2.0

//! The CFA program interpreter: runs a CIE's initial instructions, then
//! an FDE's, and reports each address range with the rules in force.
//!
//! Only the CFA, the return address (DWARF 16) and RBP (6) are tracked;
//! every other register's instructions are decoded (so that the program
//! stays in step) and ignored.  Expression blocks are skipped by their
//! length, except the one CFA expression every PLT uses, recognised as
//! [`CfaState::Plt`].  An unknown opcode, an operand past the program's
//! end, a location going backwards or overflowing, a `remember_state`
//! deeper than [`MAX_STACK`] or a `restore_state` with nothing remembered
//! is an error: the caller skips the whole FDE (it runs the program once
//! to check it before giving any row to the engine).  No recursion; the
//! work is one step per instruction, counted.

use super::cie::Cie;
use super::reader::{ReadError, Reader};

/// The deepest `remember_state` nesting accepted (GCC nests one level
/// per shrink-wrapped region; real programs use one or two).  Small,
/// since the machine is on the kernel stack, under a deferred walk.
pub const MAX_STACK: usize = 4;

/// DWARF register numbers tracked.
const RA: u64 = 16;
const FP: u64 = 6;

/// The CFA rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CfaState {
    /// `reg + off` (a register number above `u16::MAX` is saturated:
    /// it is unusable either way).
    Reg {
        /// DWARF register number.
        reg: u16,
        /// Added to it.
        off: i64,
    },
    /// The PLT expression: `rsp + k`, plus 8 where `(pc & 15) >= n`.
    Plt {
        /// The base offset (the `breg7` operand).
        k: i32,
        /// The `litN` of the comparison (1 to 15).
        n: u8,
    },
    /// Undefined, an expression, or a value out of range: no row.
    Other,
}

/// The rule of a tracked register (RA or RBP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegState {
    /// Unspecified or `same_value`: the caller's value is this frame's.
    Same,
    /// `undefined`: for RA, the outermost frame.
    Undefined,
    /// Saved at `CFA + offset` (`offset` family, already factored).
    AtCfa(i32),
    /// In another register (`register`).
    Reg(u16),
    /// `val_offset`, an expression, or an offset out of range: no row.
    Other,
}

/// The rules in force at one location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct State {
    /// The CFA.
    pub cfa: CfaState,
    /// The return address (DWARF 16).
    pub ra: RegState,
    /// RBP (DWARF 6).
    pub fp: RegState,
}

/// The state before a CIE's instructions: nothing defined.
pub const INITIAL: State = State {
    cfa: CfaState::Other,
    ra: RegState::Same,
    fp: RegState::Same,
};

/// Why a program was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgError {
    /// An operand past the program's end, or a malformed LEB128.
    Read(ReadError),
    /// An opcode this interpreter does not know.
    Opcode(u8),
    /// `remember_state` deeper than [`MAX_STACK`].
    StackFull,
    /// `restore_state` with nothing remembered.
    StackEmpty,
    /// A location that goes backwards or overflows, or any location
    /// change in a CIE.
    Loc,
}

impl From<ReadError> for ProgError {
    fn from(e: ReadError) -> Self {
        ProgError::Read(e)
    }
}

/// A program's failure: its own, or the range consumer's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunError<E> {
    /// The program is malformed.
    Prog(ProgError),
    /// The consumer of ranges failed.
    Sink(E),
}

impl<E> From<ReadError> for RunError<E> {
    fn from(e: ReadError) -> Self {
        RunError::Prog(ProgError::Read(e))
    }
}

impl<E> From<ProgError> for RunError<E> {
    fn from(e: ProgError) -> Self {
        RunError::Prog(e)
    }
}

/// What a program needs from its CIE.
#[derive(Clone, Copy, Debug)]
pub struct Ctx {
    /// The factor of location advances.
    pub code_align: u64,
    /// The factor of register offsets.
    pub data_align: i64,
    /// `set_loc`'s operand encoding (the FDE pointer encoding).
    pub fde_enc: u8,
    /// Running a CIE: no location may change.
    pub in_cie: bool,
}

impl Ctx {
    /// The context of `cie`'s own instructions (`in_cie`) or of one of
    /// its FDEs' programs.
    pub fn of(cie: &Cie<'_>, in_cie: bool) -> Self {
        Ctx {
            code_align: cie.code_align,
            data_align: cie.data_align,
            fde_enc: cie.fde_enc,
            in_cie,
        }
    }
}

/// The interpreter's state: the rules, the CIE's rules (for `restore`),
/// the `remember_state` stack and the location.
#[derive(Clone, Copy, Debug)]
pub struct Machine {
    /// The rules in force.
    pub state: State,
    /// The rules after the CIE's instructions.
    pub initial: State,
    stack: [State; MAX_STACK],
    depth: usize,
    /// The current location (link-time address).
    pub loc: u64,
}

impl Default for Machine {
    fn default() -> Self {
        Self::new()
    }
}

fn to_u16(r: u64) -> u16 {
    u16::try_from(r).unwrap_or(u16::MAX)
}

/// `n * data_align` as a saved register's offset.
fn at_cfa(n: Option<i64>) -> RegState {
    match n.and_then(|n| i32::try_from(n).ok()) {
        Some(o) => RegState::AtCfa(o),
        None => RegState::Other,
    }
}

/// The PLT CFA expression: `breg7 K; breg16 0; lit15; and; litN; ge;
/// lit3; shl; plus`, N 11 (or 10 in IBT PLTs).  `None` for any other.
fn plt_expr(mut e: Reader<'_>) -> Option<CfaState> {
    if e.u8().ok()? != 0x77 {
        return None;
    }
    let k = i32::try_from(e.sleb().ok()?).ok()?;
    k.checked_add(8)?;
    let mut tail = [0u8; 9];
    tail.copy_from_slice(e.bytes(9).ok()?);
    if !e.is_empty() {
        return None;
    }
    let n = match tail {
        [0x80, 0x00, 0x3f, 0x1a, lit, 0x2a, 0x33, 0x24, 0x22] => lit.wrapping_sub(0x30),
        _ => return None,
    };
    // 11 in ld's lazy PLTs, 9 in its IBT PLTs (binutils 2.44), 10 in
    // others; any N of a 16-byte block means the same.
    if !(1..=15).contains(&n) {
        return None;
    }
    Some(CfaState::Plt { k, n })
}

impl Machine {
    /// A machine with nothing defined, at location 0.
    pub const fn new() -> Self {
        Machine {
            state: INITIAL,
            initial: INITIAL,
            stack: [INITIAL; MAX_STACK],
            depth: 0,
            loc: 0,
        }
    }

    fn set(&mut self, reg: u64, rule: RegState) {
        match reg {
            RA => self.state.ra = rule,
            FP => self.state.fp = rule,
            _ => {}
        }
    }

    fn restore(&mut self, reg: u64) {
        match reg {
            RA => self.state.ra = self.initial.ra,
            FP => self.state.fp = self.initial.fp,
            _ => {}
        }
    }

    fn set_cfa_off(&mut self, off: Option<i64>) {
        self.state.cfa = match (self.state.cfa, off) {
            (CfaState::Reg { reg, .. }, Some(off)) => CfaState::Reg { reg, off },
            _ => CfaState::Other,
        };
    }

    /// Moves to `to`: `range(from, to, rules)` if the location grows.
    fn advance<E, F>(
        &mut self,
        ctx: &Ctx,
        to: Option<u64>,
        range: &mut F,
    ) -> Result<(), RunError<E>>
    where
        F: FnMut(u64, u64, &State) -> Result<(), E>,
    {
        let to = to.ok_or(ProgError::Loc)?;
        if ctx.in_cie || to < self.loc {
            return Err(ProgError::Loc.into());
        }
        if to > self.loc {
            range(self.loc, to, &self.state).map_err(RunError::Sink)?;
            self.loc = to;
        }
        Ok(())
    }

    /// Runs `prog`.  Each time the location grows, `range(lo, hi, rules)`
    /// receives the rules in force over `[lo, hi)`; the caller handles
    /// the last range (from [`Machine::loc`] to the function's end).
    /// `work` counts the instructions.
    pub fn run<E, F>(
        &mut self,
        mut prog: Reader<'_>,
        ctx: &Ctx,
        work: &mut u64,
        mut range: F,
    ) -> Result<(), RunError<E>>
    where
        F: FnMut(u64, u64, &State) -> Result<(), E>,
    {
        let da = ctx.data_align;
        let factored = |n: u64| i64::try_from(n).ok().and_then(|n| n.checked_mul(da));
        while !prog.is_empty() {
            *work = work.saturating_add(1);
            let op = prog.u8()?;
            let low = (op & 0x3f) as u64;
            match op >> 6 {
                1 => {
                    let to = low
                        .checked_mul(ctx.code_align)
                        .and_then(|d| self.loc.checked_add(d));
                    self.advance(ctx, to, &mut range)?;
                    continue;
                }
                2 => {
                    let n = prog.uleb()?;
                    self.set(low, at_cfa(factored(n)));
                    continue;
                }
                3 => {
                    self.restore(low);
                    continue;
                }
                _ => {}
            }
            match op {
                0x00 => {}
                0x01 => {
                    let to = prog.pointer(ctx.fde_enc, None)?;
                    self.advance(ctx, Some(to), &mut range)?;
                }
                0x02..=0x04 => {
                    let d = match op {
                        0x02 => prog.u8()? as u64,
                        0x03 => prog.u16()? as u64,
                        _ => prog.u32()? as u64,
                    };
                    let to = d
                        .checked_mul(ctx.code_align)
                        .and_then(|d| self.loc.checked_add(d));
                    self.advance(ctx, to, &mut range)?;
                }
                0x05 => {
                    let r = prog.uleb()?;
                    let n = prog.uleb()?;
                    self.set(r, at_cfa(factored(n)));
                }
                0x06 => {
                    let r = prog.uleb()?;
                    self.restore(r);
                }
                0x07 => {
                    let r = prog.uleb()?;
                    self.set(r, RegState::Undefined);
                }
                0x08 => {
                    let r = prog.uleb()?;
                    self.set(r, RegState::Same);
                }
                0x09 => {
                    let r = prog.uleb()?;
                    let r2 = prog.uleb()?;
                    self.set(r, RegState::Reg(to_u16(r2)));
                }
                0x0a => {
                    let slot = self.stack.get_mut(self.depth).ok_or(ProgError::StackFull)?;
                    *slot = self.state;
                    self.depth = self.depth.saturating_add(1);
                }
                0x0b => {
                    let d = self.depth.checked_sub(1).ok_or(ProgError::StackEmpty)?;
                    self.state = *self.stack.get(d).ok_or(ProgError::StackEmpty)?;
                    self.depth = d;
                }
                0x0c => {
                    let r = prog.uleb()?;
                    let off = prog.uleb()?;
                    self.state.cfa = match i64::try_from(off) {
                        Ok(off) => CfaState::Reg {
                            reg: to_u16(r),
                            off,
                        },
                        Err(_) => CfaState::Other,
                    };
                }
                0x0d => {
                    let r = prog.uleb()?;
                    self.state.cfa = match self.state.cfa {
                        CfaState::Reg { off, .. } => CfaState::Reg {
                            reg: to_u16(r),
                            off,
                        },
                        _ => CfaState::Other,
                    };
                }
                0x0e => {
                    let off = prog.uleb()?;
                    self.set_cfa_off(i64::try_from(off).ok());
                }
                0x0f => {
                    let len = usize::try_from(prog.uleb()?).map_err(|_| ReadError::Truncated)?;
                    let e = prog.sub(len)?;
                    self.state.cfa = plt_expr(e).unwrap_or(CfaState::Other);
                }
                0x10 | 0x16 => {
                    let r = prog.uleb()?;
                    let len = usize::try_from(prog.uleb()?).map_err(|_| ReadError::Truncated)?;
                    prog.skip(len)?;
                    self.set(r, RegState::Other);
                }
                0x11 => {
                    let r = prog.uleb()?;
                    let n = prog.sleb()?;
                    self.set(r, at_cfa(n.checked_mul(da)));
                }
                0x12 => {
                    let r = prog.uleb()?;
                    let n = prog.sleb()?;
                    self.state.cfa = match n.checked_mul(da) {
                        Some(off) => CfaState::Reg {
                            reg: to_u16(r),
                            off,
                        },
                        None => CfaState::Other,
                    };
                }
                0x13 => {
                    let n = prog.sleb()?;
                    self.set_cfa_off(n.checked_mul(da));
                }
                0x14 => {
                    let r = prog.uleb()?;
                    prog.uleb()?;
                    self.set(r, RegState::Other);
                }
                0x15 => {
                    let r = prog.uleb()?;
                    prog.sleb()?;
                    self.set(r, RegState::Other);
                }
                0x2e => {
                    prog.uleb()?;
                }
                0x2f => {
                    let r = prog.uleb()?;
                    let n = prog.uleb()?;
                    self.set(r, at_cfa(factored(n).and_then(i64::checked_neg)));
                }
                _ => return Err(ProgError::Opcode(op).into()),
            }
        }
        Ok(())
    }
}
