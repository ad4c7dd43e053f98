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
//! only if the key of current's address space ([`ffi::mm_key`]: the mm,
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
//! new mapping anyway.
//!
//! A saved mapping keeps only its entry's shell; a walk pins the tables
//! of each mapping it uses ([`Memo`]'s pins, dropped when the walk ends):
//! a task asleep between walks holds no tables, and a mapping whose
//! tables the cache let go of is looked up again at its next use.

use kernel::sync::Arc;

use super::elf::PAGE_SIZE;
use super::ffi::{self, MmKey, VmaInfo};
use super::regs::UserRegs;
use super::table::{row_find, row_hash, Common, Row, RowSlot, RowSpan, ROW_SLOTS, ROW_WAYS};
use super::table::{SLOT_FALLBACK, SLOT_NO_INDEX, SLOT_OUTERMOST, SLOT_STARTS};
use super::table_cache::{self as cache, Entry, Kind, Tables};
use super::table_fns::{FnIndex, Functions, Rules};
use super::table_read::{entry_of, read_function, FileRef};
use crate::sys::context;
use crate::sys::stats::{self, Stat};

/// Above every user address, with 5-level page tables too.
const USER_END: usize = 1 << 57;
/// Mappings remembered per walk (program, a few libraries, the vDSO).
const MEMO_LEN: usize = 8;
/// Rows remembered per walk, in sets of slots by PC ([`row_find`]): deep
/// stacks repeat return addresses (recursion, interpreters), and a
/// repeated one then costs no table search.
const ROWS_LEN: usize = ROW_SLOTS;

// A remembered row ([`RowSlot`], declared in `row_slot.h`): the PC looked
// up (0: none), the slot of its mapping in [`MapSet::maps`], the row's
// index in that mapping's table, flags (`SLOT_*`) and, if the row has the
// [`Common`] form, that form packed: a frame whose row the memo holds in
// that form is stepped without the table.  It holds no reference: a
// slot's mapping is replaced only with the rows that name it forgotten
// ([`Memo::forget`]), and a shell's tables never change (they are only
// taken away, and a file's rows are the same when its tables are read
// again).
impl RowSlot {
    /// The common form this slot keeps, and its format.
    #[inline(always)]
    fn common(&self) -> Option<(Common, Kind)> {
        let (c, eh) = Common::unpack(self.common)?;
        Some((c, if eh { Kind::EhFrame } else { Kind::SFrame }))
    }

    /// Whether this slot holds the row of `pc`.
    #[inline(always)]
    fn holds(&self, pc: usize) -> bool {
        self.pc == pc as u64 && pc != 0
    }

    /// Whether an entry of the table starts at the slot's PC.
    #[inline(always)]
    fn starts(&self) -> bool {
        self.flags & SLOT_STARTS != 0
    }
}

const NO_ROW_SLOT: RowSlot = RowSlot {
    pc: 0,
    map: 0,
    flags: 0,
    index: 0,
    common: 0,
};

// The topmost span ([`RowSpan`], declared in `row_slot.h`): the stretch
// `[lo, hi)` of user addresses around the last topmost IP that a table
// looked up, where that row (of the common form) holds and the rules
// change only at `lo`.  A task sampled again is mostly in the same loop,
// at another IP: it finds its row here with no search, pin or lock, in
// `unwind_rs_memo_run()` or `Memo::in_span()`.  `row` is the slot as
// [`Memo::remember`] keeps it, without `SLOT_STARTS`; `forget()` clears
// the span with the rows of its mapping.
const NO_SPAN: RowSpan = RowSpan {
    lo: 0,
    hi: 0,
    row: NO_ROW_SLOT,
};

/// A row the memo holds in a form that needs no table.
#[derive(Clone, Copy)]
pub(crate) enum Quick {
    /// A step of the common form, from a table of that format.
    Step(Common, Kind),
    /// The outermost frame (RA undefined): the walk ends here, cleanly.
    End,
}

/// A row a lookup found: in its common form if it has one.
#[derive(Clone, Copy)]
pub(crate) enum Found {
    Common(Common, Kind),
    Row(Row, Kind),
}

impl Found {
    /// `row` of format `kind`, in `common`, its common form, if it has one.
    #[inline]
    fn new(row: Row, common: Option<Common>, kind: Kind) -> Self {
        match common {
            Some(c) => Found::Common(c, kind),
            None => Found::Row(row, kind),
        }
    }

    /// The format the row came from.
    #[inline]
    pub(crate) fn kind(&self) -> Kind {
        match self {
            Found::Common(_, k) | Found::Row(_, k) => *k,
        }
    }
}

/// One mapping of a walk: its range and, if its file has a usable
/// table that describes this mapping, the entry's shell and the bias.
struct Mapping {
    start: usize,
    end: usize,
    bias: u64,
    entry: Option<Arc<Entry>>,
}

impl Mapping {
    /// Current's mapping at `ip`, with its tables pinned; `None` if `ip`
    /// is unmapped.  Out of line: the walk's frame stays small.
    #[inline(never)]
    ///
    /// With `cached_only`, reads no file and waits for no lock: a file
    /// whose tables are not cached, or a lock that is taken, gives none.
    fn find(ip: usize, cached_only: bool) -> Option<(Self, Option<Arc<Tables>>)> {
        stats::inc(Stat::MapLookups);
        let mut v = VmaInfo::default();
        // SAFETY: Task context that may sleep (the memo is enabled only
        // there); `v` is writable; a non-NULL result is a reference we own.
        let file = unsafe { ffi::unwind_rs_vma_file(ip, &mut v, cached_only) };
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
            return Some((m, None));
        }
        // SAFETY: A non-NULL reference we own (above).
        let file = unsafe { FileRef::new(file) };
        let Some((entry, Some(pin))) = entry_of(&file, cached_only) else {
            return Some((m, None));
        };
        let off = (v.pgoff as u64).wrapping_mul(PAGE_SIZE);
        match entry.segs.bias(v.start as u64, off) {
            Some(bias) => {
                m.bias = bias;
                m.entry = Some(entry);
                Some((m, Some(pin)))
            }
            None => Some((m, None)),
        }
    }
}

/// A mapping's pinned tables, for one walk.
#[derive(Clone, Copy)]
struct View<'a> {
    bias: u64,
    tables: &'a Tables,
}

impl View<'_> {
    /// [`Table::lookup_span`] in the entry's table, then, where that has
    /// no row, in its fallback: which table, the row's index, whether
    /// the rules change at `pc` and the span of the entry found.
    ///
    /// [`Table::lookup_span`]: super::table::Table::lookup_span
    #[inline]
    fn row_entry(&self, pc: usize) -> Option<(u8, Option<u16>, bool, (u64, u64))> {
        let link = (pc as u64).wrapping_sub(self.bias);
        let first = self.tables.table.table().lookup_span(link);
        if let Some((Some(i), starts, span)) = first {
            return Some((0, Some(i), starts, span));
        }
        match self
            .tables
            .fallback
            .as_ref()
            .and_then(|c| c.table().lookup_span(link))
        {
            Some((i, starts, span)) => Some((1, i, starts, span)),
            None => first.map(|(i, starts, span)| (0, i, starts, span)),
        }
    }

    /// Row `index` of table `which` and its format.
    #[inline]
    fn row(&self, which: u8, index: u16) -> Option<(Row, Kind)> {
        let t = self.tables.compiled(which)?;
        Some((t.table().row(index)?, t.kind))
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
    /// The last topmost frame's row looked up (see [`Memo::lookup`]): a
    /// task sampled at the same IP again, or in a loop of system calls,
    /// finds it here, not in its file's functions.
    top: RowSlot,
    span: RowSpan,
    /// `rows`, `top` or `span` may hold something: a walk without tables, which
    /// clears the set every time, then clears nothing.
    dirty: bool,
}

impl MapSet {
    pub(crate) const fn new() -> Self {
        Self {
            key: NO_KEY,
            maps: [const { None }; MEMO_LEN],
            next: 0,
            last: 0,
            rows: [NO_ROW_SLOT; ROWS_LEN],
            top: NO_ROW_SLOT,
            span: NO_SPAN,
            dirty: false,
        }
    }

    // Out of the walk's way: the mappings changed, or tables are not used
    // (no key), where it is cheap.
    #[cold]
    #[inline(never)]
    fn clear(&mut self) {
        for m in &mut self.maps {
            *m = None;
        }
        if self.dirty {
            self.rows = [NO_ROW_SLOT; ROWS_LEN];
            self.top = NO_ROW_SLOT;
            self.span = NO_SPAN;
            self.dirty = false;
        }
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

/// The mappings one walk sees: in place in a [`MapSet`], with this walk's
/// pins of their tables.
///
/// # Invariants
///
/// A slot of `set.maps` with an entry, returned by [`Memo::slot`] in this
/// walk, has its pin in `pins` until [`Memo::forget`] clears both.
pub(crate) struct Memo<'a> {
    set: &'a mut MapSet,
    enabled: bool,
    /// Tables as cached only (`UserRegs::cached_only`).
    cached_only: bool,
    /// Dropped with the walk: the last pin of an evicted entry's tables
    /// frees them, in the walk's task context.
    pins: [Option<Arc<Tables>>; MEMO_LEN],
}

impl<'a> Memo<'a> {
    /// A memo for a walk in the current context, in `set`: tables are used
    /// only where faults are allowed (discovery sleeps) and when the
    /// cache's cap is not 0.  The mappings `set` holds are kept only if
    /// current's address space is the one, with the same mappings, that
    /// they were looked up in.
    pub(crate) fn new(set: &'a mut MapSet) -> Self {
        let enabled = context::can_fault() && cache::cap() != 0;
        let key = if enabled { ffi::mm_key() } else { None };
        Self::with(set, enabled, key, false)
    }

    /// As `new()`, with what `UserRegs::current()` found out already.
    #[inline]
    pub(crate) fn for_walk(set: &'a mut MapSet, regs: &UserRegs) -> Self {
        Self::with(set, regs.tables, regs.key(), regs.cached_only)
    }

    #[inline]
    fn with(set: &'a mut MapSet, enabled: bool, key: Option<MmKey>, cached_only: bool) -> Self {
        let key = key.unwrap_or(NO_KEY);
        if key.mm == 0 || set.key != key {
            set.clear();
            set.key = key;
        }
        Self {
            set,
            enabled,
            cached_only,
            pins: [const { None }; MEMO_LEN],
        }
    }

    /// Forgets mapping slot `i`, its pin and the rows found in it.
    fn forget(&mut self, i: usize) {
        self.set.maps[i] = None;
        self.pins[i] = None;
        for r in self.set.rows.iter_mut().chain([&mut self.set.top]) {
            if r.map as usize == i {
                *r = NO_ROW_SLOT;
            }
        }
        if self.set.span.row.map as usize == i {
            self.set.span = NO_SPAN;
        }
    }

    /// Pins slot `i`'s tables for this walk if it has an entry and is not
    /// pinned yet.  False if the cache let go of them: the slot is then
    /// forgotten.
    #[inline]
    fn pinned(&mut self, i: usize) -> bool {
        if self.pins[i].is_some() {
            return true;
        }
        let Some(m) = self.set.maps[i].as_ref() else {
            return false;
        };
        let Some(e) = m.entry.as_ref() else {
            return true;
        };
        match e.pin() {
            Some(t) => {
                self.pins[i] = Some(t);
                true
            }
            None => {
                self.forget(i);
                false
            }
        }
    }

    /// The pinned tables of slot `i`, if its mapping has any.
    #[inline]
    fn view(&self, i: usize) -> Option<View<'_>> {
        let m = self.set.maps[i].as_ref()?;
        Some(View {
            bias: m.bias,
            tables: self.pins[i].as_deref()?,
        })
    }

    /// The slot of the mapping at `pc`, looked up if this memo has not
    /// seen it, its tables pinned.
    #[inline]
    fn slot(&mut self, pc: usize) -> Option<usize> {
        let last = self.set.last % MEMO_LEN;
        if self.set.maps[last]
            .as_ref()
            .is_some_and(|m| m.start <= pc && pc < m.end)
            && self.pinned(last)
        {
            return Some(last);
        }
        self.slot_slow(pc)
    }

    #[inline(never)]
    fn slot_slow(&mut self, pc: usize) -> Option<usize> {
        // Not a user address (the return address 0 of a chain's end, less
        // one): no lookup.
        if !(PAGE_SIZE as usize..USER_END).contains(&pc) {
            return None;
        }
        let found = self
            .set
            .maps
            .iter()
            .position(|m| m.as_ref().is_some_and(|m| m.start <= pc && pc < m.end));
        let i = match found {
            Some(i) if self.pinned(i) => i,
            _ => {
                let (m, pin) = Mapping::find(pc, self.cached_only)?;
                let i = self.set.next % MEMO_LEN;
                self.forget(i);
                self.set.maps[i] = Some(m);
                self.pins[i] = pin;
                self.set.next = self.set.next.wrapping_add(1);
                i
            }
        };
        self.set.last = i;
        Some(i)
    }

    /// The row memo's slots, its topmost slot and its topmost span for
    /// `ffi::unwind_rs_memo_run()`, if tables are used (else the memo
    /// holds no row).
    #[inline]
    pub(crate) fn rows(&self) -> Option<(&[RowSlot; ROWS_LEN], &RowSlot, &RowSpan)> {
        self.enabled
            .then_some((&self.set.rows, &self.set.top, &self.set.span))
    }

    /// What the row memo holds for `pc` in a form that needs no table: a
    /// step of the common form or the outermost frame, and whether an
    /// entry starts at `pc`.  The walk's fast path, which touches neither
    /// tables nor pins.
    #[inline(always)]
    pub(crate) fn quick(&self, pc: usize, topmost: bool) -> Option<(Quick, bool)> {
        let r = self.slot_of(pc, topmost)?;
        if !self.enabled {
            return None;
        }
        let starts = r.starts();
        if r.flags & SLOT_OUTERMOST != 0 {
            return Some((Quick::End, starts));
        }
        let (c, kind) = r.common()?;
        Some((Quick::Step(c, kind), starts))
    }

    /// The memo's slot holding `pc`'s row, if one does: for a topmost
    /// frame the topmost slot first (where `remember()` keeps its rows),
    /// then `pc`'s own.
    #[inline(always)]
    fn slot_of(&self, pc: usize, topmost: bool) -> Option<&RowSlot> {
        if topmost && self.set.top.holds(pc) {
            return Some(&self.set.top);
        }
        let r = &self.set.rows[row_find(&self.set.rows, pc as u64)];
        r.holds(pc).then_some(r)
    }

    /// The row for user address `pc`, if its mapping has one.
    #[inline]
    pub(crate) fn row(&mut self, pc: usize) -> Option<Found> {
        self.lookup(pc, false)?.0
    }

    /// The row covering `pc` (`None` where the table has an entry but no
    /// rules) and whether an entry starts at `pc`: from the row memo,
    /// else from the table, and the memo then keeps it.  `None` if `pc`'s
    /// mapping has no table or its table ends before `pc`.
    ///
    /// A topmost frame's lookup (`topmost`) keeps its row in the one
    /// topmost slot: a sampled IP moves from sample to sample, and would
    /// evict (or crowd into a pair) the rows of the frames below it,
    /// which do not; the topmost span serves the rest of its stretch.
    fn lookup(&mut self, pc: usize, topmost: bool) -> Option<(Option<Found>, bool)> {
        if !self.enabled {
            return None;
        }
        if let Some(&r) = self.slot_of(pc, topmost) {
            let starts = r.starts();
            if let Some((c, kind)) = r.common() {
                return Some((Some(Found::Common(c, kind)), starts));
            }
            // The slot still holds the mapping the row was found in
            // (`forget()`); one whose tables went is looked up again, as
            // is a row kept without an index (`quick()` serves it).
            if r.flags & SLOT_NO_INDEX == 0 && self.pinned(r.map as usize) {
                if let Some(v) = self.view(r.map as usize) {
                    let found = v
                        .row((r.flags & SLOT_FALLBACK != 0) as u8, r.index)
                        .map(|(row, k)| Found::Row(row, k));
                    return Some((found, starts));
                }
            }
        }
        if topmost {
            if let Some(found) = self.in_span(pc) {
                return Some(found);
            }
        }
        let i = self.slot(pc)?;
        let v = self.view(i)?;
        let entry = v.row_entry(pc);
        if !matches!(entry, Some((_, Some(_), _, _))) {
            if let Some(fns) = v.tables.fns.clone() {
                return self.lookup_fn(i, pc, topmost, &fns);
            }
        }
        let (which, index, starts, span) = entry?;
        let Some(index) = index else {
            return Some((None, starts));
        };
        let (row, kind) = v.row(which, index)?;
        let common = Common::of(&row);
        let slot = RowSlot {
            pc: pc as u64,
            map: i as u8,
            flags: if which != 0 { SLOT_FALLBACK } else { 0 }
                | if starts { SLOT_STARTS } else { 0 }
                | if row.ra.is_none() { SLOT_OUTERMOST } else { 0 },
            index,
            common: common.map_or(0, |c| c.pack(kind == Kind::EhFrame)),
        };
        self.remember(topmost, slot);
        if topmost && common.is_some() && which == 0 {
            self.keep_span(i, span, slot);
        }
        Some((Some(Found::new(row, common, kind)), starts))
    }

    /// The row of a topmost frame at `pc` from the topmost span, and
    /// whether the rules change at `pc` (its first address).
    #[inline]
    fn in_span(&self, pc: usize) -> Option<(Option<Found>, bool)> {
        let span = &self.set.span;
        let starts = pc as u64 == span.lo;
        if !(starts && span.lo < span.hi || span.inside(pc as u64)) {
            return None;
        }
        let (c, kind) = span.row.common()?;
        stats::inc(Stat::SpanRows);
        Some((Some(Found::Common(c, kind)), starts))
    }

    /// Keeps the link-time span `[lo, hi)` of mapping slot `i`, whose
    /// row of the common form `slot` holds, as the memo's span (the part
    /// of it in the mapping).
    #[inline]
    fn keep_span(&mut self, i: usize, (lo, hi): (u64, u64), slot: RowSlot) {
        let Some(m) = self.set.maps[i].as_ref() else {
            return;
        };
        let lo = lo.wrapping_add(m.bias).max(m.start as u64);
        let hi = hi.wrapping_add(m.bias).min(m.end as u64);
        // A span that wrapped around (a bias no sane file gives) is none.
        if lo < hi && lo <= slot.pc && slot.pc < hi {
            self.set.span = RowSpan {
                lo,
                hi,
                row: RowSlot {
                    flags: slot.flags & !SLOT_STARTS,
                    ..slot
                },
            };
            self.set.dirty = true;
        }
    }

    /// Keeps `slot` in the row memo: a topmost frame's in the topmost
    /// slot (see [`Memo::lookup`]), any other in the first slot of its
    /// set that is free (or already its PC's), else in the set's last,
    /// so that the others keep the rows found first and a walk that
    /// repeats more rows of one set than it has slots still finds most.
    #[inline]
    fn remember(&mut self, topmost: bool, slot: RowSlot) {
        if topmost {
            self.set.top = slot;
        } else {
            let h = row_hash(slot.pc);
            let k = (0..ROW_WAYS)
                .map(|i| h ^ i)
                .find(|&k| self.set.rows[k].pc == 0 || self.set.rows[k].pc == slot.pc)
                .unwrap_or(h ^ (ROW_WAYS - 1));
            self.set.rows[k] = slot;
        }
        self.set.dirty = true;
    }

    /// [`Memo::lookup`] where the file's section is looked up by
    /// function: the rows kept in `fns`, else read from the file (never
    /// by a walk that must not wait).  The memo keeps only rows of the
    /// common form and the outermost frame's (no index into a table to
    /// come back to): without the latter, every walk of a program whose
    /// `_start` is described so would look it up in `fns` again.
    #[inline(never)]
    fn lookup_fn(
        &mut self,
        i: usize,
        pc: usize,
        topmost: bool,
        fns: &Functions,
    ) -> Option<(Option<Found>, bool)> {
        let m = self.set.maps[i].as_ref()?;
        let link = (pc as u64).wrapping_sub(m.bias);
        let kind = match fns.index {
            FnIndex::EhFrame(_) => Kind::EhFrame,
            FnIndex::Sframe(_) => Kind::SFrame,
        };
        let (row, starts, span) = match fns.row_span(link) {
            Some(r) => {
                stats::inc(Stat::FnRows);
                r
            }
            None if self.cached_only => return None,
            None => {
                let tables = self.pins[i].as_deref()?;
                let (row, starts) = read_function(pc, m.entry.as_deref()?, tables, fns, link)?;
                (row, starts, (link, link))
            }
        };
        let (row, common) = match row {
            Rules::None => return Some((None, starts)),
            Rules::Common(c) => (None, Some(c)),
            Rules::Row(row) => (Some(row), Common::of(&row)),
        };
        let outermost = row.is_some_and(|r| r.ra.is_none());
        if common.is_some() || outermost {
            let slot = RowSlot {
                pc: pc as u64,
                map: i as u8,
                flags: SLOT_NO_INDEX
                    | if starts { SLOT_STARTS } else { 0 }
                    | if outermost { SLOT_OUTERMOST } else { 0 },
                index: 0,
                common: common.map_or(0, |c| c.pack(kind == Kind::EhFrame)),
            };
            self.remember(topmost, slot);
            if topmost && common.is_some() {
                self.keep_span(i, span, slot);
            }
        }
        let found = match (common, row) {
            (Some(c), _) => Found::Common(c, kind),
            (None, Some(row)) => Found::Row(row, kind),
            (None, None) => return Some((None, starts)),
        };
        Some((Some(found), starts))
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
    ) -> Option<Found> {
        let (found, starts) = self.lookup(ip, true)?;
        if !(starts && after_syscall()) {
            return found;
        }
        self.row(ip.wrapping_sub(1))
    }

    /// Whether `pc`'s mapping has unwind tables (whether or not a row
    /// covers `pc`).
    pub(crate) fn has_tables(&mut self, pc: usize) -> bool {
        self.enabled && self.slot(pc).is_some_and(|i| self.view(i).is_some())
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
        // The last mapping, without pinning its tables: whether it has any
        // is all this needs (a row lookup pins them, and finds them gone).
        let last = self.set.last % MEMO_LEN;
        let i = if self.set.maps[last]
            .as_ref()
            .is_some_and(|m| m.start <= pc && pc < m.end)
        {
            last
        } else {
            self.slot(pc)?
        };
        let m = self.set.maps[i].as_ref()?;
        m.entry.is_none().then_some((m.start, m.end))
    }
}
