// SPDX-License-Identifier: GPL-2.0

//! The little of ELF that unwind-table discovery needs, in pure `core`
//! Rust (no kernel dependency: `tests/host/elf.rs` compiles this file as
//! is).
//!
//! From a file's ELF header and program headers: where `PT_GNU_SFRAME`
//! and `PT_GNU_EH_FRAME` are (file offset, link-time address, size) and
//! the `PT_LOAD`s, from which the load bias of a mapping follows and
//! where `.eh_frame` is in the file.  Only ELF64 x86-64
//! executables and shared objects are accepted; every field is checked
//! and every computation is overflow-checked, since the file is
//! untrusted (any user can map any file executable).

/// The ELF header's size (ELF64).
pub const EHDR_LEN: usize = 64;
/// A program header's size (ELF64).
pub const PHDR_LEN: usize = 56;
/// More program headers than any linker emits: the rest of a file with
/// more is not looked at.
pub const MAX_PHNUM: u16 = 64;
/// The size of a section header.
pub const SHDR_LEN: usize = 64;
/// The most section headers searched (ld writes about 30 to 40).
pub const MAX_SHNUM: u16 = 256;
/// The longest section-name table read.
pub const MAX_SHSTRTAB: u64 = 64 << 10;
/// `SHT_PROGBITS`.
pub const SHT_PROGBITS: u32 = 1;
/// `PT_LOAD`s remembered per file (ld emits 4 or 5).
pub const MAX_LOADS: usize = 8;
/// x86-64's page size: mappings start at page-aligned file offsets.
pub const PAGE_SIZE: u64 = 4096;

/// `PT_LOAD`.
pub const PT_LOAD: u32 = 1;
/// `PT_GNU_SFRAME`, which 6.12's uapi headers lack.
pub const PT_GNU_SFRAME: u32 = 0x6474_e554;
/// `PT_GNU_EH_FRAME`: the `.eh_frame_hdr` section.
pub const PT_GNU_EH_FRAME: u32 = 0x6474_e550;
/// `p_flags`' execute bit.
pub const PF_X: u32 = 1;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const EM_X86_64: u16 = 62;

/// Why a file's headers were refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElfError {
    /// Shorter than the header or the program header table.
    Truncated,
    /// Not `\x7fELF`.
    BadMagic,
    /// Not ELFCLASS64, little-endian, version 1.
    BadIdent,
    /// Neither `ET_EXEC` nor `ET_DYN`.
    BadType,
    /// Not x86-64.
    BadMachine,
    /// `e_phentsize` is not 56.
    BadPhentsize,
    /// No program headers, or more than [`MAX_PHNUM`].
    BadPhnum,
    /// An offset computation overflowed.
    Overflow,
}

fn u16_at(b: &[u8], off: usize) -> Result<u16, ElfError> {
    let s = b.get(off..off.wrapping_add(2)).ok_or(ElfError::Truncated)?;
    Ok(u16::from_le_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], off: usize) -> Result<u32, ElfError> {
    let s = b.get(off..off.wrapping_add(4)).ok_or(ElfError::Truncated)?;
    Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], off: usize) -> Result<u64, ElfError> {
    let s = b.get(off..off.wrapping_add(8)).ok_or(ElfError::Truncated)?;
    let mut w = [0u8; 8];
    w.copy_from_slice(s);
    Ok(u64::from_le_bytes(w))
}

/// The checked ELF header: what is needed to find the program headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ehdr {
    /// `ET_EXEC` (bias must be 0) rather than `ET_DYN`.
    pub exec: bool,
    /// The file offset of the program header table.
    pub phoff: u64,
    /// The number of program headers (1 to [`MAX_PHNUM`]).
    pub phnum: u16,
    /// The file offset of the section header table (0: none).
    pub shoff: u64,
    /// The number of section headers (0 when there are more than
    /// [`MAX_SHNUM`]: such files are not searched).
    pub shnum: u16,
    /// The index of the section-name string table.
    pub shstrndx: u16,
}

impl Ehdr {
    /// Parses and checks the first [`EHDR_LEN`] bytes of a file.
    pub fn parse(b: &[u8]) -> Result<Ehdr, ElfError> {
        if b.len() < EHDR_LEN {
            return Err(ElfError::Truncated);
        }
        if b[0..4] != [0x7f, b'E', b'L', b'F'] {
            return Err(ElfError::BadMagic);
        }
        // ELFCLASS64, ELFDATA2LSB, EV_CURRENT.
        if b[4] != 2 || b[5] != 1 || b[6] != 1 {
            return Err(ElfError::BadIdent);
        }
        let exec = match u16_at(b, 16)? {
            ET_EXEC => true,
            ET_DYN => false,
            _ => return Err(ElfError::BadType),
        };
        if u16_at(b, 18)? != EM_X86_64 {
            return Err(ElfError::BadMachine);
        }
        if u16_at(b, 54)? as usize != PHDR_LEN {
            return Err(ElfError::BadPhentsize);
        }
        let phnum = u16_at(b, 56)?;
        if phnum == 0 || phnum > MAX_PHNUM {
            return Err(ElfError::BadPhnum);
        }
        let phoff = u64_at(b, 32)?;
        // The table's end must be representable: it is read from the file.
        phoff
            .checked_add(phnum as u64 * PHDR_LEN as u64)
            .ok_or(ElfError::Overflow)?;
        let shoff = u64_at(b, 40)?;
        let mut shnum = u16_at(b, 60)?;
        let shstrndx = u16_at(b, 62)?;
        // Only needed to find `.eh_frame` where no `PT_GNU_EH_FRAME` says
        // where it is: a table that cannot be used is simply not used.
        if u16_at(b, 58)? as usize != SHDR_LEN
            || shnum > MAX_SHNUM
            || shstrndx >= shnum
            || shoff.checked_add(shnum as u64 * SHDR_LEN as u64).is_none()
        {
            shnum = 0;
        }
        Ok(Ehdr {
            exec,
            phoff,
            phnum,
            shoff,
            shnum,
            shstrndx,
        })
    }

    /// The size of the section header table in bytes (at most
    /// `MAX_SHNUM * SHDR_LEN`).
    pub const fn shdrs_len(&self) -> usize {
        self.shnum as usize * SHDR_LEN
    }

    /// The size of the program header table in bytes (at most
    /// `MAX_PHNUM * PHDR_LEN`).
    pub const fn phdrs_len(&self) -> usize {
        self.phnum as usize * PHDR_LEN
    }
}

/// One program header's fields that matter here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Phdr {
    /// `p_offset`: where the segment starts in the file.
    pub offset: u64,
    /// `p_vaddr`: its link-time address.
    pub vaddr: u64,
    /// `p_filesz`: its size in the file.
    pub filesz: u64,
    /// `PF_X`: the segment is mapped executable.
    pub exec: bool,
}

/// What discovery keeps of a file's program headers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segments {
    /// `ET_EXEC`: the only valid bias is 0.
    pub exec: bool,
    /// The first `PT_GNU_SFRAME`, if any (size at least the SFrame
    /// header is not checked here).
    pub sframe: Option<Phdr>,
    /// The first `PT_GNU_EH_FRAME` (`.eh_frame_hdr`), if any.
    pub eh_frame_hdr: Option<Phdr>,
    loads: [Phdr; MAX_LOADS],
    nloads: usize,
}

impl Segments {
    /// No segments (a file that is not one this module reads).
    pub const EMPTY: Segments = Segments {
        exec: false,
        sframe: None,
        eh_frame_hdr: None,
        loads: [Phdr {
            offset: 0,
            vaddr: 0,
            filesz: 0,
            exec: false,
        }; MAX_LOADS],
        nloads: 0,
    };

    /// Reads the program header table `phdrs` (`ehdr.phdrs_len()` bytes
    /// from `ehdr.phoff`).  Segments whose file range overflows are
    /// ignored; `PT_LOAD`s past the first [`MAX_LOADS`] too.
    pub fn parse(ehdr: &Ehdr, phdrs: &[u8]) -> Result<Segments, ElfError> {
        let mut s = Segments {
            exec: ehdr.exec,
            sframe: None,
            eh_frame_hdr: None,
            loads: [Phdr::default(); MAX_LOADS],
            nloads: 0,
        };
        if phdrs.len() < ehdr.phdrs_len() {
            return Err(ElfError::Truncated);
        }
        for i in 0..ehdr.phnum as usize {
            let at = i * PHDR_LEN;
            let p_type = u32_at(phdrs, at)?;
            let p = Phdr {
                offset: u64_at(phdrs, at + 8)?,
                vaddr: u64_at(phdrs, at + 16)?,
                filesz: u64_at(phdrs, at + 32)?,
                exec: u32_at(phdrs, at + 4)? & PF_X != 0,
            };
            if p.offset.checked_add(p.filesz).is_none() || p.vaddr.checked_add(p.filesz).is_none() {
                continue;
            }
            match p_type {
                PT_LOAD if s.nloads < MAX_LOADS && p.filesz != 0 => {
                    s.loads[s.nloads] = p;
                    s.nloads += 1;
                }
                PT_GNU_SFRAME if s.sframe.is_none() => s.sframe = Some(p),
                PT_GNU_EH_FRAME if s.eh_frame_hdr.is_none() => s.eh_frame_hdr = Some(p),
                _ => {}
            }
        }
        Ok(s)
    }

    /// The load bias of an executable mapping of this file at
    /// `vm_start` of file offset `file_off` (page aligned): the
    /// executable `PT_LOAD` whose file range (from its page) holds
    /// `file_off` was mapped there, so
    /// `bias = vm_start - file_off + p_offset - p_vaddr`.  Only `PF_X`
    /// segments count: the last page of one segment is often the first
    /// of the next (mapped twice, at different addresses), and only the
    /// executable one is mapped executable.  `None` when no such
    /// `PT_LOAD` covers the offset, or when the result is not page
    /// aligned, or non-zero for `ET_EXEC`: the mapping is not the one
    /// the headers describe.  Addresses wrap (a bias is modular).
    pub fn bias(&self, vm_start: u64, file_off: u64) -> Option<u64> {
        let p = self.loads[..self.nloads].iter().find(|p| {
            let first = p.offset & !(PAGE_SIZE - 1);
            // filesz != 0 and offset + filesz does not overflow (parse).
            p.exec && first <= file_off && file_off < p.offset + p.filesz
        })?;
        let bias = vm_start
            .wrapping_sub(file_off)
            .wrapping_add(p.offset)
            .wrapping_sub(p.vaddr);
        if bias % PAGE_SIZE != 0 || (self.exec && bias != 0) {
            return None;
        }
        Some(bias)
    }

    /// Past the highest byte any `PT_LOAD` maps from the file (by
    /// link-time address): nothing of the file is read there.
    pub fn end(&self) -> u64 {
        self.loads[..self.nloads]
            .iter()
            .map(|p| p.vaddr.saturating_add(p.filesz))
            .max()
            .unwrap_or(0)
    }

    /// Where link-time address `vaddr` is in the file: the file offset
    /// and the number of bytes from there to the end of the `PT_LOAD`
    /// that holds it (`.eh_frame`, which no program header bounds, ends
    /// at the latest there).  `None` if no `PT_LOAD` holds it.
    pub fn file_range(&self, vaddr: u64) -> Option<(u64, u64)> {
        let p = self.loads[..self.nloads]
            .iter()
            .find(|p| p.vaddr <= vaddr && vaddr - p.vaddr < p.filesz)?;
        // vaddr - p.vaddr < filesz and offset + filesz does not overflow.
        let into = vaddr - p.vaddr;
        Some((p.offset + into, p.filesz - into))
    }
}

/// One section header's fields that matter here.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shdr {
    /// `sh_name`: the offset of its name in the section-name table.
    pub name: u32,
    /// `sh_type`.
    pub kind: u32,
    /// `sh_addr`: its link-time address.
    pub addr: u64,
    /// `sh_offset`: where it is in the file.
    pub offset: u64,
    /// `sh_size`.
    pub size: u64,
}

impl Shdr {
    /// Section header `i` of the table `shdrs` (`ehdr.shdrs_len()` bytes
    /// from `ehdr.shoff`).
    pub fn parse(shdrs: &[u8], i: u16) -> Result<Shdr, ElfError> {
        let at = i as usize * SHDR_LEN;
        let h = Shdr {
            name: u32_at(shdrs, at)?,
            kind: u32_at(shdrs, at + 4)?,
            addr: u64_at(shdrs, at + 16)?,
            offset: u64_at(shdrs, at + 24)?,
            size: u64_at(shdrs, at + 32)?,
        };
        if h.offset.checked_add(h.size).is_none() || h.addr.checked_add(h.size).is_none() {
            return Err(ElfError::Overflow);
        }
        Ok(h)
    }
}

/// The first `SHT_PROGBITS` section named `name` with an address, in the
/// section header table `shdrs` whose name table is `names`.
pub fn find_section(ehdr: &Ehdr, shdrs: &[u8], names: &[u8], name: &[u8]) -> Option<Shdr> {
    (0..ehdr.shnum).find_map(|i| {
        let h = Shdr::parse(shdrs, i).ok()?;
        let at = h.name as usize;
        let end = at.checked_add(name.len())?;
        (h.kind == SHT_PROGBITS
            && h.addr != 0
            && names.get(at..end) == Some(name)
            && names.get(end) == Some(&0))
        .then_some(h)
    })
}
