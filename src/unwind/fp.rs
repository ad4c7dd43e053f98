// SPDX-License-Identifier: GPL-2.0

//! Frame-pointer unwinding of the current task's user stack.
//!
//! A frame is `[fp] = caller's fp` and `[fp + ws] = return address`, with
//! `ws` the word size (8 native, 4 compat).  The walk only ever moves up the
//! stack, reads user memory through `copy_from_user()` (which refuses
//! non-user addresses) and stops at the first frame that does not look
//! right, keeping the entries it has.

use kernel::prelude::*;
use kernel::uaccess::UserSlice;

use super::compat;
use super::regs::UserRegs;
use crate::glue::shim;

/// Matches `enum unwind_user_type` in `include/linux/unwind_user_types.h`.
pub(crate) const TYPE_NONE: u32 = 0;
pub(crate) const TYPE_FP: u32 = 1 << 0;
pub(crate) const TYPE_COMPAT_FP: u32 = 1 << 1;

/// Matches `struct unwind_stacktrace` (`glue/shim.c` checks the C side).
#[repr(C)]
pub(crate) struct UnwindStacktrace {
    pub(crate) nr: u32,
    pub(crate) entries: *mut usize,
}

const _: () = {
    assert!(core::mem::size_of::<UnwindStacktrace>() == 16);
    assert!(core::mem::offset_of!(UnwindStacktrace, entries) == 8);
};

/// Matches `struct unwind_user_state` (`glue/shim.c` checks the C side).
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
}

const _: () = {
    assert!(core::mem::size_of::<UnwindUserState>() == 56);
    assert!(core::mem::offset_of!(UnwindUserState, ss_base) == 32);
    assert!(core::mem::offset_of!(UnwindUserState, current_type) == 40);
    assert!(core::mem::offset_of!(UnwindUserState, ws) == 44);
    assert!(core::mem::offset_of!(UnwindUserState, done) == 48);
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
        }
    }

    /// Starts at the user registers saved at kernel entry; the first frame
    /// is the user IP.  Fails for kernel threads and non-user entries.
    pub(crate) fn start(&mut self) -> Result {
        *self = Self::empty();
        let regs = UserRegs::current().ok_or(EINVAL)?;
        if regs.compat {
            let (cs_base, ss_base) = compat::segment_bases(&regs);
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
        Ok(())
    }

    /// Steps to the caller's frame.  On failure the walk is over.
    pub(crate) fn next(&mut self) -> Result {
        if self.done {
            return Err(EINVAL);
        }
        let ret = self.step();
        if ret.is_err() {
            self.done = true;
        }
        ret
    }

    fn step(&mut self) -> Result {
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
    if unsafe { shim::unwind_rs_read_words_nofault(fp, w.as_mut_ptr(), compat) } == 0 {
        return Ok(w);
    }
    if compat {
        let w = read_user::<[u32; 2]>(fp)?;
        Ok([w[0] as usize, w[1] as usize])
    } else {
        read_user::<[usize; 2]>(fp)
    }
}

/// Reads a `T` from user address `addr`, faulting the page in if needed.
fn read_user<T: kernel::types::FromBytes>(addr: usize) -> Result<T> {
    UserSlice::new(addr, core::mem::size_of::<T>())
        .reader()
        .read::<T>()
}

/// Walks current's user stack into `entries`, at most `entries.len()`
/// frames.  Returns the number of entries written.
pub(crate) fn unwind(entries: &mut [usize]) -> usize {
    let mut state = UnwindUserState::empty();
    let mut nr = 0;
    if entries.is_empty() || state.start().is_err() {
        return 0;
    }
    while !state.done {
        entries[nr] = state.ip;
        nr += 1;
        if nr >= entries.len() {
            break;
        }
        // An error sets `done`, which ends the loop.
        let _ = state.next();
    }
    nr
}
