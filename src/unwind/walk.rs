// SPDX-License-Identifier: GPL-2.0

//! The walk of the current task's user stack: an unwind-table step where
//! the IP's mapping has a table (from SFrame, else `.eh_frame`) with a
//! row for it, frame pointers otherwise (upstream's order), so a stack
//! that mixes both kinds of code walks as far as the data allows.
//!
//! A frame-pointer frame is `[fp] = caller's fp` and `[fp + ws] = return
//! address`, with `ws` the word size (8 native, 4 compat).  A table
//! step computes the caller's registers from the row (`table::step`);
//! the topmost frame uses the row of its exact IP (a sample in a prologue
//! or epilogue), the others that of their return address minus one (the
//! call, which may be a function's last instruction).  A table step
//! that fails falls back to frame pointers; an outermost row (RA
//! undefined) ends the walk.  A topmost IP that its file's table does not
//! cover is taken to be at a function's entry if the word at SP is a
//! return address (`entry_step`), and walks with frame pointers if not.
//! Tables are 64-bit only, and only where faults are allowed
//! (`table_find::Memo`).  The C API has no type for
//! `.eh_frame` frames: they are reported as `UNWIND_USER_TYPE_SFRAME`,
//! the table-driven type.  The walk only ever moves up
//! the stack, reads user memory through `copy_from_user()` (which refuses
//! non-user addresses) and stops at the first frame that does not look
//! right, keeping the entries it has.

use kernel::prelude::*;
use kernel::uaccess::UserSlice;

use super::call_site;
use super::compat;
use super::ffi;
use super::regs::{self, UserRegs};
use super::table::{self, Common, Regs, Row, StepError};
use super::table_cache::Kind;
use super::table_find::{Found, MapSet, Memo, Quick};
use crate::sys::stats::{self, Stat};

/// Matches `enum unwind_user_type` in `include/linux/unwind_user_types.h`.
pub(crate) const TYPE_NONE: u32 = 0;
pub(crate) const TYPE_FP: u32 = 1 << 0;
pub(crate) const TYPE_COMPAT_FP: u32 = 1 << 1;
pub(crate) const TYPE_SFRAME: u32 = 1 << 2;

/// Matches `struct unwind_stacktrace` (`api/exports.c` checks the C side).
#[repr(C)]
pub(crate) struct UnwindStacktrace {
    pub(crate) nr: u32,
    pub(crate) entries: *mut usize,
}

const _: () = {
    assert!(core::mem::size_of::<UnwindStacktrace>() == 16);
    assert!(core::mem::offset_of!(UnwindStacktrace, entries) == 8);
};

/// Matches `struct unwind_user_state` (`api/exports.c` checks the C side).
#[repr(C)]
pub(crate) struct UnwindUserState {
    pub(crate) ip: usize,
    pub(crate) sp: usize,
    pub(crate) fp: usize,
    pub(crate) cs_base: usize,
    pub(crate) ss_base: usize,
    pub(crate) current_type: u32,
    pub(crate) ws: u32,
    pub(crate) done: bool,
    pub(crate) topmost: bool,
}

const _: () = {
    assert!(core::mem::size_of::<UnwindUserState>() == 56);
    assert!(core::mem::offset_of!(UnwindUserState, ss_base) == 32);
    assert!(core::mem::offset_of!(UnwindUserState, current_type) == 40);
    assert!(core::mem::offset_of!(UnwindUserState, ws) == 44);
    assert!(core::mem::offset_of!(UnwindUserState, done) == 48);
    assert!(core::mem::offset_of!(UnwindUserState, topmost) == 49);
};

impl UnwindUserState {
    /// A state that yields no frame.
    pub(crate) const fn empty() -> Self {
        Self {
            ip: 0,
            sp: 0,
            fp: 0,
            cs_base: 0,
            ss_base: 0,
            current_type: TYPE_NONE,
            ws: 0,
            done: true,
            topmost: false,
        }
    }

    /// Starts at the user registers saved at kernel entry; the first frame
    /// is the user IP.  Fails for kernel threads and non-user entries.
    pub(crate) fn start(&mut self) -> Result {
        let regs = UserRegs::current().ok_or(EINVAL)?;
        self.start_from(&regs);
        Ok(())
    }

    /// Starts at `regs`, current's.
    fn start_from(&mut self, regs: &UserRegs) {
        *self = Self::empty();
        if regs.compat {
            let (cs_base, ss_base) = compat::segment_bases(regs);
            self.current_type = TYPE_COMPAT_FP;
            self.ws = 4;
            self.cs_base = cs_base;
            self.ss_base = ss_base;
            self.ip = compat::linear(regs.ip, cs_base);
            self.sp = compat::linear(regs.sp, ss_base);
            self.fp = compat::linear(regs.bp, ss_base);
        } else {
            self.current_type = TYPE_FP;
            self.ws = 8;
            self.ip = regs.ip;
            self.sp = regs.sp;
            self.fp = regs.bp;
        }
        self.done = false;
        self.topmost = true;
    }

    /// Steps to the caller's frame, with the mappings `memo` has seen (a
    /// walk passes the same memo to every step).  On failure the walk is
    /// over.
    pub(crate) fn next(&mut self, memo: &mut Memo<'_>) -> Result {
        // A state `start()` did not set up (a caller's bug) gets an error,
        // never a step with a word size of 0.
        let set_up = match self.current_type {
            TYPE_FP | TYPE_SFRAME => self.ws == 8,
            TYPE_COMPAT_FP => self.ws == 4,
            _ => false,
        };
        if self.done || !set_up {
            self.done = true;
            return Err(EINVAL);
        }
        let ret = self.step(memo);
        if ret.is_err() {
            self.done = true;
        }
        ret
    }

    fn step(&mut self, memo: &mut Memo<'_>) -> Result {
        let topmost = core::mem::replace(&mut self.topmost, false);
        if self.current_type == TYPE_COMPAT_FP {
            return self.step_fp();
        }
        let pc = if topmost {
            self.ip
        } else {
            self.ip.wrapping_sub(1)
        };
        // A remembered row that needs no table (the topmost frame's only
        // where the rules do not change at its IP: see `topmost_row()`).
        match memo.quick(pc, topmost) {
            Some((Quick::End, starts)) if !(topmost && starts) => return Err(EINVAL),
            Some((Quick::Step(c, kind), starts)) if !(topmost && starts) && self.common_step(c) => {
                self.current_type = TYPE_SFRAME;
                stats::inc(match kind {
                    Kind::SFrame => Stat::SframeFrames,
                    Kind::EhFrame => Stat::EhframeFrames,
                });
                return Ok(());
            }
            _ => {}
        }
        let found = if topmost {
            memo.topmost_row(self.ip, || after_syscall(self.ip))
        } else {
            memo.row(pc)
        };
        if let Some(found) = found {
            match self.found_step(found, topmost) {
                Ok(true) => {
                    self.current_type = TYPE_SFRAME;
                    stats::inc(match found.kind() {
                        Kind::SFrame => Stat::SframeFrames,
                        Kind::EhFrame => Stat::EhframeFrames,
                    });
                    return Ok(());
                }
                // The outermost frame: a clean end.
                Ok(false) => return Err(EINVAL),
                // Bad data or an unreadable slot: frame pointers may know.
                Err(_) => {}
            }
        } else if topmost && self.entry_step(memo) {
            self.current_type = TYPE_FP;
            stats::inc(Stat::EntryFrames);
            return Ok(());
        }
        self.current_type = TYPE_FP;
        self.step_fp()
    }

    /// The step a found row gives: in one read of two words if the row
    /// has the common form and its slots are present, else by the
    /// general rules ([`Self::table_step`]), which also decide when the
    /// quick step cannot.
    #[inline]
    fn found_step(&mut self, found: Found, topmost: bool) -> Result<bool, StepError> {
        match found {
            Found::Common(c, _) if self.common_step(c) => Ok(true),
            Found::Common(c, _) => self.table_step(&c.row(), topmost),
            Found::Row(row, _) => self.table_step(&row, topmost),
        }
    }

    /// The topmost frame in a file with unwind tables but no row for its
    /// IP: code without CFI, such as crti's `.init`, where Debian's
    /// programs are sampled at the first instruction.  At a function's
    /// entry, and in a leaf that leaves the stack alone, the return
    /// address is the word at SP: it is taken if a call instruction ends
    /// there and a row covers that call (the caller has a table), and the
    /// caller's SP is 8 bytes up, its RBP this frame's.  Frame pointers
    /// could not walk it (RBP is not one here).
    fn entry_step(&mut self, memo: &mut Memo<'_>) -> bool {
        if !memo.has_tables(self.ip) {
            return false;
        }
        let (Some(ra), Some(sp)) = (read_word(self.sp as u64), self.sp.checked_add(8)) else {
            return false;
        };
        let ra = ra as usize;
        let Some(before) = ra.checked_sub(call_site::BEFORE) else {
            return false;
        };
        let called =
            read_word(before as u64).is_some_and(|b| call_site::ends_in_call(b.to_le_bytes()));
        if !called || memo.row(ra - 1).is_none() {
            return false;
        }
        self.ip = ra;
        self.sp = sp;
        true
    }

    /// The step `row` gives from this frame (the topmost with its saved
    /// user registers too), the state moved to the caller's frame: true,
    /// or false at the outermost frame (nothing changed, as on an error).
    fn table_step(&mut self, row: &Row, topmost: bool) -> Result<bool, StepError> {
        let now = Regs {
            pc: self.ip as u64,
            sp: self.sp as u64,
            fp: self.fp as u64,
        };
        let caller = if topmost {
            table::step_with(row, &now, regs::dwarf_reg, read_word)?
        } else {
            table::step(row, &now, read_word)?
        };
        let Some(r) = caller else {
            return Ok(false);
        };
        self.ip = r.pc as usize;
        self.sp = r.sp as usize;
        self.fp = r.fp as usize;
        Ok(true)
    }

    fn step_fp(&mut self) -> Result {
        let ws = self.ws as usize;
        // A frame pointer below the stack pointer (0 included) ends the chain.
        if self.fp < self.sp {
            return Err(EINVAL);
        }
        let cfa = self.fp.checked_add(2 * ws).ok_or(EINVAL)?;
        // The stack must strictly grow towards the caller: no loops.
        if cfa <= self.sp {
            return Err(EINVAL);
        }
        // Both slots must be word aligned.
        if self.fp & (ws - 1) != 0 {
            return Err(EINVAL);
        }
        let [fp, ra] = read_frame(self.fp, self.current_type == TYPE_COMPAT_FP)?;
        self.sp = cfa;
        if self.current_type == TYPE_COMPAT_FP {
            self.ip = compat::linear(ra, self.cs_base);
            self.fp = compat::linear(fp, self.ss_base);
        } else {
            self.ip = ra;
            self.fp = fp;
        }
        Ok(())
    }
}

/// Reads the two words of the frame at user address `fp` (each `ws` bytes
/// wide); fails for non-user or unmapped addresses.  May fault: task
/// context only.
///
/// Stack pages are nearly always present, so a non-faulting read is tried
/// first: it skips `might_fault()`, whose lockdep annotation costs more
/// than the read on debug kernels.  Only if it fails is the page faulted in.
fn read_frame(fp: usize, compat: bool) -> Result<[usize; 2]> {
    let mut w = [0usize; 2];
    // SAFETY: `w` has room for two words; the helper checks that the range
    // is user memory and never faults.
    if unsafe { ffi::unwind_rs_read_words_nofault(fp, w.as_mut_ptr(), compat) } == 0 {
        return Ok(w);
    }
    if compat {
        let w = read_user::<[u32; 2]>(fp)?;
        Ok([w[0] as usize, w[1] as usize])
    } else {
        read_user::<[usize; 2]>(fp)
    }
}

/// Whether the two bytes before user address `ip` are `syscall` (0f 05):
/// the topmost frame of a system call.  Read without faulting first, as
/// `read_frame()`; an unreadable address says no.
fn after_syscall(ip: usize) -> bool {
    let Some(at) = ip.checked_sub(8) else {
        return false;
    };
    // The aligned-down word that holds both bytes, or the one before.
    let word = read_word(at as u64);
    word.is_some_and(|w| (w >> 48) as u16 == 0x050f)
}

/// Reads the 8-byte word at user address `addr` for a table rule:
/// without faulting first, as `read_frame()`.
fn read_word(addr: u64) -> Option<u64> {
    let addr = usize::try_from(addr).ok()?;
    let mut w = 0usize;
    // SAFETY: `w` is one writable word; the helper checks that `addr` is
    // user memory and never faults.
    if unsafe { ffi::unwind_rs_read_word_nofault(addr, &mut w) } == 0 {
        return Some(w as u64);
    }
    read_user::<u64>(addr).ok()
}

/// Reads a `T` from user address `addr`, faulting the page in if needed.
fn read_user<T: kernel::types::FromBytes>(addr: usize) -> Result<T> {
    UserSlice::new(addr, core::mem::size_of::<T>())
        .reader()
        .read::<T>()
}

/// Walks current's user stack into `entries`, at most `entries.len()`
/// frames, with the mappings `saved` kept from current's earlier walks
/// (`None`: a one-off walk).  Returns the number of entries written.
pub(crate) fn unwind(entries: &mut [usize], saved: Option<&mut MapSet>) -> usize {
    let mut regs = UserRegs::EMPTY;
    if !regs.read() {
        return 0;
    }
    unwind_from(&regs, entries, saved)
}

/// As `unwind()`, from `regs`: current's, read in this context.
pub(crate) fn unwind_from(
    regs: &UserRegs,
    entries: &mut [usize],
    saved: Option<&mut MapSet>,
) -> usize {
    if entries.is_empty() {
        return 0;
    }
    let mut state = UnwindUserState::empty();
    state.start_from(regs);
    match saved {
        Some(set) => walk(&mut state, entries, &mut Memo::for_walk(set, regs)),
        // Built only here: it is a few hundred bytes to clear.
        None => walk(
            &mut state,
            entries,
            &mut Memo::for_walk(&mut MapSet::new(), regs),
        ),
    }
}

/// Fills `entries` from a started `state`: runs of frame-pointer frames in
/// one user access section each (`FpRun`), other frames one `next()` at a
/// time.
fn walk(state: &mut UnwindUserState, entries: &mut [usize], memo: &mut Memo<'_>) -> usize {
    entries[0] = state.ip;
    let mut nr = 1;
    while nr < entries.len() && !state.done {
        if state.current_type != TYPE_COMPAT_FP {
            let pc = if state.topmost {
                state.ip
            } else {
                state.ip.wrapping_sub(1)
            };
            if let Some((lo, hi)) = memo.fp_range(pc) {
                match state.fp_run(entries, &mut nr, lo, hi) {
                    FpRun::Stopped => continue,
                    FpRun::End => {
                        state.done = true;
                        break;
                    }
                    // `next()` below faults the page in.
                    FpRun::Fault => {}
                }
            } else if state.table_run(entries, &mut nr, memo) {
                continue;
            }
        }
        // An error sets `done`, which ends the loop.
        if state.next(memo).is_err() {
            break;
        }
        entries[nr] = state.ip;
        nr += 1;
    }
    nr
}

/// How a run of frame-pointer steps ended.
enum FpRun {
    /// The IP left the range, or `entries` is full.
    Stopped,
    /// A frame that does not look right: the walk is over.
    End,
    /// A frame's page is not present: the state is at that frame.
    Fault,
}

impl UnwindUserState {
    /// Table steps from a 64-bit frame, for as long as each frame has a
    /// row: the frames whose rows the row memo holds in the common form
    /// ([`Common`]) in C, in one user access section
    /// (`unwind_rs_memo_run()`: a frame costs about what a frame-pointer
    /// step does), the others one at a time here, with the row looked up
    /// in the table (which the memo then keeps).  The topmost frame only
    /// from the memo (`step()` knows its other cases).  A frame with no
    /// row or whose step fails is left to `next()` (frame pointers).
    /// Whether a step was made or the walk ended.
    fn table_run(&mut self, entries: &mut [usize], nr: &mut usize, memo: &mut Memo<'_>) -> bool {
        let start = *nr;
        let mut eh = 0u64;
        while *nr < entries.len() {
            let (stepped, done) = self.memo_run(entries, nr, memo);
            eh += stepped;
            if done {
                // The outermost frame: a clean end.
                self.done = true;
                break;
            }
            if *nr >= entries.len() || self.topmost {
                break;
            }
            let Some(found) = memo.row(self.ip.wrapping_sub(1)) else {
                break;
            };
            match self.found_step(found, false) {
                Ok(true) => {}
                Ok(false) => {
                    self.done = true;
                    break;
                }
                Err(_) => break,
            }
            entries[*nr] = self.ip;
            *nr += 1;
            if matches!(found.kind(), Kind::EhFrame) {
                eh += 1;
            }
        }
        let n = (*nr - start) as u64;
        if n != 0 {
            self.current_type = TYPE_SFRAME;
            stats::add(Stat::EhframeFrames, eh);
            stats::add(Stat::SframeFrames, n - eh);
        }
        n != 0 || self.done
    }

    /// One step with a row of the common form; false, with nothing
    /// changed, if the CFA fails a check or the slots are not present
    /// (the general step then decides).
    #[inline]
    fn common_step(&mut self, c: Common) -> bool {
        let now = Regs {
            pc: self.ip as u64,
            sp: self.sp as u64,
            fp: self.fp as u64,
        };
        let Some(cfa) = c.cfa(now.sp, now.fp) else {
            return false;
        };
        // The saved FP's slot (if any), then the return address's.
        let mut w = [0usize; 2];
        // SAFETY: `w` has room for the two words the helper writes; it
        // checks that the range is user memory and never faults.
        if unsafe {
            ffi::unwind_rs_read_cfa_slots_nofault(cfa as usize, c.fp_slot.into(), w.as_mut_ptr())
        } != 0
        {
            return false;
        }
        let r = c.caller(cfa, &now, w[1] as u64, w[0] as u64);
        self.ip = r.pc as usize;
        self.sp = r.sp as usize;
        self.fp = r.fp as usize;
        true
    }

    /// The steps of `unwind_rs_memo_run()` from this frame: the frames
    /// stepped from `.eh_frame` rows, and whether it reached the
    /// outermost frame.
    fn memo_run(&mut self, entries: &mut [usize], nr: &mut usize, memo: &Memo<'_>) -> (u64, bool) {
        let Some((rows, top, span)) = memo.rows() else {
            return (0, false);
        };
        let mut w = ffi::MemoRun {
            ip: self.ip,
            sp: self.sp,
            fp: self.fp,
            entries: entries.as_mut_ptr(),
            rows: rows.as_ptr().cast(),
            top: core::ptr::from_ref(top).cast(),
            span: core::ptr::from_ref(span).cast(),
            nr: *nr as u32,
            max: entries.len().min(u32::MAX as usize) as u32,
            eh: 0,
            done: false,
            topmost: self.topmost,
            spanned: false,
        };
        // SAFETY: `w.entries` has room for `w.max` entries, of which the
        // helper writes only those from `w.nr` on, below `w.max`; `w.rows`
        // is the memo's `ROWS_LEN` slots, `w.top` its topmost slot and
        // `w.span` its span, which the helper only reads and which nothing
        // else writes while `memo` is borrowed.
        unsafe { ffi::unwind_rs_memo_run(&mut w) };
        if w.spanned {
            stats::inc(Stat::SpanRows);
        }
        let steps = (w.nr as usize).clamp(*nr, entries.len()) - *nr;
        *nr += steps;
        self.ip = w.ip;
        self.sp = w.sp;
        self.fp = w.fp;
        if steps != 0 {
            self.topmost = false;
        }
        ((w.eh as u64).min(steps as u64), w.done)
    }

    /// Frame-pointer steps from a 64-bit frame while the IPs stay in
    /// `[lo, hi)`, each new IP stored at `entries[*nr]`: the same steps as
    /// `step_fp()`, in one user access section (`user_loops.c`).
    fn fp_run(&mut self, entries: &mut [usize], nr: &mut usize, lo: usize, hi: usize) -> FpRun {
        let mut w = ffi::FpWalk {
            ip: self.ip,
            sp: self.sp,
            fp: self.fp,
            lo,
            hi,
            entries: entries.as_mut_ptr(),
            nr: *nr as u32,
            max: entries.len().min(u32::MAX as usize) as u32,
        };
        // SAFETY: `w.entries` has room for `w.max` entries, of which the
        // helper writes only those from `w.nr` on, below `w.max`.
        let ret = unsafe { ffi::unwind_rs_fp_frames(&mut w) };
        let steps = (w.nr as usize).min(entries.len()) - *nr;
        *nr += steps;
        self.ip = w.ip;
        self.sp = w.sp;
        self.fp = w.fp;
        if steps != 0 {
            self.topmost = false;
            self.current_type = TYPE_FP;
        }
        match ret {
            0 => FpRun::Stopped,
            1 => FpRun::End,
            _ => FpRun::Fault,
        }
    }
}
