// SPDX-License-Identifier: GPL-2.0

//! The walk's C helpers (`user_loops.c`, `table_sys.c`, declared in
//! `unwind.h`) and the layouts they share with Rust: each struct here
//! mirrors the one of `unwind.h`, and both sides assert its size and
//! offsets (`api/exports.c`), so a change on one side alone breaks the
//! build.
//!
//! The loops are in C because a user access section cannot span calls
//! into Rust; the rest wraps inline functions that `bindgen` cannot call.

use kernel::ffi::{c_int, c_uint, c_ulong, c_void};

extern "C" {
    /// Two consecutive user words at `addr` (4 bytes each if `compat`),
    /// without faulting: 0 or `-EFAULT`.
    pub(crate) fn unwind_rs_read_words_nofault(
        addr: c_ulong,
        out: *mut c_ulong,
        compat: bool,
    ) -> c_int;
    /// The return address at `cfa - 8` into `out[1]` and, if `fp_slot`,
    /// the word at `cfa - 8 * fp_slot` into `out[0]`, without faulting:
    /// 0 or `-EFAULT`.
    pub(crate) fn unwind_rs_read_cfa_slots_nofault(
        cfa: c_ulong,
        fp_slot: c_uint,
        out: *mut c_ulong,
    ) -> c_int;
    /// Current's user registers, whether unwind tables may be used and the
    /// memo's key, in one call: false without user registers.
    pub(crate) fn unwind_rs_walk_ctx(c: *mut WalkCtx) -> bool;
    /// One 8-byte user word at `addr`, without faulting: 0 or `-EFAULT`.
    pub(crate) fn unwind_rs_read_word_nofault(addr: c_ulong, out: *mut c_ulong) -> c_int;
    /// The `table_cache_kb` module parameter (also `sframe_cache_kb`).
    pub(crate) fn unwind_rs_table_cache_kb() -> c_uint;
    /// The `table_compile_kb` module parameter.
    pub(crate) fn unwind_rs_table_compile_kb() -> c_uint;
    /// The `sframe_compile_kb` module parameter.
    pub(crate) fn unwind_rs_sframe_compile_kb() -> c_uint;
    /// Lets other tasks run (`cond_resched()`); false once current is
    /// being killed.  Task context that may sleep.
    pub(crate) fn unwind_rs_table_read_keep_going() -> bool;
    /// The table cache's mutex.
    pub(crate) fn unwind_rs_table_cache_lock();
    /// The table cache's mutex if it is free.
    pub(crate) fn unwind_rs_table_cache_trylock() -> bool;
    pub(crate) fn unwind_rs_table_cache_unlock();
    /// The mutex held while a file's tables are read; false if current
    /// was killed while waiting for it.  Task context that may sleep.
    pub(crate) fn unwind_rs_table_read_lock() -> bool;
    pub(crate) fn unwind_rs_table_read_unlock();
    /// Current's VMA at `ip` and a reference to its `struct file` if it
    /// is an executable file mapping (NULL otherwise; `v` empty if
    /// unmapped).  The file is `c_void` here: bindgen's `struct file`
    /// holds a zero-sized member that `improper_ctypes` refuses.
    /// With `trylock`, NULL (and `v` empty) when the mmap lock is taken.
    pub(crate) fn unwind_rs_vma_file(ip: c_ulong, v: *mut VmaInfo, trylock: bool) -> *mut c_void;
    /// The identity of `file`'s current version.
    pub(crate) fn unwind_rs_file_id(file: *mut c_void, id: *mut FileId);
    /// Up to `len` bytes of `file` at `pos` into `buf`, from the page
    /// cache (no atime, no fsnotify event): the bytes read, 0 at the end
    /// of the file, or a negative errno.
    pub(crate) fn unwind_rs_file_read(
        file: *mut c_void,
        buf: *mut c_void,
        len: usize,
        pos: i64,
    ) -> isize;
    /// Current's address space and the version of its mappings; false
    /// while they are being changed (or cannot be versioned).
    pub(crate) fn unwind_rs_mm_key(k: *mut MmKey) -> bool;
    /// Frame-pointer steps of a 64-bit stack in one user access section
    /// while the IPs stay in `[lo, hi)`: 0 (left the range, or full), 1
    /// (end of the chain) or `-EFAULT` (a page to fault in).
    pub(crate) fn unwind_rs_fp_frames(w: *mut FpWalk) -> c_int;
    /// Table steps while the memo `w.rows` holds each frame's row in the
    /// common form (`user_loops.c`).
    pub(crate) fn unwind_rs_memo_run(w: *mut MemoRun);
}

/// Matches `struct unwind_rs_fp_walk` in `unwind.h` (checked by `api/exports.c`).
#[repr(C)]
pub(crate) struct FpWalk {
    pub(crate) ip: usize,
    pub(crate) sp: usize,
    pub(crate) fp: usize,
    pub(crate) lo: usize,
    pub(crate) hi: usize,
    pub(crate) entries: *mut usize,
    pub(crate) nr: u32,
    pub(crate) max: u32,
}

/// Matches `struct unwind_rs_memo_run` in `unwind.h` (checked by `api/exports.c`);
/// `rows` points to a walk's row memo (`table_find::RowSlot`s), `top` to
/// its topmost frame's slot, `span` to its topmost span (`RowSpan`).
#[repr(C)]
pub(crate) struct MemoRun {
    pub(crate) ip: usize,
    pub(crate) sp: usize,
    pub(crate) fp: usize,
    pub(crate) entries: *mut usize,
    pub(crate) rows: *const c_void,
    pub(crate) top: *const c_void,
    pub(crate) span: *const c_void,
    pub(crate) nr: u32,
    pub(crate) max: u32,
    pub(crate) eh: u32,
    pub(crate) done: bool,
    pub(crate) topmost: bool,
    pub(crate) spanned: bool,
}

/// Matches `struct unwind_rs_walk_ctx` in `unwind.h` (checked by `api/exports.c`):
/// `unwind::regs::UserRegs`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct WalkCtx {
    /// Current (`struct task_struct`).
    pub(crate) task: *mut c_void,
    pub(crate) ip: usize,
    pub(crate) sp: usize,
    pub(crate) bp: usize,
    /// Valid if `key_valid`.
    pub(crate) key: MmKey,
    pub(crate) cs: u16,
    pub(crate) ss: u16,
    /// A 32-bit (IA32 emulation) user context.
    pub(crate) compat: bool,
    /// The context may take page faults.
    pub(crate) can_fault: bool,
    /// Unwind tables may be used: faults are allowed and the table cache
    /// is on.
    pub(crate) tables: bool,
    pub(crate) key_valid: bool,
    /// Tables may be used only as cached: no file read, no waiting for a
    /// lock (a walk without faults that may sleep: exec, exit, dying).
    pub(crate) cached_only: bool,
}

/// Matches `struct unwind_rs_vma` in `unwind.h` (checked by `api/exports.c`).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub(crate) struct VmaInfo {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) pgoff: usize,
}

/// Matches `struct unwind_rs_file_id` in `unwind.h` (checked by `api/exports.c`).
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct FileId {
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) size: u64,
    pub(crate) ctime_sec: i64,
    pub(crate) mtime_sec: i64,
    pub(crate) ctime_nsec: u32,
    pub(crate) mtime_nsec: u32,
    pub(crate) generation: u32,
    pub(crate) pad: u32,
}

/// Matches `struct unwind_rs_mm_key` in `unwind.h` (checked by `api/exports.c`).
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct MmKey {
    pub(crate) mm: usize,
    pub(crate) exec_id: u64,
    pub(crate) seq: u32,
    pub(crate) pad: u32,
}

/// Current's address space and the version of its mappings: two equal
/// keys mean the same address space with no mapping changed in between.
/// `None` while a mapping is being changed.
pub(crate) fn mm_key() -> Option<MmKey> {
    let mut k = MmKey::default();
    // SAFETY: `k` is writable; the helper only reads current's state.
    unsafe { unwind_rs_mm_key(&mut k) }.then_some(k)
}

const _: () = {
    assert!(core::mem::size_of::<MmKey>() == 24);
    assert!(core::mem::size_of::<FpWalk>() == 56);
    assert!(core::mem::size_of::<MemoRun>() == 72);
    assert!(core::mem::offset_of!(MemoRun, nr) == 56);
    assert!(core::mem::offset_of!(MemoRun, done) == 68);
    assert!(core::mem::offset_of!(MemoRun, topmost) == 69);
    assert!(core::mem::offset_of!(MemoRun, spanned) == 70);
    assert!(core::mem::offset_of!(FpWalk, nr) == 48);
    assert!(core::mem::offset_of!(MmKey, seq) == 16);
    assert!(core::mem::size_of::<WalkCtx>() == 72);
    assert!(core::mem::offset_of!(WalkCtx, cs) == 56);
    assert!(core::mem::size_of::<VmaInfo>() == 24);
    assert!(core::mem::size_of::<FileId>() == 56);
    assert!(core::mem::offset_of!(FileId, ctime_nsec) == 40);
    assert!(core::mem::offset_of!(FileId, generation) == 48);
};
