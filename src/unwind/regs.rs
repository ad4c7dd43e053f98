// SPDX-License-Identifier: GPL-2.0

//! Current's user registers, as saved at its kernel entry.

use kernel::bindings;

use super::ffi::{self, MmKey, WalkCtx};
use crate::sys::context;

/// The saved user registers a walk starts from (`struct pt_regs` is read
/// only in `table_sys.c`), with what else a walk needs to know about current:
/// whether unwind tables may be used and the mappings memo's key.
pub(crate) type UserRegs = WalkCtx;

impl WalkCtx {
    /// A context to `read()` into.
    pub(crate) const EMPTY: Self = Self {
        task: core::ptr::null_mut(),
        ip: 0,
        sp: 0,
        bp: 0,
        key: MmKey {
            mm: 0,
            exec_id: 0,
            seq: 0,
            pad: 0,
        },
        cs: 0,
        ss: 0,
        compat: false,
        can_fault: false,
        tables: false,
        key_valid: false,
        cached_only: false,
    };

    /// Current's user registers; `None` for kernel threads, user workers
    /// (io_uring, vhost) and entries that did not come from user mode.
    /// One helper call: a walk's fixed cost is mostly such calls.
    pub(crate) fn current() -> Option<Self> {
        let mut c = Self::EMPTY;
        c.read().then_some(c)
    }

    /// Fills `self` with current's (as `current()`, in place): false
    /// without user registers.
    pub(crate) fn read(&mut self) -> bool {
        // SAFETY: `self` is writable; the helper copies current's saved user
        // registers, which stay valid while current runs in the kernel, and
        // only reads current's state otherwise.
        unsafe { ffi::unwind_rs_walk_ctx(self) }
    }

    /// Current's address space and mappings version (`ffi::mm_key()`),
    /// if unwind tables may be used and they have one now.
    pub(crate) fn key(&self) -> Option<MmKey> {
        self.key_valid.then_some(self.key)
    }
}

fn user_regs() -> Option<core::ptr::NonNull<bindings::pt_regs>> {
    // SAFETY: Only reads current's flags and the address of its saved
    // registers.
    core::ptr::NonNull::new(unsafe { context::unwind_rs_user_regs() })
}

/// Whether current has user registers to walk from (see `current()`).
pub(crate) fn has_user_regs() -> bool {
    user_regs().is_some()
}

/// Current's saved user register of DWARF number `n` (x86-64 numbering:
/// 0 RAX, 1 RDX, 2 RCX, 3 RBX, 4 RSI, 5 RDI, 6 RBP, 7 RSP, 8-15 R8-R15),
/// for the topmost frame's SFrame rules (a DRAP register).  After a
/// `syscall`, RCX and R11 hold the return address and flags.
pub(crate) fn dwarf_reg(n: u8) -> Option<u64> {
    let regs = user_regs()?;
    // SAFETY: `user_regs()` returns current's saved user registers, which
    // stay valid while current runs in the kernel.
    let r = unsafe { &*regs.as_ptr() };
    let v = match n {
        0 => r.ax,
        1 => r.dx,
        2 => r.cx,
        3 => r.bx,
        4 => r.si,
        5 => r.di,
        6 => r.bp,
        7 => r.sp,
        8 => r.r8,
        9 => r.r9,
        10 => r.r10,
        11 => r.r11,
        12 => r.r12,
        13 => r.r13,
        14 => r.r14,
        15 => r.r15,
        _ => return None,
    };
    Some(v as u64)
}
