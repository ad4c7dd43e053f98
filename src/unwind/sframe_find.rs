// SPDX-License-Identifier: GPL-2.0

//! Finding the SFrame section for a user IP, without help from user space.
//!
//! In task context (faults and sleeping allowed): under `mmap_read_lock`,
//! the IP's VMA; if it is an executable file mapping, a reference to the
//! file and the VMA's start and page offset; the lock is dropped.  Then,
//! unless the file's version is cached ([`super::sframe_cache`]): its ELF
//! header and program headers ([`super::elf`]), `PT_GNU_SFRAME`, the
//! section's header, the section itself (its header-derived length, at
//! most `p_filesz` and the caps), validated once with
//! [`sframe::Section::new`].  The mapping's bias comes from the `PT_LOAD`
//! that maps its file offset, so executables, PIEs, shared and dlopen'd
//! libraries need no registration.
//!
//! A walk keeps the mappings it looked up in a [`Memo`]: the VMA lock and
//! the cache's mutex are taken once per mapping, and a frame's lookup
//! reads only the cached section (never user memory).  A task keeps its
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
//! new mapping anyway.  Saved mappings keep their sections alive after
//! the cache evicts them, until the task walks with another key or exits.

use kernel::alloc::KVVec;
use kernel::bindings;
use kernel::ffi::c_void;
use kernel::prelude::*;
use kernel::sync::Arc;

use super::elf::{Ehdr, Segments, EHDR_LEN, PAGE_SIZE};
use super::regs::UserRegs;
use super::sframe::{self, Row, HEADER_LEN};
use super::sframe_cache::{self as cache, Entry, Sframe};
use crate::glue::shim::{self, FileId, MmKey, VmaInfo};
use crate::glue::stats::{self, Stat};

/// The largest section read, whatever the cap (clang's are ~9 MiB).
const MAX_SECTION: usize = 32 << 20;
/// Above every user address, with 5-level page tables too.
const USER_END: usize = 1 << 57;
/// Mappings remembered per walk (program, a few libraries, the vDSO).
const MEMO_LEN: usize = 8;

/// A reference to a `struct file`, dropped with `fput()`.
struct FileRef(*mut c_void);

impl FileRef {
    /// The identity of the file's current version.
    fn id(&self) -> FileId {
        let mut id = FileId::default();
        // SAFETY: We hold a reference to the file.
        unsafe { shim::unwind_rs_file_id(self.0, &mut id) };
        id
    }

    /// Fills `buf` from file offset `pos`: `Ok(false)` if the file ends
    /// first (a short file is a bad file, not an I/O error).
    fn read_exact(&self, buf: &mut [u8], pos: u64) -> Result<bool> {
        let mut done = 0;
        let mut pos = i64::try_from(pos).map_err(|_| EINVAL)?;
        while done < buf.len() {
            let rest = &mut buf[done..];
            // SAFETY: We hold a reference to the file; `rest` is writable
            // for its length; `kernel_read()` advances `pos`.
            let n = unsafe {
                bindings::kernel_read(
                    self.0.cast(),
                    rest.as_mut_ptr().cast(),
                    rest.len(),
                    &mut pos,
                )
            };
            match n {
                0 => return Ok(false),
                n if n < 0 => return Err(Error::from_errno(n as i32)),
                n => done += n as usize,
            }
        }
        Ok(true)
    }
}

impl Drop for FileRef {
    fn drop(&mut self) {
        // SAFETY: Drops the reference `unwind_rs_vma_file()` took.
        unsafe { bindings::fput(self.0.cast()) };
    }
}

/// Why a file yields no section.  `None` (not an x86-64 ELF64 file, no
/// `PT_GNU_SFRAME`) and `Bad` (a `PT_GNU_SFRAME` that is unusable) are
/// about the file's bytes and are cached (negative entry); `Io` (a read
/// error, no memory) is not.
enum Miss {
    None,
    Bad,
    Io,
}

impl From<Error> for Miss {
    fn from(_: Error) -> Self {
        Miss::Io
    }
}

/// Reads and validates the SFrame section of `file`.
fn read_sframe(file: &FileRef) -> core::result::Result<Sframe, Miss> {
    let mut eh = [0u8; EHDR_LEN];
    if !file.read_exact(&mut eh, 0)? {
        return Err(Miss::None);
    }
    let ehdr = Ehdr::parse(&eh).map_err(|_| Miss::None)?;
    // At most MAX_PHNUM (64) headers of 56 bytes.
    let mut ph = KVVec::from_elem(0u8, ehdr.phdrs_len(), GFP_KERNEL).map_err(|_| Miss::Io)?;
    if !file.read_exact(&mut ph, ehdr.phoff)? {
        return Err(Miss::None);
    }
    let segs = Segments::parse(&ehdr, &ph).map_err(|_| Miss::None)?;
    let p = segs.sframe.ok_or(Miss::None)?;
    let mut hdr = [0u8; HEADER_LEN];
    if p.filesz < HEADER_LEN as u64 || !file.read_exact(&mut hdr, p.offset)? {
        return Err(Miss::Bad);
    }
    // The header's length, not p_filesz: ld pads the segment.
    let len = sframe::section_len(&hdr).map_err(|_| Miss::Bad)?;
    if len as u64 > p.filesz || len > MAX_SECTION || len > cache::cap() {
        return Err(Miss::Bad);
    }
    let mut data = KVVec::from_elem(0u8, len, GFP_KERNEL).map_err(|_| Miss::Io)?;
    if !file.read_exact(&mut data, p.offset)? {
        return Err(Miss::Bad);
    }
    stats::inc(Stat::SframeReads);
    // The length came from the same header: anything else is a bug.
    if !sframe::Section::new(&data, p.vaddr).is_ok_and(|s| s.len() == len) {
        return Err(Miss::Bad);
    }
    stats::inc(Stat::SframeSections);
    Ok(Sframe {
        segs,
        vaddr: p.vaddr,
        data,
    })
}

/// The cached entry of `file`'s current version, read if needed; `None`
/// on an I/O error or no memory (nothing cached: the next walk retries).
fn entry_of(file: &FileRef) -> Option<Arc<Entry>> {
    let id = file.id();
    if let Some(e) = cache::get(&id) {
        return Some(e);
    }
    let sframe = match read_sframe(file) {
        Ok(s) => Some(s),
        Err(Miss::None) => None,
        Err(Miss::Bad) => {
            stats::inc(Stat::SframeRejects);
            None
        }
        Err(Miss::Io) => return None,
    };
    let e = Arc::new(Entry::new(id, sframe), GFP_KERNEL).ok()?;
    cache::insert(&e);
    Some(e)
}

/// One mapping of a walk: its range and, if its file has a usable
/// section that describes this mapping, the entry and the bias.
struct Mapping {
    start: usize,
    end: usize,
    bias: u64,
    entry: Option<Arc<Entry>>,
}

impl Mapping {
    /// Current's mapping at `ip`; `None` if `ip` is unmapped.
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
        let file = FileRef(file);
        let Some(entry) = entry_of(&file) else {
            return Some(m);
        };
        let off = (v.pgoff as u64).wrapping_mul(PAGE_SIZE);
        if let Some(bias) = entry
            .sframe
            .as_ref()
            .and_then(|s| s.segs.bias(v.start as u64, off))
        {
            m.bias = bias;
            m.entry = Some(entry);
        }
        Some(m)
    }

    /// The SFrame row for `pc` in this mapping, if any.
    fn row(&self, pc: usize) -> Option<Row> {
        let s = self.entry.as_ref()?.sframe.as_ref()?;
        // Validated when cached: O(1).
        let section = sframe::Section::parse(&s.data, s.vaddr).ok()?;
        section
            .lookup((pc as u64).wrapping_sub(self.bias))
            .ok()
            .flatten()
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
}

impl MapSet {
    pub(crate) const fn new() -> Self {
        Self {
            key: NO_KEY,
            maps: [const { None }; MEMO_LEN],
            next: 0,
            last: 0,
        }
    }

    // Rare (the mappings changed): out of the walk's way.
    #[cold]
    #[inline(never)]
    fn clear(&mut self) {
        for m in &mut self.maps {
            *m = None;
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

/// The mappings one walk sees: in place in a [`MapSet`].
pub(crate) struct Memo<'a> {
    set: &'a mut MapSet,
    enabled: bool,
}

impl<'a> Memo<'a> {
    /// A memo for a walk in the current context, in `set`: SFrame is used
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
            .is_some_and(|m| m.start <= pc && pc < m.end)
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
        let i = match set
            .maps
            .iter()
            .position(|m| m.as_ref().is_some_and(|m| m.start <= pc && pc < m.end))
        {
            Some(i) => i,
            None => {
                let m = Mapping::find(pc)?;
                let i = set.next % MEMO_LEN;
                set.maps[i] = Some(m);
                set.next = set.next.wrapping_add(1);
                i
            }
        };
        set.last = i;
        set.maps[i].as_ref()
    }

    /// The SFrame row for user address `pc`, if its mapping has one.
    pub(crate) fn row(&mut self, pc: usize) -> Option<Row> {
        if !self.enabled {
            return None;
        }
        self.mapping(pc)?.row(pc)
    }

    /// The user addresses around `pc` that have no SFrame data (the
    /// mapping of `pc` if it has no section, all of them where SFrame is
    /// not used), as `[lo, hi)`: frame pointers unwind those frames.
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
