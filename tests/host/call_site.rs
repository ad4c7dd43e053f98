// SPDX-License-Identifier: GPL-2.0

//! Host tests of the call-instruction check (`src/unwind/call_site.rs`,
//! compiled in as is): every encoding of a near call, instructions that
//! look alike but are no call, and binutils' `objdump` as the oracle over
//! this machine's own programs (every call it decodes is recognized; few
//! other instruction ends are).

#[path = "../../src/unwind/call_site.rs"]
#[allow(dead_code)]
mod call_site;

use call_site::{ends_in_call, BEFORE};
use std::collections::BTreeMap;
use std::process::Command;

/// `insn` placed just before the return address, after filler bytes.
fn ends(insn: &[u8], fill: u8) -> bool {
    let mut b = [fill; BEFORE];
    b[BEFORE - insn.len()..].copy_from_slice(insn);
    ends_in_call(b)
}

#[test]
fn every_call_form() {
    let calls: &[&[u8]] = &[
        &[0xe8, 1, 2, 3, 4],                      // call rel32
        &[0xff, 0xd0],                            // call *%rax
        &[0x41, 0xff, 0xd3],                      // call *%r11
        &[0x3e, 0xff, 0xd2],                      // notrack call *%rdx
        &[0xff, 0x15, 1, 2, 3, 4],                // call *disp(%rip)
        &[0xff, 0x10],                            // call *(%rax)
        &[0xff, 0x14, 0x24],                      // call *(%rsp)
        &[0xff, 0x14, 0xc5, 1, 2, 3, 4],          // call *disp(,%rax,8)
        &[0xff, 0x50, 0x08],                      // call *8(%rax)
        &[0xff, 0x54, 0x24, 0x08],                // call *8(%rsp)
        &[0xff, 0x90, 1, 2, 3, 4],                // call *disp32(%rax)
        &[0xff, 0x94, 0x24, 1, 2, 3, 4],          // call *disp32(%rsp)
        &[0x41, 0xff, 0x94, 0x24, 1, 2, 3, 4],    // call *disp32(%r12)
        &[0xf2, 0xe8, 1, 2, 3, 4],                // bnd call rel32
    ];
    for c in calls {
        for fill in [0x00, 0x90, 0xcc] {
            assert!(ends(c, fill), "{c:02x?} after {fill:02x}");
        }
    }
}

#[test]
fn look_alikes_are_no_calls() {
    let others: &[&[u8]] = &[
        &[0xc3, 0x0f, 0x1f, 0x80, 0, 0, 0, 0], // ret; nopl: a function's start
        &[0xff, 0xe0],                         // jmp *%rax (FF /4)
        &[0xff, 0x20],                         // jmp *(%rax)
        &[0xff, 0x25, 1, 2, 3, 4],             // jmp *disp(%rip)
        &[0xff, 0x30],                         // push (%rax) (FF /6)
        &[0xff, 0xc0],                         // inc %eax (FF /0)
        &[0xe9, 1, 2, 3, 4],                   // jmp rel32
        &[0xff, 0x14, 0x24, 0x08],             // call *(%rsp) then a byte
        &[0xff, 0x50],                         // call *disp8(%rax), cut short
        &[0xff, 0x15, 1, 2, 3],                // call *disp(%rip), cut short
    ];
    for o in others {
        assert!(!ends(o, 0x90), "{o:02x?}");
    }
    assert!(!ends_in_call([0; BEFORE]));
    assert!(!ends_in_call([0x90; BEFORE]));
}

/// Instructions of `path` as objdump decodes them: address, bytes, and
/// whether it is a call.
fn decode(path: &str) -> Vec<(u64, Vec<u8>, bool)> {
    let out = Command::new("objdump")
        .args(["-d", "-w"])
        .arg(path)
        .output()
        .expect("objdump (binutils, scripts/setup) runs");
    assert!(out.status.success(), "objdump -d {path}");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut v = Vec::new();
    for line in text.lines() {
        // "  1234:\t48 83 ec 08          \tsub    $0x8,%rsp"
        let mut f = line.split('\t');
        let (Some(a), Some(b)) = (f.next(), f.next()) else {
            continue;
        };
        let Some(a) = a.trim().strip_suffix(':') else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(a, 16) else {
            continue;
        };
        let bytes: Option<Vec<u8>> =
            b.split_whitespace().map(|h| u8::from_str_radix(h, 16).ok()).collect();
        let Some(bytes) = bytes.filter(|b| !b.is_empty()) else {
            continue;
        };
        let insn = f.next().unwrap_or("");
        let mnem = insn.split_whitespace().find(|w| !matches!(*w, "notrack" | "bnd" | "rex.W"));
        v.push((addr, bytes, mnem.is_some_and(|m| m.starts_with("call"))));
    }
    v
}

#[test]
fn objdump_agrees_on_this_machines_programs() {
    let mut files = vec!["/bin/sh".to_string(), "/usr/bin/python3".to_string()];
    for l in ["/lib/x86_64-linux-gnu/libc.so.6", "/lib/x86_64-linux-gnu/libm.so.6"] {
        if std::path::Path::new(l).exists() {
            files.push(l.to_string());
        }
    }
    let (mut calls, mut others, mut false_pos) = (0u64, 0u64, 0u64);
    for f in &files {
        let insns = decode(f);
        assert!(insns.len() > 1000, "{f}: {} instructions", insns.len());
        // The bytes by address, to read the 8 before an instruction's end.
        let mut mem = BTreeMap::new();
        for (a, b, _) in &insns {
            for (i, x) in b.iter().enumerate() {
                mem.insert(a + i as u64, *x);
            }
        }
        for (a, b, call) in &insns {
            let end = a + b.len() as u64;
            let before: Option<Vec<u8>> =
                (end - BEFORE as u64..end).map(|x| mem.get(&x).copied()).collect();
            let Some(before) = before else {
                continue;
            };
            let got = ends_in_call(before.try_into().expect("8 bytes"));
            if *call {
                calls += 1;
                assert!(got, "{f}: the call at {a:#x} ({b:02x?}) is not recognized");
            } else {
                others += 1;
                false_pos += u64::from(got);
            }
        }
    }
    println!("{calls} calls recognized; {false_pos} of {others} other instruction ends taken for calls");
    assert!(calls > 1000, "{calls} calls");
    // The table row at the address and the word at SP being that address
    // do the rest; alone, the check must still reject nearly all.
    assert!(false_pos * 50 < others, "{false_pos} of {others}");
}
