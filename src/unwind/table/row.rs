// SPDX-License-Identifier: GPL-2.0

//! The unwind rules of one PC, whatever format they came from (SFrame,
//! `.eh_frame`): the CFA, where the return address is and where the
//! caller's RBP is.  Pure `core`.

/// A register a rule reads.  DWARF numbers 6 (RBP) and 7 (RSP) are
/// folded into `Fp` and `Sp`, the two registers known in every frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    /// RSP.
    Sp,
    /// RBP.
    Fp,
    /// Another register, by DWARF number (0 RAX, 1 RDX, 2 RCX, 3 RBX,
    /// 4 RSI, 5 RDI, 8-15 R8-R15): known only in the topmost frame.
    Dwarf(u8),
}

impl Reg {
    /// The register of DWARF number `n`.
    pub const fn from_dwarf(n: u8) -> Reg {
        match n {
            6 => Reg::Fp,
            7 => Reg::Sp,
            n => Reg::Dwarf(n),
        }
    }
}

/// How to compute the CFA: `reg + offset`, loaded from if `deref`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfaRule {
    /// The base register.
    pub reg: Reg,
    /// Added to the register's value.
    pub offset: i32,
    /// Whether the CFA is the word at `reg + offset` (v3 flexible FDEs:
    /// a DRAP frame saves the CFA on the stack).
    pub deref: bool,
}

/// How to recover a saved register (RA or FP) of the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The word at `CFA + offset` (the default FDE's only rule).
    AtCfa(i32),
    /// `reg + offset`, loaded from if `deref` (v3 flexible FDEs).
    Reg {
        /// The base register.
        reg: Reg,
        /// Added to the register's value.
        offset: i32,
        /// Whether the value is the word at that address.
        deref: bool,
    },
}

/// The unwind rules for one PC: what a lookup returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// How to compute the CFA (the caller's SP after the return).  For
    /// the outermost frame it is `SP + 0`, unused.
    pub cfa: CfaRule,
    /// How to recover the return address; `None` means undefined: this
    /// is the outermost frame (an FRE with no data words).
    pub ra: Option<Rule>,
    /// How to recover the caller's FP; `None` means FP is unchanged
    /// (not saved yet, or not used).
    pub fp: Option<Rule>,
    /// The function is a signal trampoline (v3): the caller's registers
    /// are in a signal frame, which these rules do not describe.
    pub signal: bool,
}
