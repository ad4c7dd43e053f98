// SPDX-License-Identifier: GPL-2.0

//! Finding the unwind table for a user IP, without help from user space.
//!
//! In task context (faults and sleeping allowed): under `mmap_read_lock`,
//! the IP's VMA; if it is an executable file mapping, a reference to the
//! file and the VMA's start and page offset; the lock is dropped.  Then
//! the file's compiled table, from the cache or read
//! ([`super::table_read`]).  The mapping's bias comes from the `PT_LOAD`
//! that maps its file offset, so executables, PIEs, shared and dlopen'd
//! libraries need no registration.
//!
//! A walk keeps the mappings it looked up in a [`Memo`]: the VMA lock and
//! the cache's mutex are taken once per mapping, and a frame's lookup
//! reads only the compiled table (never user memory).  A task keeps its
//! mappings between walks ([`MapSet`], in its unwind cache) while its
//! address space's mappings stay the same: a task sampled again and again
//! looks its mappings up once, not at every walk.
//!
//! The memo's guarantee: a walk keeps the mappings a [`MapSet`] holds
//! only if the key of current's address space ([`shim::mm_key`]: the mm,
//! its exec and the even `mm_lock_seq`) read at its start equals the key
//! read at the start of each walk that looked them up.  Every lookup
//! follows the read of its walk's key, and any change of a mapping
//! write-locks `mmap_lock`, which makes the sequence odd (no key: nothing
//! is kept) and then moves it on: so no mapping changed between a kept
//! mapping's lookup and this walk's key, and a kept mapping is what a
//! fresh lookup would find.  A mapping changed during a walk may be used
//! until the walk ends, as without the memo;
//! memory safety never depends on it (sections are reference counted,
//! user memory is read with `copy_from_user()`).  A file rewritten in place
//! while mapped (no `mmap_lock`) is seen at the next change of the
//! address space's mappings; a replaced file (rename, new inode) needs a
//! new mapping anyway.  A memo drops an entry the cache evicted at its
//! next use (and looks the mapping up again); until then a task's saved
//! mappings keep at most [`MEMO_LEN`] entries alive.

use kernel::sync::Arc;

use super::elf::PAGE_SIZE;
use super::regs::UserRegs;
use super::table::Row;
use super::table_cache::{self as cache, Compiled, Entry, Kind};
use super::table_read::{entry_of, FileRef};
use crate::glue::shim::{self, MmKey, VmaInfo};
use crate::glue::stats::{self, Stat};

/// Above every user address, with 5-level page tables too.
const USER_END: usize = 1 << 57;
/// Mappings remembered per walk (program, a few libraries, the vDSO).
const MEMO_LEN: usize = 8;
/// Rows remembered per walk, direct mapped by PC: deep stacks repeat
/// return addresses (recursion, interpreters), and a repeated one then
/// costs no table search.
const ROWS_LEN: usize = 32;

/// A remembered row: the PC looked up (0: none), the slot of its
/// mapping in [`MapSet::maps`] and the row's index in that mapping's
/// table.  It holds no reference: a slot's mapping is replaced only with
/// the rows that name it forgotten ([`MapSet::forget_slot`]).
#[derive(Clone, Copy)]
struct RowSlot {
    pc: usize,
    map: u8,
    /// 0: the entry's table, 1: its fallback.
    which: u8,
    index: u16,
}

const NO_ROW_SLOT: RowSlot = RowSlot {
    pc: 0,
    map: 0,
    which: 0,
    index: 0,
};

/// One mapping of a walk: its range and, if its file has a usable
/// table that describes this mapping, the entry and the bias.
struct Mapping {
    start: usize,
    end: usize,
    bias: u64,
    entry: Option<Arc<Entry>>,
}

impl Mapping {
    /// Current's mapping at `ip`; `None` if `ip` is unmapped.  Out of
    /// line: the walk's frame stays small.
    #[inline(never)]
    fn find(ip: usize) -> Option<Self> {
        stats::inc(Stat::MapLookups);
        let mut v = VmaInfo::default();
        // SAFETY: Task context (the memo checked `can_fault()`); `v` is
        // writable; a non-NULL result is a reference we own.
        let file = unsafe { shim::unwind_rs_vma_file(ip, &mut v) };
        if v.start >= v.end {
            return None;
        }
        let mut m = Mapping {
            start: v.start,
            end: v.end,
            bias: 0,
            entry: None,
        };
        if file.is_null() {
            return Some(m);
        }
        // SAFETY: A non-NULL reference we own (above).
        let file = unsafe { FileRef::new(file) };
        let Some(entry) = entry_of(&file) else {
            return Some(m);
        };
        let off = (v.pgoff as u64).wrapping_mul(PAGE_SIZE);
        let bias = entry
            .table
            .as_ref()
            .and_then(|_| entry.segs.bias(v.start as u64, off));
        if let Some(bias) = bias {
            m.bias = bias;
            m.entry = Some(entry);
        }
        Some(m)
    }

    /// The table (0) or fallback (1) of this mapping's entry.
    #[inline]
    fn compiled(&self, which: u8) -> Option<&Compiled> {
        let e = self.entry.as_ref()?;
        if which == 0 {
            e.table.as_ref()
        } else {
            e.fallback.as_ref()
        }
    }

    /// Where the row for `pc` is: which table and the row's index.
    #[inline]
    fn row_index(&self, pc: usize) -> Option<(u8, u16)> {
        self.row_entry(pc).and_then(|(w, i, _)| Some((w, i?)))
    }

    /// [`Table::lookup_entry`] in the entry's table, then, where that has
    /// no row, in its fallback: which table, the row's index and whether
    /// the rules change at `pc`.
    ///
    /// [`Table::lookup_entry`]: super::table::Table::lookup_entry
    #[inline]
    fn row_entry(&self, pc: usize) -> Option<(u8, Option<u16>, bool)> {
        let link = (pc as u64).wrapping_sub(self.bias);
        let first = self.compiled(0)?.table().lookup_entry(link);
        if let Some((Some(i), starts)) = first {
            return Some((0, Some(i), starts));
        }
        match self.compiled(1).and_then(|c| c.table().lookup_entry(link)) {
            Some((i, starts)) => Some((1, i, starts)),
            None => first.map(|(i, starts)| (0, i, starts)),
        }
    }

    /// Row `index` of this mapping's table `which` and its format.
    #[inline]
    fn row(&self, which: u8, index: u16) -> Option<(Row, Kind)> {
        let t = self.compiled(which)?;
        Some((t.table().row(index)?, t.kind))
    }

    /// Whether the cache let go of this mapping's entry: a memo must not
    /// keep it.
    #[inline]
    fn stale(&self) -> bool {
        self.entry.as_ref().is_some_and(|e| e.evicted())
    }
}

/// The mappings walks looked up: one walk's (on its stack), or a task's
/// kept between walks in its unwind cache (see the module documentation),
/// with the key of the address space they belong to.
pub(crate) struct MapSet {
    /// `NO_KEY` (mm 0) while no valid key is known.
    key: MmKey,
    maps: [Option<Mapping>; MEMO_LEN],
    next: usize,
    /// The slot of the last mapping found: consecutive frames are mostly
    /// in the same one.
    last: usize,
    rows: [RowSlot; ROWS_LEN],
}

impl MapSet {
    pub(crate) const fn new() -> Self {
        Self {
            key: NO_KEY,
            maps: [const { None }; MEMO_LEN],
            next: 0,
            last: 0,
            rows: [NO_ROW_SLOT; ROWS_LEN],
        }
    }

    /// Forgets mapping slot `i` and the rows found in it.
    fn forget_slot(&mut self, i: usize) {
        self.maps[i] = None;
        for r in &mut self.rows {
            if r.map as usize == i {
                *r = NO_ROW_SLOT;
            }
        }
    }

    // Rare (the mappings changed): out of the walk's way.
    #[cold]
    #[inline(never)]
    fn clear(&mut self) {
        for m in &mut self.maps {
            *m = None;
        }
        self.rows = [NO_ROW_SLOT; ROWS_LEN];
        self.next = 0;
    }
}

/// No address space: no `mm` is at address 0.
const NO_KEY: MmKey = MmKey {
    mm: 0,
    exec_id: 0,
    seq: 0,
    pad: 0,
};

/// The mappings one walk sees: in place in a [`MapSet`].
pub(crate) struct Memo<'a> {
    set: &'a mut MapSet,
    enabled: bool,
}

impl<'a> Memo<'a> {
    /// A memo for a walk in the current context, in `set`: tables are used
    /// only where faults are allowed (discovery sleeps) and when the
    /// cache's cap is not 0.  The mappings `set` holds are kept only if
    /// current's address space is the one, with the same mappings, that
    /// they were looked up in.
    pub(crate) fn new(set: &'a mut MapSet) -> Self {
        let enabled = shim::can_fault() && cache::cap() != 0;
        let key = if enabled { shim::mm_key() } else { None };
        Self::with(set, enabled, key)
    }

    /// As `new()`, with what `UserRegs::current()` found out already.
    #[inline]
    pub(crate) fn for_walk(set: &'a mut MapSet, regs: &UserRegs) -> Self {
        Self::with(set, regs.sframe, regs.key())
    }

    #[inline]
    fn with(set: &'a mut MapSet, enabled: bool, key: Option<MmKey>) -> Self {
        let key = key.unwrap_or(NO_KEY);
        if key.mm == 0 || set.key != key {
            set.clear();
            set.key = key;
        }
        Self { set, enabled }
    }

    /// The mapping at `pc`, looked up if this memo has not seen it.
    #[inline]
    fn mapping(&mut self, pc: usize) -> Option<&Mapping> {
        let last = self.set.last % MEMO_LEN;
        if self.set.maps[last]
            .as_ref()
            .is_some_and(|m| m.start <= pc && pc < m.end && !m.stale())
        {
            return self.set.maps[last].as_ref();
        }
        self.mapping_slow(pc)
    }

    #[inline(never)]
    fn mapping_slow(&mut self, pc: usize) -> Option<&Mapping> {
        // Not a user address (the return address 0 of a chain's end, less
        // one): no lookup.
        if !(PAGE_SIZE as usize..USER_END).contains(&pc) {
            return None;
        }
        let set = &mut *self.set;
        // Evicted entries go: the cache's cap bounds what memos hold.
        for i in 0..MEMO_LEN {
            if set.maps[i].as_ref().is_some_and(|m| m.stale()) {
                set.forget_slot(i);
            }
        }
        let i = match set
            .maps
            .iter()
            .position(|m| m.as_ref().is_some_and(|m| m.start <= pc && pc < m.end))
        {
            Some(i) => i,
            None => {
                let m = Mapping::find(pc)?;
                let i = set.next % MEMO_LEN;
                set.forget_slot(i);
                set.maps[i] = Some(m);
                set.next = set.next.wrapping_add(1);
                i
            }
        };
        set.last = i;
        set.maps[i].as_ref()
    }

    /// The row for user address `pc`, if its mapping has one, and the
    /// format it came from.
    #[inline]
    pub(crate) fn row(&mut self, pc: usize) -> Option<(Row, Kind)> {
        if !self.enabled {
            return None;
        }
        let h = (pc ^ (pc >> 5) ^ (pc >> 10)) % ROWS_LEN;
        let r = self.set.rows[h];
        if r.pc == pc && pc != 0 {
            // The slot still holds the mapping the row was found in
            // (`forget_slot()`); an evicted entry goes first.
            if let Some(m) = self.set.maps[r.map as usize].as_ref() {
                if !m.stale() {
                    return m.row(r.which, r.index);
                }
            }
        }
        let m = self.mapping(pc)?;
        let (which, index) = m.row_index(pc)?;
        let found = m.row(which, index);
        let map = self.set.last % MEMO_LEN;
        self.set.rows[h] = RowSlot {
            pc,
            map: map as u8,
            which,
            index,
        };
        found
    }

    /// The row of the topmost frame, at `ip`: that of `ip` itself (a
    /// sample in a prologue or epilogue is exact), unless the rules
    /// change at `ip` and `after_syscall()` says the instruction before
    /// it is a system call: then `ip` is only where the task returns to,
    /// perhaps past the end of its function (a `noreturn` one that ends
    /// in the call), and the call's own row describes the frame (the
    /// instruction changes no stack pointer).
    pub(crate) fn topmost_row(
        &mut self,
        ip: usize,
        after_syscall: impl FnOnce() -> bool,
    ) -> Option<(Row, Kind)> {
        if !self.enabled {
            return None;
        }
        let m = self.mapping(ip)?;
        let (which, index, starts_here) = m.row_entry(ip)?;
        if !(starts_here && after_syscall()) {
            return m.row(which, index?);
        }
        let m = self.mapping(ip.wrapping_sub(1))?;
        let (which, index) = m.row_index(ip.wrapping_sub(1))?;
        m.row(which, index)
    }

    /// The user addresses around `pc` that have no table (the mapping of
    /// `pc` if it has none, all of them where tables are not used), as
    /// `[lo, hi)`: frame pointers unwind those frames.
    /// `None` if `pc`'s frames may have rows (or `pc` is unmapped).
    #[inline]
    pub(crate) fn fp_range(&mut self, pc: usize) -> Option<(usize, usize)> {
        if !self.enabled {
            return Some((0, usize::MAX));
        }
        let m = self.mapping(pc)?;
        m.entry.is_none().then_some((m.start, m.end))
    }
}
