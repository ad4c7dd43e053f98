// SPDX-License-Identifier: GPL-2.0

//! Every FDE of `.eh_frame_hdr`'s sorted table, into the unwind-table
//! engine.  The table gives the functions in address order (the order
//! the [`Builder`] needs) without a pass over the whole `.eh_frame`.
//!
//! Per entry: the FDE must lie in the given bytes and be at most
//! [`MAX_FDE_LEN`] bytes long, its CIE be usable, its `pc_begin` equal
//! the table's initial location (a header that lies about its FDEs is
//! not believed), it must not overlap the function before it, and its
//! CFA program must run to its end without error (its rows go to the
//! engine as it runs, and are taken back if it fails part way, so that a
//! bad program leaves no partial rows behind).  Anything else skips that
//! FDE alone, counted in [`Stats`]; only a header that cannot be used at
//! all, an unsorted table or the engine's own limits stop the
//! compilation.
//!
//! Work: one unit per table entry, CIE parsed, CFA instruction run and
//! PLT block expanded.  Real sections cost under a unit per byte; a
//! crafted one (FDEs sharing bytes, a header listing one FDE many times)
//! is stopped by a budget of [`WORK_PER_BYTE`] units per input byte plus
//! [`WORK_BASE`]: once it is spent the remaining entries are skipped, and
//! a PLT range that would overspend it gets no row.  PLT blocks are also
//! capped per range ([`MAX_PLT_BLOCKS`]) and per compilation
//! ([`MAX_PLT_BLOCKS_TOTAL`]).  Nothing spent is ever given back, not
//! even by a program that fails and whose rows are taken back.  The last
//! entry that passes the budget check may overspend it by one CIE (1 +
//! [`super::cie::MAX_CIE_INSNS`] units) and one program (under
//! [`MAX_FDE_LEN`] instructions).  So for `n` input bytes (header plus
//! `.eh_frame`):
//!
//! - work <= 8 n + 1024 + 1 + 128 + 65,536 + n / 8 (the entries skipped
//!   once the budget is spent);
//! - builder calls <= 2 x work (an instruction gives at most one row, a
//!   PLT block two, an entry its last row and its end);
//! - PLT blocks <= min(work, 262,144).
//!
//! The caller's `keep_going` hook ([`Pace`]) is asked between entries
//! and PLT blocks, at least every `YIELD_EVERY` (4,096) + 65,665 units:
//! one CIE and one program are not split.

use super::super::table::{BuildError, Builder, CfaRule, Pace, Reg, Row, Rule, Stopped, Storage};
use super::cfa::{CfaState, Ctx, Machine, RegState, RunError, State};
use super::cie::{parse_cie, Cie};
use super::error::EhError;
use super::fde::{fde_cie, parse_body, MAX_FDE_LEN};
use super::hdr::Hdr;

/// The most 16-byte blocks one PLT expression range expands to (a PLT of
/// 64 Ki entries); a larger range gets no row.
pub const MAX_PLT_BLOCKS: u64 = 1 << 16;
/// The most PLT blocks of one compilation (a few PLT sections' worth).
pub const MAX_PLT_BLOCKS_TOTAL: u64 = 1 << 18;
/// The work budget per input byte (header plus `.eh_frame` bytes).
pub const WORK_PER_BYTE: u64 = 8;
/// The work budget every compilation has on top.
pub const WORK_BASE: u64 = 1024;

/// What a compilation did.  Every table entry is counted once: either
/// compiled or in exactly one of the skip counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Table entries visited.
    pub entries: u32,
    /// FDEs compiled.
    pub compiled: u32,
    /// Skipped: the FDE's address is outside the given `.eh_frame` bytes
    /// (cut short).
    pub outside: u32,
    /// Skipped: the FDE is malformed (length past the bytes or over
    /// [`MAX_FDE_LEN`], a bad field, an unsupported encoding, not an
    /// FDE).
    pub bad_fde: u32,
    /// Skipped: the CIE pointer leads outside the bytes or to something
    /// that is not a usable CIE, or the CIE's instructions are bad.
    pub bad_cie: u32,
    /// Skipped: the FDE's `pc_begin` differs from the table's location.
    pub lying: u32,
    /// Skipped: the FDE starts inside the previous compiled function.
    pub overlap: u32,
    /// Skipped: `pc_range` is 0.
    pub empty: u32,
    /// Skipped: the function would make the table span 4 GiB or more, or
    /// its end overflows.
    pub wide: u32,
    /// Skipped: the CFA program is malformed (unknown opcode, operand
    /// past the FDE, state stack over- or underflow, location going back).
    pub bad_program: u32,
    /// Skipped: the work budget was spent.
    pub budget: u32,
    /// PLT ranges given no row (too many blocks for the range, the
    /// compilation or the work budget).
    pub plt_refused: u32,
    /// PLT blocks expanded, also those of a program that failed later.
    pub plt_blocks: u64,
    /// Work units spent (entries, CIEs parsed, instructions run, PLT
    /// blocks expanded).
    pub work: u64,
}

impl Stats {
    /// The entries skipped, for whatever reason.
    #[allow(dead_code)] // For callers' statistics and the host tests.
    pub fn skipped(&self) -> u32 {
        [
            self.outside,
            self.bad_fde,
            self.bad_cie,
            self.lying,
            self.overlap,
            self.empty,
            self.wide,
            self.bad_program,
            self.budget,
        ]
        .iter()
        .fold(0u32, |a, &n| a.saturating_add(n))
    }
}

/// The CFA rule of `reg + off`, if the engine can express it.
pub(super) fn cfa_rule(reg: u16, off: i64) -> Option<CfaRule> {
    let reg = u8::try_from(reg).ok().filter(|&r| r <= 16)?;
    Some(CfaRule {
        reg: Reg::from_dwarf(reg),
        offset: i32::try_from(off).ok()?,
        deref: false,
    })
}

/// The engine's row for `st` with CFA rule `cfa`; `None` where the rules
/// cannot be expressed (they are refused, not approximated).
pub(super) fn row_of(st: &State, cfa: Option<CfaRule>, signal: bool) -> Option<Row> {
    let ra = match st.ra {
        RegState::AtCfa(o) => Some(Rule::AtCfa(o)),
        RegState::Undefined => None,
        _ => return None,
    };
    let fp = match st.fp {
        RegState::AtCfa(o) => Some(Rule::AtCfa(o)),
        RegState::Same | RegState::Undefined => None,
        RegState::Reg(r) => Some(Rule::Reg {
            reg: Reg::from_dwarf(u8::try_from(r).ok().filter(|&r| r <= 16)?),
            offset: 0,
            deref: false,
        }),
        RegState::Other => return None,
    };
    Some(Row {
        cfa: cfa?,
        ra,
        fp,
        signal,
    })
}

/// The compilation's state besides the builder.
struct Out<'b, 'p, S: Storage> {
    b: &'b mut Builder<S>,
    pace: Pace<'p>,
    stats: Stats,
    /// The PLT blocks the compilation may still expand.
    plt_left: u64,
    /// The work budget: `stats.work` may not pass it for PLT blocks.
    budget: u64,
    /// The first PC given to the builder: its base, if it was empty.
    base: Option<u64>,
}

impl<S: Storage> Out<'_, '_, S> {
    /// Gives the engine the rules `st` over `[lo, min(hi, end))`.
    fn range(&mut self, lo: u64, hi: u64, end: u64, st: &State, signal: bool) -> Result<(), Fail> {
        let hi = hi.min(end);
        if lo >= hi {
            return Ok(());
        }
        let (k, n) = match st.cfa {
            CfaState::Plt { k, n } => (k, n),
            CfaState::Reg { reg, off } => {
                return Ok(self.b.row(lo, row_of(st, cfa_rule(reg, off), signal))?)
            }
            CfaState::Other => return Ok(self.b.row(lo, None)?),
        };
        // CFA = rsp + k, + 8 from byte n of each 16-byte block on.
        let first = lo & !15;
        let blocks = hi.saturating_sub(first).div_ceil(16);
        let room = self.budget.saturating_sub(self.stats.work);
        if blocks > MAX_PLT_BLOCKS || blocks > self.plt_left || blocks > room {
            self.stats.plt_refused = self.stats.plt_refused.saturating_add(1);
            return Ok(self.b.row(lo, None)?);
        }
        self.plt_left = self.plt_left.saturating_sub(blocks);
        self.stats.plt_blocks = self.stats.plt_blocks.saturating_add(blocks);
        let spent = self.stats.work;
        self.stats.work = spent.saturating_add(blocks);
        let sp = |off: i32| cfa_rule(7, off as i64);
        let rows = [
            (0u64, row_of(st, sp(k), signal)),
            (n as u64, row_of(st, k.checked_add(8).and_then(sp), signal)),
        ];
        for i in 0..blocks {
            self.pace.check(spent.saturating_add(i))?;
            let Some(start) = i.checked_mul(16).and_then(|d| first.checked_add(d)) else {
                break;
            };
            for &(at, row) in &rows {
                let Some(at) = start.checked_add(at) else {
                    break;
                };
                if at >= hi {
                    break;
                }
                self.b.row(at.max(lo), row)?;
            }
        }
        Ok(())
    }
}

/// Why one entry was not compiled.
enum Fail {
    /// The engine failed: fatal.
    Build(BuildError),
    /// The caller's hook said stop: fatal.
    Stopped,
    /// The entry is skipped.
    Skip(Skip),
}

impl From<BuildError> for Fail {
    fn from(e: BuildError) -> Self {
        Fail::Build(e)
    }
}

impl From<Stopped> for Fail {
    fn from(_: Stopped) -> Self {
        Fail::Stopped
    }
}

impl From<Skip> for Fail {
    fn from(s: Skip) -> Self {
        Fail::Skip(s)
    }
}

/// Why one entry was skipped.
pub(super) enum Skip {
    Outside,
    Fde,
    Cie,
    Lying,
    Empty,
    Wide,
    Program,
}

/// Compiles every FDE listed in the header's sorted table into `b`.
///
/// `hdr` is `.eh_frame_hdr` (at link-time address `hdr_addr`); `eh` holds
/// bytes starting at `.eh_frame`'s first byte (at `eh_addr`); it may run
/// past the section's end, or be cut short (then FDEs past it are
/// skipped).  Returns the counts; a bad FDE or CIE is skipped, never an
/// error.  `b` should be empty: a function that would make the table
/// span 4 GiB from the first PC compiled here is skipped, while one
/// beyond an earlier caller's base fails in the builder.  `keep_going`
/// is asked now and then ([`Pace`]): false stops the compilation
/// ([`EhError::Stopped`]).
pub fn compile<S: Storage>(
    hdr: &[u8],
    hdr_addr: u64,
    eh: &[u8],
    eh_addr: u64,
    b: &mut Builder<S>,
    keep_going: &mut dyn FnMut() -> bool,
) -> Result<Stats, EhError> {
    let h = Hdr::parse(hdr, hdr_addr)?;
    let budget = (eh.len() as u64)
        .saturating_add(hdr.len() as u64)
        .saturating_mul(WORK_PER_BYTE)
        .saturating_add(WORK_BASE);
    let mut out = Out {
        b,
        pace: Pace::new(keep_going),
        stats: Stats::default(),
        plt_left: MAX_PLT_BLOCKS_TOTAL,
        budget,
        base: None,
    };
    let mut prev_loc: Option<u64> = None;
    let mut prev_end: Option<u64> = None;
    // The last CIE used and the machine after its instructions.
    let mut cache: Option<(Cie<'_>, Machine)> = None;
    for i in 0..h.info.fde_count {
        let (loc, fde_addr) = h.entry(i).ok_or(EhError::Truncated)?;
        if prev_loc.is_some_and(|p| loc < p) {
            return Err(EhError::Unsorted);
        }
        prev_loc = Some(loc);
        out.stats.entries = out.stats.entries.saturating_add(1);
        out.stats.work = out.stats.work.saturating_add(1);
        out.pace.check(out.stats.work)?;
        let st = &mut out.stats;
        if prev_end.is_some_and(|e| loc < e) {
            st.overlap = st.overlap.saturating_add(1);
            continue;
        }
        if st.work > budget {
            st.budget = st.budget.saturating_add(1);
            continue;
        }
        match one(&mut out, eh, eh_addr, loc, fde_addr, &mut cache) {
            Ok(end) => {
                prev_end = Some(end);
                out.stats.compiled = out.stats.compiled.saturating_add(1);
            }
            Err(Fail::Build(e)) => return Err(e.into()),
            Err(Fail::Stopped) => return Err(EhError::Stopped),
            Err(Fail::Skip(skip)) => {
                let st = &mut out.stats;
                let c = match skip {
                    Skip::Outside => &mut st.outside,
                    Skip::Fde => &mut st.bad_fde,
                    Skip::Cie => &mut st.bad_cie,
                    Skip::Lying => &mut st.lying,
                    Skip::Empty => &mut st.empty,
                    Skip::Wide => &mut st.wide,
                    Skip::Program => &mut st.bad_program,
                };
                *c = c.saturating_add(1);
            }
        }
    }
    Ok(out.stats)
}

/// The CIE at `off` and the machine after its instructions.
pub(super) fn cie_machine<'a>(
    eh: &'a [u8],
    eh_addr: u64,
    off: usize,
    work: &mut u64,
) -> Result<(Cie<'a>, Machine), Skip> {
    *work = work.saturating_add(1);
    let cie = parse_cie(eh, eh_addr, off).map_err(|_| Skip::Cie)?;
    let ctx = Ctx::of(&cie, true);
    let mut m = Machine::new();
    m.run::<(), _>(cie.insns, &ctx, work, |_, _, _| Ok(()))
        .map_err(|_| Skip::Cie)?;
    m.initial = m.state;
    Ok((cie, m))
}

/// Compiles the FDE at `fde_addr`, listed at `loc`; returns its end.
fn one<'a, S: Storage>(
    out: &mut Out<'_, '_, S>,
    eh: &'a [u8],
    eh_addr: u64,
    loc: u64,
    fde_addr: u64,
    cache: &mut Option<(Cie<'a>, Machine)>,
) -> Result<u64, Fail> {
    let off = usize::try_from(fde_addr.wrapping_sub(eh_addr))
        .ok()
        .filter(|&o| o < eh.len())
        .ok_or(Skip::Outside)?;
    let (cie_at, body) = fde_cie(eh, eh_addr, off).map_err(|e| match e {
        super::fde::FdeError::Fde => Skip::Fde,
        super::fde::FdeError::Cie => Skip::Cie,
    })?;
    // Its program runs without a pause (the caller's hook is asked
    // between entries): its length is bounded, as by function.
    let len = body
        .addr()
        .wrapping_sub(fde_addr)
        .saturating_add(body.remaining() as u64);
    if len > MAX_FDE_LEN as u64 {
        return Err(Skip::Fde.into());
    }
    let (cie, base) = match cache {
        Some((c, m)) if c.off == cie_at => (*c, *m),
        _ => {
            let (c, m) = cie_machine(eh, eh_addr, cie_at, &mut out.stats.work)?;
            *cache = Some((c, m));
            (c, m)
        }
    };
    let fde = parse_body(body, cie).map_err(|_| Skip::Fde)?;
    if fde.pc_begin != loc {
        return Err(Skip::Lying.into());
    }
    if fde.pc_range == 0 {
        return Err(Skip::Empty.into());
    }
    let end = fde.pc_begin.checked_add(fde.pc_range).ok_or(Skip::Wide)?;
    // The engine's offsets are `u32` from its first PC: a function that
    // does not fit is skipped here rather than failing the whole table.
    let base_pc = out.base.unwrap_or(fde.pc_begin);
    if end.checked_sub(base_pc).is_none_or(|w| w > u32::MAX as u64) {
        return Err(Skip::Wide.into());
    }
    let ctx = Ctx::of(&cie, false);
    // One run gives the rows; a program that fails part way takes back
    // the rows it gave, but not the work and PLT blocks it spent: a
    // header that lists it many times spends them once.
    let mark = out.b.mark();
    let first_pc = out.base;
    out.base.get_or_insert(fde.pc_begin);
    let mut m = base;
    m.loc = fde.pc_begin;
    let signal = cie.signal;
    // Counted apart: `range` charges PLT blocks to the work meanwhile.
    let mut insns = 0u64;
    let r = m.run(fde.insns, &ctx, &mut insns, |lo, hi, st| {
        out.range(lo, hi, end, st, signal)
    });
    out.stats.work = out.stats.work.saturating_add(insns);
    match r {
        Ok(()) => {}
        Err(RunError::Sink(e)) => return Err(e),
        Err(RunError::Prog(_)) => {
            out.b.rollback(mark);
            out.base = first_pc;
            return Err(Skip::Program.into());
        }
    }
    let last = m.state;
    out.range(m.loc, end, end, &last, signal)?;
    out.b.end(end)?;
    Ok(end)
}
