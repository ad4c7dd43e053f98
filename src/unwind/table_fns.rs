// SPDX-License-Identifier: GPL-2.0

//! The functions of one file looked up one at a time ([`Functions`]):
//! for a section too large to compile whole (`.eh_frame` over
//! `table_compile_kb`; SFrame over `sframe_compile_kb` in a file whose
//! `.eh_frame` cannot serve), each function a walk meets is read from
//! the file through the section's sorted index ([`ehframe::lookup`],
//! [`sframe::lookup_function`]) and its rows kept here, so memory
//! follows the code that was walked, not the size of the file.  A file
//! without `.eh_frame_hdr` (a static executable) gets a header made once
//! ([`ehframe::synth_hdr_at`]), kept here and charged with the rows: 8
//! bytes a function.
//!
//! At most [`MAX_FNS`] functions and [`ROW_BYTES`] bytes of rows per
//! file, the least recently used going first.  The slot arrays start
//! small and double as functions are kept; what the set holds
//! ([`Functions::held`]) is charged to the file's cache entry after each
//! function read (`table_cache::recharge()`), so the cap bounds what all
//! files' functions hold, as it bounds whole tables.
//! A spinlock guards the set: lookups hold it for one binary search, an
//! insertion for a bounded move; nothing is allocated or read under it
//! (a function's rows are read and allocated first, larger slot arrays
//! too).  A mutex lets one thread at a time read a file's functions:
//! threads that miss the same function at once wait for the first and
//! find its rows.

use core::mem::size_of;
use core::sync::atomic::{AtomicUsize, Ordering};
use kernel::alloc::{KVVec, KVec};
use kernel::prelude::*;
use kernel::sync::{Arc, Mutex, SpinLock};
use kernel::{new_mutex, new_spinlock, pin_init};

use super::ehframe::{self, row_at, FnRow, PROBE_MEMO};
use super::lru::{Link, Lru};
use super::sframe;
use super::table::{Common, Row, COMMON_VALID};
use crate::sys::stats::{self, Gauge};

/// The most functions kept per file.
pub(crate) const MAX_FNS: usize = 4096;
/// The slots a file's set starts with.
const MIN_FNS: usize = 16;
/// The most bytes of rows kept per file.
pub(crate) const ROW_BYTES: usize = 512 << 10;
/// What a function costs besides its rows: its slot and allocation slack.
const FN_OVERHEAD: usize = 64;

/// The sorted index a file's functions are found through.
pub(crate) enum FnIndex {
    /// `.eh_frame_hdr`'s table (read from the file, or made here).
    EhFrame(ehframe::Index),
    /// SFrame's FDE array.
    Sframe(sframe::Index),
}

/// The rules a file's functions give for a PC.
#[derive(Clone, Copy)]
pub(crate) enum Rules {
    /// None there: frame pointers decide.
    None,
    /// A row of the common form, as kept (a walk's row memo keeps it as
    /// is, with no `Row` made and packed again).
    Common(Common),
    /// Any other row.
    Row(Row),
}

/// A kept row: from `off` bytes into the function, the rules `rule`: a
/// row of the common form packed (`COMMON_VALID` set: 8 bytes for nearly
/// every row), else the index of the whole row in [`Function::others`].
#[derive(Clone, Copy)]
struct Kept {
    off: u32,
    rule: u32,
}

/// One function: `[start, end)` (link-time) and its rows, at offsets
/// from its start or, if `rep` is not 0 (an SFrame PCMASK function: a
/// PLT), from the start of each `rep`-byte block.
struct Function {
    start: u64,
    end: u64,
    rep: u32,
    rows: KVec<Kept>,
    /// The rows without a common form (none, PLT, other registers).
    others: KVec<FnRow>,
}

impl Function {
    /// `rows` (as a lookup gave them) kept compactly.
    fn new(start: u64, end: u64, rep: u32, rows: &[FnRow]) -> Result<Self> {
        let other = |r: &FnRow| r.plt.is_some() || r.row.as_ref().and_then(Common::of).is_none();
        let n = rows.iter().filter(|r| other(r)).count();
        let mut f = Function {
            start,
            end,
            rep,
            rows: KVec::with_capacity(rows.len(), GFP_KERNEL_ACCOUNT)?,
            others: KVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?,
        };
        for r in rows {
            let rule = match r.row.as_ref().and_then(Common::of) {
                Some(c) if r.plt.is_none() => c.pack(true),
                _ => {
                    f.others.push(*r, GFP_KERNEL_ACCOUNT)?;
                    (f.others.len() - 1) as u32
                }
            };
            f.rows.push(Kept { off: r.off, rule }, GFP_KERNEL_ACCOUNT)?;
        }
        Ok(f)
    }

    fn cost(&self) -> usize {
        FN_OVERHEAD
            + self.rows.capacity() * size_of::<Kept>()
            + self.others.capacity() * size_of::<FnRow>()
    }

    /// The rules at `pc` and whether they change there.
    fn row(&self, pc: u64) -> (Rules, bool) {
        let (rules, starts, _) = self.row_span(pc);
        (rules, starts)
    }

    /// [`Function::row`], with the link-time addresses `[lo, hi)` around
    /// `pc` that have the same rules of the common form, changing only at
    /// `lo` (empty for any other row, and in a PLT, whose rows repeat).
    fn row_span(&self, pc: u64) -> (Rules, bool, (u64, u64)) {
        let none = (Rules::None, false, (pc, pc));
        let Some(mut off) = pc
            .checked_sub(self.start)
            .and_then(|o| u32::try_from(o).ok())
        else {
            return none;
        };
        if let Some(o) = off.checked_rem(self.rep) {
            off = o;
        }
        let n = self.rows.partition_point(|k| k.off <= off);
        let Some(&Kept { off: at, rule }) = n.checked_sub(1).and_then(|k| self.rows.get(k)) else {
            return none;
        };
        if rule & COMMON_VALID != 0 {
            let Some((c, _)) = Common::unpack(rule) else {
                return (Rules::None, at == off, (pc, pc));
            };
            // `at <= off`, so `start + at <= pc`: no overflow.
            let span = match self.rows.get(n) {
                _ if self.rep != 0 => (pc, pc),
                Some(next) => (
                    self.start + u64::from(at),
                    self.start.saturating_add(u64::from(next.off)),
                ),
                None => (self.start + u64::from(at), self.end),
            };
            return (Rules::Common(c), at == off, span);
        }
        let (rules, starts) = match self.others.get(rule as usize) {
            // The PLT expression's row depends on the PC in its block.
            Some(r) if r.plt.is_some() => match row_at(core::slice::from_ref(r), self.start, pc) {
                Some((Some(row), starts)) => (Rules::Row(row), starts),
                Some((None, starts)) => (Rules::None, starts),
                None => (Rules::None, false),
            },
            Some(r) => (r.row.map_or(Rules::None, Rules::Row), at == off),
            None => (Rules::None, false),
        };
        (rules, starts, (pc, pc))
    }
}

/// The set under the lock.
///
/// # Invariants
///
/// `order` holds the indices of the `Some` slots of `slots`, sorted by
/// their functions' starts, which do not overlap; `bytes` is the sum of
/// their costs.  `slots` has at most `MAX_FNS` elements and `order` at
/// least that many in capacity: under the lock neither allocates.
/// `links` is as long as `slots`; `used` holds the `Some` slots, least
/// recently used first, and `free` the `None` ones, so that an eviction
/// or an insertion finds its slot in O(1).
struct Set {
    slots: KVVec<Option<Function>>,
    order: KVVec<u16>,
    links: KVVec<Link>,
    used: Lru,
    free: Lru,
    bytes: usize,
}

impl Set {
    /// The bytes the set holds: its arrays and its functions.
    fn held(&self) -> usize {
        self.slots.capacity() * size_of::<Option<Function>>()
            + self.order.capacity() * size_of::<u16>()
            + self.links.capacity() * size_of::<Link>()
            + self.bytes
    }

    /// The position in `order` of the function at or below `pc`.
    fn at_or_below(&self, pc: u64) -> Option<usize> {
        let start = |k: &u16| {
            self.slots
                .get(*k as usize)
                .and_then(|f| f.as_ref())
                .map(|f| f.start)
        };
        self.order
            .partition_point(|k| start(k).is_some_and(|s| s <= pc))
            .checked_sub(1)
    }

    fn function(&self, pos: usize) -> Option<&Function> {
        let k = *self.order.get(pos)?;
        self.slots.get(k as usize)?.as_ref()
    }

    /// Removes the least recently used function: its slot in O(1), its
    /// place in `order` by binary search (the starts do not overlap).
    fn evict_one(&mut self) -> bool {
        let Some(k) = self.used.oldest() else {
            return false;
        };
        let start = self.slots.get(k).and_then(|f| f.as_ref()).map(|f| f.start);
        let pos = start
            .and_then(|st| self.at_or_below(st))
            .filter(|&p| self.order.get(p).is_some_and(|&o| o as usize == k));
        self.used.remove(&mut self.links, k);
        self.free.push(&mut self.links, k);
        if let Some(f) = self.slots.get_mut(k).and_then(|f| f.take()) {
            self.bytes = self.bytes.saturating_sub(f.cost());
        }
        // Always found (the invariant); if not, the slot is freed anyway
        // and `order` keeps a `None` slot, which lookups step over.
        let Some(pos) = pos else {
            return true;
        };
        let len = self.order.len();
        self.order[pos..].rotate_left(1);
        // SAFETY: `pos < len`, so `len - 1` is in bounds; `u16` needs no
        // drop.
        unsafe { self.order.set_len(len - 1) };
        true
    }
}

/// A header made for a file that has none: its link-time address (where
/// the file has nothing) and its bytes.
pub(crate) type MadeHdr = (u64, KVVec<u8>);

/// The functions of one file looked up so far.
#[pin_data(PinnedDrop)]
pub(crate) struct Functions {
    /// Where the file's functions are found.
    pub(crate) index: FnIndex,
    /// The header, if it was made here rather than read from the file.
    pub(crate) made: Option<MadeHdr>,
    #[pin]
    set: SpinLock<Set>,
    /// Held while a function of the file is read (`read_function()`),
    /// and by whoever grows the slot arrays; it keeps the search's first
    /// probes of the index's search ([`ehframe::Index::find`],
    /// [`sframe::Index::find`]).
    #[pin]
    pub(crate) reading: Mutex<[Option<(u64, u64)>; PROBE_MEMO]>,
    /// `Set::held()`, for the cache's charge without the lock; also what
    /// `table_bytes_held` counts of this set.
    held: AtomicUsize,
}

impl Functions {
    /// An empty set for the file whose header is `index` (`made`, if it
    /// was made here), its first slots allocated (charged to the current
    /// task's memory cgroup).
    pub(crate) fn new(index: FnIndex, made: Option<MadeHdr>) -> Result<Arc<Self>> {
        let slots = free_slots(MIN_FNS)?;
        let order = KVVec::with_capacity(MIN_FNS, GFP_KERNEL_ACCOUNT)?;
        let mut links = KVVec::from_elem(Link::OFF, MIN_FNS, GFP_KERNEL_ACCOUNT)?;
        let mut free = Lru::new();
        for k in 0..MIN_FNS {
            free.push(&mut links, k);
        }
        let set = Set {
            slots,
            order,
            links,
            used: Lru::new(),
            free,
            bytes: 0,
        };
        let held = set.held() + made.as_ref().map_or(0, |(_, h)| h.capacity());
        let f = Arc::pin_init(
            pin_init!(Self {
                index,
                made,
                set <- new_spinlock!(set, "unwind_rs_fns"),
                reading <- new_mutex!([None; PROBE_MEMO], "unwind_rs_fns_reading"),
                held: AtomicUsize::new(held),
            }),
            GFP_KERNEL_ACCOUNT,
        )?;
        stats::grow(Gauge::TableBytesHeld, held as u64);
        Ok(f)
    }

    /// The bytes the set holds now.
    pub(crate) fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    /// Publishes `Set::held()` after a change (under the lock).
    fn update_held(&self, s: &Set) {
        let made = self.made.as_ref().map_or(0, |(_, h)| h.capacity());
        let (old, new) = (self.held(), s.held() + made);
        self.held.store(new, Ordering::Relaxed);
        if new >= old {
            stats::grow(Gauge::TableBytesHeld, (new - old) as u64);
        } else {
            stats::shrink(Gauge::TableBytesHeld, (old - new) as u64);
        }
    }

    /// Doubles the slot arrays if every slot is taken (up to `MAX_FNS`):
    /// allocated outside the lock, moved under it, the old ones freed
    /// after.  Only under `reading`: nobody else grows them meanwhile.
    fn grow(&self) -> Result {
        let want = {
            let s = self.set.lock();
            if s.order.len() < s.slots.len() || s.slots.len() >= MAX_FNS {
                return Ok(());
            }
            (s.slots.len() * 2).clamp(MIN_FNS, MAX_FNS)
        };
        let mut slots = free_slots(want)?;
        let mut order = KVVec::from_elem(0u16, want, GFP_KERNEL_ACCOUNT)?;
        let mut links = KVVec::from_elem(Link::OFF, want, GFP_KERNEL_ACCOUNT)?;
        let mut guard = self.set.lock();
        let s = &mut *guard;
        // Element by element: nothing here can fail half-way.
        for (new, old) in slots.iter_mut().zip(s.slots.iter_mut()) {
            core::mem::swap(new, old);
        }
        for (new, old) in order.iter_mut().zip(s.order.iter()) {
            *new = *old;
        }
        // The lists stay valid: each slot keeps its link.
        for (new, old) in links.iter_mut().zip(s.links.iter()) {
            *new = *old;
        }
        // SAFETY: `s.order.len() <= want`, the length (it fits in the
        // slots that `want` doubled); `u16` needs no drop.
        unsafe { order.set_len(s.order.len()) };
        let old_len = s.slots.len();
        core::mem::swap(&mut s.slots, &mut slots);
        core::mem::swap(&mut s.order, &mut order);
        core::mem::swap(&mut s.links, &mut links);
        for k in old_len..want {
            s.free.push(&mut s.links, k);
        }
        self.update_held(s);
        drop(guard);
        // The old arrays (their slots all taken out) are freed here.
        drop((slots, order, links));
        Ok(())
    }

    /// The rules at `pc` (link-time) and whether they change there, if
    /// the function at `pc` was looked up: `Some(None)` where it has no
    /// rules for `pc`; `None` if no function kept covers `pc`.
    pub(crate) fn row(&self, pc: u64) -> Option<(Rules, bool)> {
        let (rules, starts, _) = self.row_span(pc)?;
        Some((rules, starts))
    }

    /// [`Functions::row`], with the span of [`Function::row_span`], within
    /// the function.
    pub(crate) fn row_span(&self, pc: u64) -> Option<(Rules, bool, (u64, u64))> {
        let mut s = self.set.lock();
        let pos = s.at_or_below(pc)?;
        let k = *s.order.get(pos)? as usize;
        let f = s.slots.get(k)?.as_ref()?;
        if pc >= f.end {
            return None;
        }
        let (rules, starts, (lo, hi)) = f.row_span(pc);
        let found = (rules, starts, (lo, hi.min(f.end)));
        let s = &mut *s;
        s.used.touch(&mut s.links, k);
        Some(found)
    }

    /// Keeps a function read from the file (`rep`: see [`Function`]; its
    /// rows copied, compactly, before the lock is taken), evicting the least recently used ones
    /// to make room; returns the rules at `pc` and the number evicted.
    /// A function that overlaps one kept is dropped.  The functions'
    /// rows stay under `budget` bytes (at most [`ROW_BYTES`]: the caller
    /// passes a share of the cache's cap, so that a file lets go of its
    /// own oldest functions before the cache lets go of the file).
    /// Called with `reading` held.
    pub(crate) fn insert(
        &self,
        start: u64,
        end: u64,
        rep: u32,
        rows: &[FnRow],
        pc: u64,
        budget: usize,
    ) -> Result<((Rules, bool), usize)> {
        self.grow()?;
        let mut f = Function::new(start, end, rep, rows)?;
        let found = f.row(pc);
        let evicted = self.keep(&mut f, budget.min(ROW_BYTES));
        Ok((found, evicted))
    }

    fn keep(&self, f: &mut Function, budget: usize) -> usize {
        if f.cost() > budget {
            return 0;
        }
        let mut s = self.set.lock();
        let evicted = Self::keep_in(&mut s, f, budget);
        self.update_held(&s);
        evicted
    }

    fn keep_in(s: &mut Set, f: &mut Function, budget: usize) -> usize {
        let (start, end) = (f.start, f.end);
        let cost = f.cost();
        // Not overlapping the function below it nor the one above.
        let pos = s.at_or_below(start);
        if pos
            .and_then(|p| s.function(p))
            .is_some_and(|g| g.end > start)
        {
            return 0;
        }
        let next = pos.map_or(0, |p| p + 1);
        if s.function(next).is_some_and(|g| g.start < end) {
            return 0;
        }
        let mut evicted = 0;
        while s.bytes + cost > budget || s.order.len() >= s.slots.len() {
            if !s.evict_one() {
                return evicted;
            }
            evicted += 1;
        }
        // Where it goes now that evictions may have moved the others.
        let at = s.at_or_below(start).map_or(0, |p| p + 1);
        let Some(k) = s.free.pop_oldest(&mut s.links) else {
            return evicted;
        };
        // Within capacity (`order.len() < slots.len()` above): no allocation.
        if k >= s.slots.len() || s.order.push(k as u16, GFP_NOWAIT).is_err() {
            s.free.push(&mut s.links, k);
            return evicted;
        }
        s.slots[k] = Some(core::mem::replace(
            f,
            Function {
                start: 0,
                end: 0,
                rep: 0,
                rows: KVec::new(),
                others: KVec::new(),
            },
        ));
        s.used.push(&mut s.links, k);
        s.bytes += cost;
        s.order[at..].rotate_right(1);
        evicted
    }
}

#[pinned_drop]
impl PinnedDrop for Functions {
    fn drop(self: Pin<&mut Self>) {
        stats::shrink(Gauge::TableBytesHeld, self.held() as u64);
    }
}

/// `n` free slots.
fn free_slots(n: usize) -> Result<KVVec<Option<Function>>> {
    let mut slots = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
    for _ in 0..n {
        slots.push(None, GFP_KERNEL_ACCOUNT)?;
    }
    Ok(slots)
}
