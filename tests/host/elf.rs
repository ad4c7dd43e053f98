// SPDX-License-Identifier: GPL-2.0

//! Host tests of the ELF header reader of SFrame discovery
//! (`src/unwind/elf.rs`, compiled in as is): each rule on crafted
//! headers, the bias of ET_EXEC, PIE and odd mappings, and this test
//! program's own mappings (from `/proc/self/maps`) against its own
//! headers, the way the kernel sees a process.

#[path = "../../src/unwind/elf.rs"]
#[allow(dead_code)]
mod elf;

use elf::{
    Ehdr, ElfError, Segments, EHDR_LEN, MAX_PHNUM, PHDR_LEN, PT_GNU_EH_FRAME, PT_GNU_SFRAME,
    PT_LOAD,
};

fn ehdr(e_type: u16, phoff: u64, phnum: u16) -> Vec<u8> {
    let mut b = vec![0u8; EHDR_LEN];
    b[0..4].copy_from_slice(b"\x7fELF");
    b[4] = 2;
    b[5] = 1;
    b[6] = 1;
    b[16..18].copy_from_slice(&e_type.to_le_bytes());
    b[18..20].copy_from_slice(&62u16.to_le_bytes());
    b[32..40].copy_from_slice(&phoff.to_le_bytes());
    b[54..56].copy_from_slice(&(PHDR_LEN as u16).to_le_bytes());
    b[56..58].copy_from_slice(&phnum.to_le_bytes());
    b
}

/// A program header; `PT_LOAD`s are executable (`PF_R | PF_X`), see
/// `data()` for the others.
fn phdr(p_type: u32, offset: u64, vaddr: u64, filesz: u64) -> Vec<u8> {
    let mut b = vec![0u8; PHDR_LEN];
    b[0..4].copy_from_slice(&p_type.to_le_bytes());
    if p_type == PT_LOAD {
        b[4] = 5;
    }
    b[8..16].copy_from_slice(&offset.to_le_bytes());
    b[16..24].copy_from_slice(&vaddr.to_le_bytes());
    b[32..40].copy_from_slice(&filesz.to_le_bytes());
    b
}

/// A non-executable `PT_LOAD` (`PF_R | PF_W`).
fn data(offset: u64, vaddr: u64, filesz: u64) -> Vec<u8> {
    let mut b = phdr(PT_LOAD, offset, vaddr, filesz);
    b[4] = 6;
    b
}

fn segs(e_type: u16, ph: &[Vec<u8>]) -> Segments {
    let h = Ehdr::parse(&ehdr(e_type, 64, ph.len() as u16)).unwrap();
    Segments::parse(&h, &ph.concat()).unwrap()
}

#[test]
fn header_rules() {
    assert_eq!(Ehdr::parse(&ehdr(3, 64, 4)).map(|h| h.phnum), Ok(4));
    assert_eq!(Ehdr::parse(&ehdr(3, 64, 4)[..63]), Err(ElfError::Truncated));
    let mut b = ehdr(3, 64, 4);
    b[1] = b'X';
    assert_eq!(Ehdr::parse(&b), Err(ElfError::BadMagic));
    for (i, v) in [(4, 1), (5, 2), (6, 0)] {
        let mut b = ehdr(3, 64, 4);
        b[i] = v;
        assert_eq!(Ehdr::parse(&b), Err(ElfError::BadIdent), "ident byte {i}");
    }
    assert_eq!(Ehdr::parse(&ehdr(1, 64, 4)), Err(ElfError::BadType));
    assert_eq!(Ehdr::parse(&ehdr(4, 64, 4)), Err(ElfError::BadType));
    let mut b = ehdr(2, 64, 4);
    b[18] = 3;
    assert_eq!(Ehdr::parse(&b), Err(ElfError::BadMachine));
    let mut b = ehdr(2, 64, 4);
    b[54] = 32;
    assert_eq!(Ehdr::parse(&b), Err(ElfError::BadPhentsize));
    assert_eq!(Ehdr::parse(&ehdr(2, 64, 0)), Err(ElfError::BadPhnum));
    assert_eq!(
        Ehdr::parse(&ehdr(2, 64, MAX_PHNUM + 1)),
        Err(ElfError::BadPhnum)
    );
    assert_eq!(
        Ehdr::parse(&ehdr(2, u64::MAX - 8, 1)),
        Err(ElfError::Overflow)
    );
    let h = Ehdr::parse(&ehdr(2, 64, 3)).unwrap();
    assert!(h.exec);
    assert_eq!(h.phdrs_len(), 3 * PHDR_LEN);
    assert_eq!(
        Segments::parse(&h, &vec![0u8; 2 * PHDR_LEN]),
        Err(ElfError::Truncated)
    );
}

#[test]
fn exec_bias_is_zero() {
    // A static non-PIE binary: text at 0x401000 from offset 0x1000.
    let s = segs(
        2,
        &[
            phdr(PT_LOAD, 0, 0x400000, 0x500),
            phdr(PT_LOAD, 0x1000, 0x401000, 0x8000),
            phdr(PT_GNU_SFRAME, 0x9100, 0x409100, 0x300),
        ],
    );
    assert_eq!(s.sframe.map(|p| p.vaddr), Some(0x409100));
    assert_eq!(s.bias(0x401000, 0x1000), Some(0));
    assert_eq!(s.bias(0x400000, 0), Some(0));
    // Mapped elsewhere: not what the headers describe.
    assert_eq!(s.bias(0x501000, 0x1000), None);
    // An offset no PT_LOAD covers.
    assert_eq!(s.bias(0x40a000, 0xa000), None);
}

#[test]
fn pie_and_split_mappings() {
    // A PIE whose data segment starts mid-page (p_offset % align ==
    // p_vaddr % align), loaded at 0x5555_5555_4000.
    let s = segs(
        3,
        &[
            data(0, 0, 0x6f0),
            phdr(PT_LOAD, 0x1000, 0x1000, 0x2345),
            data(0x3db8, 0x4db8, 0x260),
            phdr(PT_GNU_SFRAME, 0x2100, 0x2100, 0x80),
        ],
    );
    let base = 0x5555_5555_4000u64;
    // Only executable segments: the first page is not.
    assert_eq!(s.bias(base, 0), None);
    assert_eq!(s.bias(base + 0x1000, 0x1000), Some(base));
    // A text VMA split by mprotect: its second half keeps the bias.
    assert_eq!(s.bias(base + 0x2000, 0x2000), Some(base));
    // File page 0x3000 holds the end of the text and the start of the
    // data, mapped at 0x3000 and 0x4000: the executable mapping is the
    // text's, whatever address it is at.
    assert_eq!(s.bias(base + 0x3000, 0x3000), Some(base));
    assert_eq!(s.bias(base + 0x4000, 0x3000), Some(base + 0x1000));
    // Not page aligned: a hostile or foreign mapping.
    assert_eq!(s.bias(base + 0x1800, 0x1000), None);
}

#[test]
fn hostile_program_headers() {
    // Overflowing ranges are ignored, as is a second PT_GNU_SFRAME.
    let s = segs(
        3,
        &[
            phdr(PT_LOAD, u64::MAX - 10, 0, 100),
            phdr(PT_GNU_SFRAME, 0x100, u64::MAX - 4, 0x80),
            phdr(PT_GNU_SFRAME, 0x200, 0x200, 0x80),
            phdr(PT_GNU_SFRAME, 0x300, 0x300, 0x80),
            phdr(PT_LOAD, 0, 0, 0),
        ],
    );
    assert_eq!(s.sframe.map(|p| p.offset), Some(0x200));
    assert_eq!(s.bias(0x10000, 0), None);
    // More PT_LOADs than kept: the extra ones are not used.
    let many: Vec<_> = (0..MAX_PHNUM as u64)
        .map(|i| phdr(PT_LOAD, i * 0x1000, i * 0x1000, 0x1000))
        .collect();
    let s = segs(3, &many);
    assert_eq!(s.bias(0x7000_0000, 0), Some(0x7000_0000));
    assert_eq!(s.bias(0x7000_0000 + 40 * 0x1000, 40 * 0x1000), None);
}

/// This program's own mappings, from the kernel's view: every mapping
/// of the executable that is executable gets the same bias, and this
/// function's address minus that bias falls in an executable PT_LOAD.
#[test]
fn own_mappings() {
    let exe = std::fs::read("/proc/self/exe").unwrap();
    let h = Ehdr::parse(&exe).unwrap();
    let start = h.phoff as usize;
    let s = Segments::parse(&h, &exe[start..start + h.phdrs_len()]).unwrap();
    let path = std::fs::read_link("/proc/self/exe").unwrap();
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut biases = vec![];
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || std::path::Path::new(f[5]) != path || !f[1].contains('x') {
            continue;
        }
        let vm_start = u64::from_str_radix(f[0].split('-').next().unwrap(), 16).unwrap();
        let off = u64::from_str_radix(f[2], 16).unwrap();
        biases.push(
            s.bias(vm_start, off)
                .expect("a mapping of the executable without bias"),
        );
    }
    assert!(!biases.is_empty());
    assert!(biases.iter().all(|&b| b == biases[0]), "{biases:x?}");
    let link = (own_mappings as *const () as usize as u64).wrapping_sub(biases[0]);
    assert!(
        s.bias(biases[0] + (link & !0xfff), link & !0xfff).is_some() || h.exec,
        "text not covered"
    );
}

#[test]
fn eh_frame_hdr_and_file_ranges() {
    // A PIE with separate code: headers, text, read-only data holding
    // .eh_frame_hdr and .eh_frame, then data.
    let s = segs(
        3,
        &[
            data(0, 0, 0x6f0),
            phdr(PT_LOAD, 0x1000, 0x1000, 0x2345),
            data(0x4000, 0x4000, 0x1200),
            data(0x5df0, 0x6df0, 0x228),
            phdr(PT_GNU_EH_FRAME, 0x4800, 0x4800, 0x44),
        ],
    );
    assert_eq!(
        s.eh_frame_hdr.map(|p| (p.offset, p.vaddr, p.filesz)),
        Some((0x4800, 0x4800, 0x44))
    );
    assert_eq!(s.sframe, None);
    // .eh_frame right after the header: to the end of its PT_LOAD.
    assert_eq!(s.file_range(0x4848), Some((0x4848, 0x1200 - 0x848)));
    assert_eq!(s.file_range(0x4000), Some((0x4000, 0x1200)));
    assert_eq!(s.file_range(0x51ff), Some((0x51ff, 1)));
    // Past a segment's file bytes, or in no segment.
    assert_eq!(s.file_range(0x5200), None);
    assert_eq!(s.file_range(0x6df0), Some((0x5df0, 0x228)));
    assert_eq!(s.file_range(0x9000), None);
    assert_eq!(s.file_range(u64::MAX), None);
}

/// A section header.
fn shdr(name: u32, kind: u32, addr: u64, offset: u64, size: u64) -> Vec<u8> {
    let mut b = vec![0u8; elf::SHDR_LEN];
    b[0..4].copy_from_slice(&name.to_le_bytes());
    b[4..8].copy_from_slice(&kind.to_le_bytes());
    b[16..24].copy_from_slice(&addr.to_le_bytes());
    b[24..32].copy_from_slice(&offset.to_le_bytes());
    b[32..40].copy_from_slice(&size.to_le_bytes());
    b
}

/// An ELF header with a section header table.
fn ehdr_sh(shoff: u64, shnum: u16, shstrndx: u16) -> Vec<u8> {
    let mut b = ehdr(2, 64, 1);
    b[40..48].copy_from_slice(&shoff.to_le_bytes());
    b[58..60].copy_from_slice(&(elf::SHDR_LEN as u16).to_le_bytes());
    b[60..62].copy_from_slice(&shnum.to_le_bytes());
    b[62..64].copy_from_slice(&shstrndx.to_le_bytes());
    b
}

#[test]
fn sections_are_found_by_name() {
    let names = b"\0.shstrtab\0.eh_frame_hdr\0.eh_frame\0.text\0";
    let h = Ehdr::parse(&ehdr_sh(0x1000, 5, 1)).unwrap();
    assert_eq!((h.shoff, h.shnum, h.shstrndx), (0x1000, 5, 1));
    assert_eq!(h.shdrs_len(), 5 * elf::SHDR_LEN);
    let tab = [
        shdr(0, 0, 0, 0, 0),
        shdr(1, 3, 0, 0x900, names.len() as u64),
        // ".eh_frame_hdr" starts with ".eh_frame": must not match it.
        shdr(11, elf::SHT_PROGBITS, 0x4000, 0x3000, 0x40),
        shdr(25, elf::SHT_PROGBITS, 0x4040, 0x3040, 0x200),
        shdr(35, elf::SHT_PROGBITS, 0x1000, 0x1000, 0x800),
    ]
    .concat();
    let s = elf::find_section(&h, &tab, names, b".eh_frame").unwrap();
    assert_eq!((s.addr, s.offset, s.size), (0x4040, 0x3040, 0x200));
    assert_eq!(
        elf::find_section(&h, &tab, names, b".eh_frame_hdr").map(|s| s.addr),
        Some(0x4000)
    );
    assert_eq!(elf::find_section(&h, &tab, names, b".sframe"), None);
    // A name running off the table, a truncated table.
    assert_eq!(
        elf::find_section(&h, &tab, &names[..30], b".eh_frame"),
        None
    );
    assert_eq!(
        elf::find_section(&h, &tab[..3 * elf::SHDR_LEN], names, b".eh_frame"),
        None
    );
    // Unusable tables are not searched.
    for b in [
        ehdr_sh(0x1000, elf::MAX_SHNUM + 1, 1),
        ehdr_sh(0x1000, 5, 5),
        ehdr_sh(u64::MAX - 100, 5, 1),
    ] {
        assert_eq!(Ehdr::parse(&b).unwrap().shnum, 0);
    }
    let mut b = ehdr_sh(0x1000, 5, 1);
    b[58] = 40;
    assert_eq!(Ehdr::parse(&b).unwrap().shnum, 0);
}
