// SPDX-License-Identifier: GPL-2.0

//! Reading a file's unwind table: in task context, from the file (never
//! from user memory), once per version of the file ([`super::table_cache`]).
//!
//! The ELF header and program headers ([`super::elf`]) say where the
//! sections are.  SFrame first (`PT_GNU_SFRAME`: its header gives its
//! length, at most `p_filesz`), validated with
//! [`sframe::Section::new`]; else `.eh_frame` (`PT_GNU_EH_FRAME` is
//! `.eh_frame_hdr`, whose `eh_frame_ptr` says where `.eh_frame` starts;
//! nothing gives its end, so it is read up to the end of the `PT_LOAD`
//! that holds it); without `PT_GNU_EH_FRAME` (static executables),
//! `.eh_frame` is found by its section header and a header is made for
//! it.  Either is compiled into the engine's form
//! ([`super::table`]) and its bytes freed: only the compiled table is
//! cached, charged to the reader's memory cgroup, within the cap.  A file
//! whose SFrame is unusable falls back to its `.eh_frame`; one with both
//! keeps both, `.eh_frame` for the PCs SFrame does not describe.  A
//! section too large to compile whole is looked up one function at a
//! time instead ([`read_function`], [`super::table_fns`]).

use kernel::alloc::KVVec;
use kernel::bindings;
use kernel::ffi::c_void;
use kernel::prelude::*;
use kernel::sync::Arc;

use super::ehframe::{self, FnRow, Index, LookupError, Source};
use super::elf::{self, Ehdr, Phdr, Segments, EHDR_LEN, MAX_SHSTRTAB};
use super::ffi::{self, FileId, VmaInfo};
use super::sframe::{self, HEADER_LEN};
use super::table::Builder;
use super::table_cache::{self as cache, Compiled, Entry, Kind, Store, Tables};
use super::table_fns::{FnIndex, Functions, MadeHdr, Rules};
use crate::sys::stats::{self, Stat};

/// The largest section read, whatever the cap (clang's are ~9 MiB).
const MAX_SECTION: usize = 32 << 20;
/// The largest `.eh_frame_hdr` read (8 bytes per function: 4 Mi of them).
const MAX_HDR: usize = 32 << 20;
/// The bytes of `.eh_frame_hdr` read before its table: the fixed part
/// (4 bytes and two encoded values of at most 8) fits.
const HDR_HEAD: usize = 32;

/// A reference to a `struct file`, dropped with `fput()`.
///
/// # Invariants
///
/// `self.0` is a non-NULL `struct file` reference this value owns.
pub(crate) struct FileRef(*mut c_void);

impl FileRef {
    /// Takes over the reference `file` (non-NULL) holds.
    ///
    /// # Safety
    ///
    /// `file` is a `struct file` reference the caller owns and gives up.
    pub(crate) unsafe fn new(file: *mut c_void) -> Self {
        Self(file)
    }

    /// The identity of the file's current version.
    fn id(&self) -> FileId {
        let mut id = FileId::default();
        // SAFETY: We hold a reference to the file.
        unsafe { ffi::unwind_rs_file_id(self.0, &mut id) };
        id
    }

    /// Fills `buf` from file offset `pos`: `Ok(false)` if the file ends
    /// first (a short file is a bad file, not an I/O error).
    fn read_exact(&self, buf: &mut [u8], pos: u64) -> Result<bool> {
        Ok(self.read_some(buf, pos)? == buf.len())
    }

    /// Reads from file offset `pos` until `buf` is full or the file ends;
    /// the bytes read.  An offset no file reaches reads nothing: a bad
    /// file (cached as such), not an I/O error to try again at every
    /// lookup.
    fn read_some(&self, buf: &mut [u8], pos: u64) -> Result<usize> {
        let mut done = 0;
        let Some(mut pos) = i64::try_from(pos)
            .ok()
            .filter(|p| i64::try_from(buf.len()).is_ok_and(|l| p.checked_add(l).is_some()))
        else {
            return Ok(0);
        };
        while done < buf.len() {
            let rest = &mut buf[done..];
            // SAFETY: We hold a reference to the file; `rest` is writable
            // for its length.
            let n = unsafe {
                ffi::unwind_rs_file_read(self.0, rest.as_mut_ptr().cast(), rest.len(), pos)
            };
            match n {
                0 => break,
                n if n < 0 => return Err(Error::from_errno(n as i32)),
                n => {
                    done += n as usize;
                    pos += n as i64;
                }
            }
        }
        Ok(done)
    }

    /// `len` bytes from file offset `pos`, or why not.
    fn read_vec(&self, pos: u64, len: usize) -> core::result::Result<KVVec<u8>, Miss> {
        let mut data = KVVec::from_elem(0u8, len, GFP_KERNEL_ACCOUNT).map_err(|_| Miss::Io)?;
        if !self.read_exact(&mut data, pos)? {
            return Err(Miss::Bad);
        }
        Ok(data)
    }
}

impl Drop for FileRef {
    fn drop(&mut self) {
        // SAFETY: Drops the reference `unwind_rs_vma_file()` took.
        unsafe { bindings::fput(self.0.cast()) };
    }
}

/// Why a file yields no table.  `None` (not an x86-64 ELF64 file, no
/// section) and `Bad` (a section that is unusable) are about the file's
/// bytes and are cached (negative entry); `Io` (a read error, no memory,
/// a compile stopped by a fatal signal) is not.
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

/// The file's ELF header and program headers.
#[inline(never)]
fn read_segments(file: &FileRef) -> core::result::Result<(Ehdr, Segments), Miss> {
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
    Ok((ehdr, segs))
}

/// Asked between pieces of a compile: lets other tasks run, and stops
/// the compile once the task is being killed.
fn keep_going() -> bool {
    // SAFETY: Task context that may sleep: compiles follow file reads.
    unsafe { ffi::unwind_rs_table_read_keep_going() }
}

/// Compiles with `f` into a store of at most the cap.
fn build(
    kind: Kind,
    f: impl FnOnce(&mut Builder<Store>) -> core::result::Result<(), Miss>,
) -> core::result::Result<Compiled, Miss> {
    let mut b = Builder::new(Store::new(cache::cap()).map_err(|_| Miss::Io)?);
    f(&mut b)?;
    let (store, base) = b.finish().map_err(|_| Miss::Bad)?;
    Ok(store.finish(kind, base))
}

/// Reads, validates and compiles the SFrame section `p`.
#[inline(never)]
fn read_sframe(file: &FileRef, p: Phdr) -> core::result::Result<Compiled, Miss> {
    let mut hdr = [0u8; HEADER_LEN];
    if p.filesz < HEADER_LEN as u64 || !file.read_exact(&mut hdr, p.offset)? {
        return Err(Miss::Bad);
    }
    // The header's length, not p_filesz: ld pads the segment.
    let len = sframe::section_len(&hdr).map_err(|_| Miss::Bad)?;
    if len as u64 > p.filesz || len > MAX_SECTION {
        return Err(Miss::Bad);
    }
    let data = file.read_vec(p.offset, len)?;
    stats::inc(Stat::SframeReads);
    let section = sframe::Section::new(&data, p.vaddr).map_err(|_| Miss::Bad)?;
    // The length came from the same header: anything else is a bug.
    if section.len() != len {
        return Err(Miss::Bad);
    }
    let t = build(Kind::SFrame, |b| {
        sframe::compile(&section, b, &mut keep_going)
            .map(|_| ())
            .map_err(|e| match e {
                sframe::CompileError::Stopped => Miss::Io,
                _ => Miss::Bad,
            })
    })?;
    stats::inc(Stat::SframeSections);
    Ok(t)
}

/// The index of the SFrame section `p`, whose functions are then read
/// one at a time: its header only is read here.
#[inline(never)]
fn read_sframe_index(
    file: &FileRef,
    segs: &Segments,
    p: Phdr,
) -> core::result::Result<sframe::Index, Miss> {
    let mut hdr = [0u8; HEADER_LEN];
    if p.filesz < HEADER_LEN as u64 || !file.read_exact(&mut hdr, p.offset)? {
        return Err(Miss::Bad);
    }
    let index = sframe::Index::parse(&hdr, p.vaddr, p.filesz).map_err(|_| Miss::Bad)?;
    // Its functions are read where the file maps the section.
    segs.file_range(p.vaddr)
        .filter(|&(_, a)| a >= p.filesz)
        .ok_or(Miss::Bad)?;
    stats::inc(Stat::FnTables);
    Ok(index)
}

/// Why an `.eh_frame` compile failed, as a miss.
fn eh_miss(e: ehframe::EhError) -> Miss {
    match e {
        ehframe::EhError::Stopped => Miss::Io,
        _ => Miss::Bad,
    }
}

/// A file's `.eh_frame`: compiled whole, or to be looked up by function
/// (through a header made here, for a file without one).
enum EhTable {
    Whole(Compiled),
    ByFunction(Index, Option<MadeHdr>),
}

/// The `table_compile_kb` parameter in bytes.
fn compile_limit() -> u64 {
    // SAFETY: Reads a module parameter.
    (unsafe { ffi::unwind_rs_table_compile_kb() } as u64).saturating_mul(1024)
}

/// The `sframe_compile_kb` parameter in bytes.
fn sframe_limit() -> u64 {
    // SAFETY: Reads a module parameter.
    (unsafe { ffi::unwind_rs_sframe_compile_kb() } as u64).saturating_mul(1024)
}

/// Reads `.eh_frame_hdr` (`p`) and `.eh_frame`, and compiles them; or,
/// if what would be read of `.eh_frame` is over `table_compile_kb`, only
/// the header's fixed part: its functions are then read one at a time.
#[inline(never)]
fn read_ehframe(file: &FileRef, segs: &Segments, p: Phdr) -> core::result::Result<EhTable, Miss> {
    let mut head = [0u8; HDR_HEAD];
    let n = usize::try_from(p.filesz).map_or(HDR_HEAD, |l| l.min(HDR_HEAD));
    let head = head.get_mut(..n).ok_or(Miss::Bad)?;
    if !file.read_exact(head, p.offset)? {
        return Err(Miss::Bad);
    }
    let info = ehframe::hdr_info(head, p.vaddr).map_err(|_| Miss::Bad)?;
    let (off, avail) = segs.file_range(info.eh_frame_addr).ok_or(Miss::Bad)?;
    if avail > compile_limit() {
        let index = Index::parse(head, p.vaddr, p.filesz).map_err(|_| Miss::Bad)?;
        // The table is read where the file maps it, as `.eh_frame` is.
        segs.file_range(p.vaddr)
            .filter(|&(_, a)| a >= p.filesz)
            .ok_or(Miss::Bad)?;
        stats::inc(Stat::FnTables);
        return Ok(EhTable::ByFunction(index, None));
    }
    let hlen = usize::try_from(p.filesz).map_err(|_| Miss::Bad)?;
    if hlen > MAX_HDR {
        return Err(Miss::Bad);
    }
    let hdr = file.read_vec(p.offset, hlen)?;
    let len = usize::try_from(avail).map_or(MAX_SECTION, |a| a.min(MAX_SECTION));
    let eh = file.read_vec(off, len)?;
    stats::inc(Stat::EhframeReads);
    let t = build(Kind::EhFrame, |b| {
        ehframe::compile(&hdr, p.vaddr, &eh, info.eh_frame_addr, b, &mut keep_going)
            .map(|_| ())
            .map_err(eh_miss)
    })?;
    stats::inc(Stat::EhframeSections);
    Ok(EhTable::Whole(t))
}

/// `.eh_frame` found by its section header, where no `PT_GNU_EH_FRAME`
/// says where it is (static executables), and its FDEs indexed into a
/// header made here ([`ehframe::synth_hdr_at`]): once, in one pass over
/// the section and a sort, pausing as a compile does.  Over
/// `table_compile_kb` (by default, always) the header is kept, placed
/// past everything the file maps, and the functions are looked up
/// through it; else the section is compiled whole.
#[inline(never)]
fn read_ehframe_section(
    file: &FileRef,
    ehdr: &Ehdr,
    segs: &Segments,
) -> core::result::Result<EhTable, Miss> {
    if ehdr.shnum == 0 {
        return Err(Miss::None);
    }
    let shdrs = file.read_vec(ehdr.shoff, ehdr.shdrs_len())?;
    let names = elf::Shdr::parse(&shdrs, ehdr.shstrndx).map_err(|_| Miss::None)?;
    let names = file.read_vec(names.offset, names.size.min(MAX_SHSTRTAB) as usize)?;
    let sh = elf::find_section(ehdr, &shdrs, &names, b".eh_frame").ok_or(Miss::None)?;
    let len = usize::try_from(sh.size).map_err(|_| Miss::Bad)?;
    if len > MAX_SECTION {
        return Err(Miss::Bad);
    }
    let eh = file.read_vec(sh.offset, len)?;
    stats::inc(Stat::EhframeReads);
    let n = ehframe::count_fdes(&eh, sh.addr, &mut keep_going).ok_or(Miss::Io)?;
    let room = n
        .checked_mul(ehframe::ENTRY_LEN)
        .and_then(|t| t.checked_add(ehframe::SYNTH_HEAD_LEN))
        .filter(|&r| r <= MAX_HDR)
        .ok_or(Miss::Bad)?;
    let mut hdr = KVVec::from_elem(0u8, room, GFP_KERNEL_ACCOUNT).map_err(|_| Miss::Io)?;
    // Past the file's last mapped byte: a lookup's reads there are the
    // header's, the others the file's.  Its offsets are 32-bit: an image
    // of 2 GiB or more is compiled whole.
    let at = segs.end().checked_add(15).map(|a| a & !15);
    let near = at.is_some_and(|a| a.checked_sub(sh.addr).is_some_and(|d| d < 1 << 31));
    let by_function = at.filter(|_| near && sh.size > compile_limit());
    // Compiled whole, the header sits where `.eh_frame` does.
    let hdr_addr = by_function.unwrap_or(sh.addr);
    let hlen = ehframe::synth_hdr_at(&eh, sh.addr, hdr_addr, &mut hdr, &mut keep_going);
    if hlen == 0 {
        return Err(Miss::Io);
    }
    if by_function.is_some() {
        // SAFETY: `hlen <= room`, the length (`synth_hdr_at` writes no
        // more); `u8` needs no drop.
        unsafe { hdr.set_len(hlen) };
        let index = Index::parse(&hdr, hdr_addr, hlen as u64).map_err(|_| Miss::Bad)?;
        stats::inc(Stat::FnTables);
        return Ok(EhTable::ByFunction(index, Some((hdr_addr, hdr))));
    }
    let hdr = hdr.get(..hlen).ok_or(Miss::Bad)?;
    let t = build(Kind::EhFrame, |b| {
        ehframe::compile(hdr, sh.addr, &eh, sh.addr, b, &mut keep_going)
            .map(|_| ())
            .map_err(eh_miss)
    })?;
    stats::inc(Stat::EhframeSections);
    Ok(EhTable::Whole(t))
}

/// The `.eh_frame` table of `file`.
fn read_eh(file: &FileRef, ehdr: &Ehdr, segs: &Segments) -> core::result::Result<EhTable, Miss> {
    match segs.eh_frame_hdr {
        Some(p) => read_ehframe(file, segs, p),
        None => read_ehframe_section(file, ehdr, segs),
    }
    .inspect_err(|e| {
        if matches!(e, Miss::Bad) {
            stats::inc(Stat::EhframeRejects);
        }
    })
}

/// The tables of `file`: SFrame, with `.eh_frame` for what SFrame does
/// not describe; else `.eh_frame` alone.  A section over
/// `sframe_compile_kb` is not compiled: the file's `.eh_frame` serves
/// instead, looked up one function at a time (through a header made for
/// it if the file has none), or, if it is missing or unusable, the
/// SFrame section is, through its FDE array.  No file is compiled whole
/// for being large.
#[inline(never)]
fn read_tables(file: &FileRef, ehdr: &Ehdr, segs: &Segments) -> core::result::Result<Tables, Miss> {
    let tables = |table, eh: Option<EhTable>| -> core::result::Result<Tables, Miss> {
        let (fallback, fns) = match eh {
            Some(EhTable::Whole(c)) => (Some(c), None),
            Some(EhTable::ByFunction(i, made)) => (
                None,
                Some(Functions::new(FnIndex::EhFrame(i), made).map_err(|_| Miss::Io)?),
            ),
            None => (None, None),
        };
        Ok(Tables {
            table,
            fallback,
            fns,
        })
    };
    let eh_only = |eh| match eh {
        EhTable::Whole(c) => tables(c, None),
        eh => tables(Compiled::empty(Kind::EhFrame), Some(eh)),
    };
    if let Some(p) = segs.sframe {
        // Too large to compile: `.eh_frame` by function, if it is usable.
        let large = p.filesz > sframe_limit();
        if large {
            match read_eh(file, ehdr, segs) {
                Ok(eh) => return eh_only(eh),
                Err(Miss::Io) => return Err(Miss::Io),
                Err(Miss::None | Miss::Bad) => {}
            }
        }
        if large {
            match read_sframe_index(file, segs, p) {
                Ok(i) => {
                    let fns = Functions::new(FnIndex::Sframe(i), None).map_err(|_| Miss::Io)?;
                    return Ok(Tables {
                        table: Compiled::empty(Kind::SFrame),
                        fallback: None,
                        fns: Some(fns),
                    });
                }
                Err(Miss::Bad) => stats::inc(Stat::SframeRejects),
                Err(Miss::None) => {}
                Err(Miss::Io) => return Err(Miss::Io),
            }
            return Err(Miss::Bad);
        }
        match read_sframe(file, p) {
            Ok(sf) => {
                let eh = match read_eh(file, ehdr, segs) {
                    Ok(eh) => Some(eh),
                    Err(Miss::None | Miss::Bad) => None,
                    Err(Miss::Io) => return Err(Miss::Io),
                };
                return tables(sf, eh);
            }
            Err(Miss::Bad) => stats::inc(Stat::SframeRejects),
            Err(Miss::None) => {}
            Err(Miss::Io) => return Err(Miss::Io),
        }
    }
    eh_only(read_eh(file, ehdr, segs)?)
}

/// The mutex held while a file's tables are read and cached.
///
/// # Invariants
///
/// The value exists only while its holder holds the mutex.
struct Reading(());

impl Reading {
    /// Waits for the mutex; `None` if current is killed meanwhile.
    /// Task context that may sleep.
    fn lock() -> Option<Self> {
        // SAFETY: Task context that may sleep: only walks that may fault
        // read files.
        let taken = unsafe { ffi::unwind_rs_table_read_lock() };
        // Made only if taken: a value made and dropped would unlock.
        taken.then(|| Reading(()))
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        // SAFETY: Held (the type invariant).
        unsafe { ffi::unwind_rs_table_read_unlock() };
    }
}

/// The cached entry of `file`'s current version, read if needed, with
/// its tables pinned for this walk (`None` for a negative entry); `None`
/// on an I/O error or no memory (nothing cached: the next walk retries).
/// Out of line, as what it calls: a deferred walk runs deep in the
/// kernel stack, and reading a file needs some of it.
#[inline(never)]
pub(crate) fn entry_of(
    file: &FileRef,
    cached_only: bool,
) -> Option<(Arc<Entry>, Option<Arc<Tables>>)> {
    let id = file.id();
    if let Some(e) = cache::get(&id, cached_only) {
        let pin = e.pin();
        // Evicted between the lookup and the pin: read the file again.
        if pin.is_some() || !e.usable {
            return Some((e, pin));
        }
    }
    if cached_only {
        return None;
    }
    // One reader: tasks that miss the same file at once read it once; the
    // others wait for it and find it cached.
    let _reading = Reading::lock()?;
    if let Some(e) = cache::get(&id, false) {
        let pin = e.pin();
        if pin.is_some() || !e.usable {
            stats::inc(Stat::TableReadWaits);
            return Some((e, pin));
        }
    }
    let (ehdr, segs) = match read_segments(file) {
        Ok(h) => h,
        Err(Miss::Io) => return None,
        Err(Miss::None | Miss::Bad) => return insert(id, &Segments::EMPTY, None),
    };
    match read_tables(file, &ehdr, &segs) {
        Ok(t) => insert(id, &segs, Some(t)),
        Err(Miss::None | Miss::Bad) => insert(id, &segs, None),
        Err(Miss::Io) => None,
    }
}

/// Caches a new entry, its tables pinned first (an entry the cache does
/// not keep loses them at once); returns both.  If another task cached
/// the same version meanwhile, its entry and tables (while it has them),
/// so that their walks share one set of functions.
#[inline(never)]
fn insert(
    id: FileId,
    segs: &Segments,
    tables: Option<Tables>,
) -> Option<(Arc<Entry>, Option<Arc<Tables>>)> {
    let e = Entry::new(id, *segs, tables).ok()?;
    let pin = e.pin();
    if let Some(first) = cache::insert(&e) {
        if let Some(p) = first.pin() {
            return Some((first, Some(p)));
        }
    }
    Some((e, pin))
}

/// What a lookup by function reads of the file at once (aligned): a
/// probe's entry and those near it, an FDE's length and, usually, its
/// bytes; larger reads (the search's final block) go on their own.
const WINDOW: usize = 256;
const _: () = assert!(WINDOW.is_power_of_two());

/// A file's bytes by link-time address, through its `PT_LOAD`s.
struct FileSource<'a> {
    file: &'a FileRef,
    segs: &'a Segments,
    /// A header made for the file (its address and bytes): reads there
    /// are answered from it.
    made: Option<(u64, &'a [u8])>,
    /// The last [`WINDOW`] bytes of the file read: `win[..win_len]` is at
    /// file offset `win_off`.  An FDE's length and then its bytes, and
    /// the last probes of a search, come from one read: with the file's
    /// first probes kept (`Functions::reading`), about 10 reads a miss
    /// in a file of 100,000 functions, 5 in libc.
    win: &'a mut [u8],
    win_off: u64,
    win_len: usize,
}

impl ehframe::Source for FileSource<'_> {
    fn read(&mut self, addr: u64, buf: &mut [u8]) -> bool {
        if let Some((at, hdr)) = self.made {
            if let Some(off) = addr.checked_sub(at).and_then(|o| usize::try_from(o).ok()) {
                return copy_at(hdr, off, buf);
            }
        }
        let Some((off, avail)) = self.segs.file_range(addr) else {
            return false;
        };
        let Some(end) = off.checked_add(buf.len() as u64) else {
            return false;
        };
        if buf.len() as u64 > avail {
            return false;
        }
        let within = |o: u64, l: usize| off >= o && end <= o.saturating_add(l as u64);
        if !within(self.win_off, self.win_len) {
            if buf.len() > self.win.len() {
                return matches!(self.file.read_exact(buf, off), Ok(true));
            }
            // The window around `off`, or from `off` if it would not fit.
            let mut at = off & !(WINDOW as u64 - 1);
            if end > at.saturating_add(self.win.len() as u64) {
                at = off;
            }
            self.win_len = 0;
            let Ok(n) = self.file.read_some(self.win, at) else {
                return false;
            };
            (self.win_off, self.win_len) = (at, n);
            if !within(at, n) {
                return false;
            }
        }
        copy_at(self.win, (off - self.win_off) as usize, buf)
    }
}

/// Fills `buf` from `src` at `off`; false if `src` does not hold it all.
fn copy_at(src: &[u8], off: usize, buf: &mut [u8]) -> bool {
    match off.checked_add(buf.len()).and_then(|end| src.get(off..end)) {
        Some(bytes) => {
            buf.copy_from_slice(bytes);
            true
        }
        None => false,
    }
}

/// The rules at `link` (a link-time address of the file mapped at `ip`)
/// read from the file by function ([`ehframe::lookup`],
/// [`sframe::lookup_function`]), the function kept in `fns`; `None` if
/// it cannot be read, or describes no function there (frame pointers
/// then).  Task context that may sleep: it reads the file (the one
/// `entry` describes, else nothing).  Out of line: it needs stack for
/// the file reads.
#[inline(never)]
pub(crate) fn read_function(
    ip: usize,
    entry: &Entry,
    tables: &Tables,
    fns: &Functions,
    link: u64,
) -> Option<(Rules, bool)> {
    // One reader per file: threads that miss the same function wait for
    // the first and find its rows, never read N copies; misses of other
    // functions of the file wait one bounded lookup each.
    let mut probes = fns.reading.lock();
    if let Some(r) = fns.row(link) {
        stats::inc(Stat::FnWaits);
        return Some(r);
    }
    let mut v = VmaInfo::default();
    // SAFETY: Task context that may sleep (only walks that may fault read
    // files); `v` is writable; a non-NULL result is a reference we own.
    let file = unsafe { ffi::unwind_rs_vma_file(ip, &mut v, false) };
    if file.is_null() {
        return None;
    }
    // SAFETY: A non-NULL reference we own (above).
    let file = unsafe { FileRef::new(file) };
    // The mapping was replaced since the walk looked it up.
    if file.id() != entry.id {
        return None;
    }
    let mut win = KVVec::from_elem(0u8, WINDOW, GFP_KERNEL).ok()?;
    let mut src = FileSource {
        file: &file,
        segs: &entry.segs,
        made: fns.made.as_ref().map(|(a, h)| (*a, &h[..])),
        win: &mut win,
        win_off: 0,
        win_len: 0,
    };
    stats::inc(Stat::FnReads);
    let memo = &mut *probes;
    let (start, end, rep, rows, n, bad) = match &fns.index {
        FnIndex::EhFrame(index) => eh_function(index, &mut src, link, memo)?,
        FnIndex::Sframe(index) => sframe_function(index, &mut src, link, memo)?,
    };
    if bad {
        // Kept all the same, as a range without rows (frame pointers
        // there), so that it is not read again at each meeting.
        stats::inc(Stat::FnRejects);
    }
    // A file keeps at most half the cap in functions: it lets go of its
    // own oldest first, not the cache of the whole file.
    let (r, evicted) = fns
        .insert(start, end, rep, rows.get(..n)?, link, cache::cap() / 2)
        .ok()?;
    stats::add(Stat::FnEvictions, evicted as u64);
    // What the file's functions hold now counts against the cap.
    cache::recharge(entry, tables.held());
    Some(r)
}

/// A function read for [`read_function`]: `[start, end)`, its block size
/// (see `table_fns::Function`), its rows (the first so many of the
/// vector), and whether it was refused for its bytes (kept without rows,
/// as a range with none, so that it is not read again at each meeting).
type ReadFn = (u64, u64, u32, KVVec<FnRow>, usize, bool);

/// The `.eh_frame` function at `link`; `None` if it cannot be read.
fn eh_function(
    index: &Index,
    src: &mut FileSource<'_>,
    link: u64,
    memo: &mut [Option<(u64, u64)>],
) -> Option<ReadFn> {
    // Small buffers first (nearly every function fits them), the full
    // sizes for the rest: what is zeroed per miss stays small.
    let mut r = Err(LookupError::Short);
    let mut kept = None;
    let mut hole = None;
    for (len, n) in [
        (ehframe::SMALL_SCRATCH_LEN, ehframe::SMALL_ROWS),
        (ehframe::SCRATCH_LEN, ehframe::MAX_FN_ROWS),
    ] {
        if r != Err(LookupError::Short) {
            break;
        }
        let mut scratch = KVVec::from_elem(0u8, len, GFP_KERNEL).ok()?;
        let none = FnRow {
            off: 0,
            row: None,
            plt: None,
        };
        let mut rows = KVVec::from_elem(none, n, GFP_KERNEL).ok()?;
        let mut steps = 0;
        r = ehframe::lookup(
            index,
            src,
            link,
            &mut scratch,
            &mut rows,
            &mut steps,
            &mut hole,
            memo,
        );
        kept = Some(rows);
    }
    let rows = kept?;
    match r {
        Ok(f) => Some((f.start, f.end, 0, rows, f.rows, false)),
        Err(e) => {
            // No FDE there is code without CFI, not a bad file.
            let bad = !matches!(e, LookupError::Read | LookupError::NotFound);
            let (a, b) = hole?;
            Some((a, b, 0, rows, 0, bad))
        }
    }
}

/// The SFrame function at `link`; `None` if it cannot be read.
fn sframe_function(
    index: &sframe::Index,
    src: &mut FileSource<'_>,
    link: u64,
    memo: &mut [Option<(u64, u64)>],
) -> Option<ReadFn> {
    use sframe::LookupError as E;
    let mut r = Err(E::Short);
    let mut rows = KVVec::new();
    let mut hole = None;
    for len in [sframe::SMALL_SCRATCH_LEN, sframe::SCRATCH_LEN] {
        if r != Err(E::Short) {
            break;
        }
        let mut scratch = KVVec::from_elem(0u8, len, GFP_KERNEL).ok()?;
        rows = KVVec::new();
        let mut steps = 0;
        // Equal neighbours merge, as the engine's builder merges them.
        let mut sink = |off: u32, row| {
            if rows.last().is_some_and(|r: &FnRow| r.row == Some(row)) {
                return true;
            }
            let r = FnRow {
                off,
                row: Some(row),
                plt: None,
            };
            rows.push(r, GFP_KERNEL).is_ok()
        };
        r = sframe::lookup_function(
            index,
            &mut |a, b| src.read(a, b),
            link,
            &mut scratch,
            &mut steps,
            &mut hole,
            memo,
            &mut sink,
        );
    }
    let n = rows.len();
    match r {
        Ok(f) => Some((f.start, f.end, f.rep, rows, n, false)),
        Err(e) => {
            let bad = matches!(e, E::Fde(_) | E::TooBig);
            let (a, b) = hole?;
            Some((a, b, 0, rows, 0, bad))
        }
    }
}
