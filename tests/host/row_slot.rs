// SPDX-License-Identifier: GPL-2.0

//! Host test of the layouts C and Rust share (`src/unwind/row_slot.h`):
//! the header's C decoders (`row_slot_decode.c`, compiled here with the
//! host's `cc`) against Rust's (`Common::unpack`, `Common::cfa`,
//! `row_hash`, `row_find`, `RowSpan::inside`, taking their constants from
//! the same header through bindgen, see `tests/host/run`) on random rows,
//! registers, PCs and memos: what the C loop steps must be what the Rust
//! walk would.
//!
//! Built and run by `tests/host/run` with `rustc --test -O`.

#[path = "../../src/unwind/table/mod.rs"]
#[allow(dead_code, unused_imports)]
mod table;

#[path = "common/rng.rs"]
mod rng;
use rng::Rng;

use std::io::Write;
use std::process::{Command, Stdio};
use table::{row_find, row_hash, Common, RowSlot, RowSpan, ROW_SLOTS, ROW_WAYS};

/// Builds `row_slot_decode.c` and feeds it `input`: its output lines.
fn run_c(input: &str) -> Vec<String> {
    // `file!()` is the path `tests/host/run` passed to rustc.
    let dir = std::path::Path::new(file!()).parent().expect("a directory");
    let exe = std::env::temp_dir().join(format!("row_slot_decode.{}", std::process::id()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let st = Command::new(&cc)
        .args(["-O2", "-Wall", "-Werror", "-o"])
        .arg(&exe)
        .arg(dir.join("row_slot_decode.c"))
        .status()
        .expect("the host's C compiler");
    assert!(st.success(), "{cc} row_slot_decode.c");
    let mut child = Command::new(&exe)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("row_slot_decode");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("its output");
    writer.join().expect("writer").expect("write");
    let _ = std::fs::remove_file(&exe);
    assert!(out.status.success());
    String::from_utf8(out.stdout)
        .expect("text")
        .lines()
        .map(str::to_owned)
        .collect()
}

/// A packed row: mostly what `Common::pack()` makes (offsets near the
/// edges of what it keeps), sometimes any 32 bits.
fn packed(r: &mut Rng) -> u32 {
    if r.below(8) == 0 {
        return r.next() as u32;
    }
    let off = match r.below(4) {
        0 => (r.below(64) as i32 - 32) * 8,
        1 => (1 << 24) - 1 - r.below(64) as i32,
        2 => -(1 << 24) + r.below(64) as i32,
        _ => r.next() as i32 >> 7,
    };
    let fp_slot = [0u8, 2, 3, 6, 15][r.below(5) as usize];
    Common {
        cfa_fp: r.below(2) == 1,
        off,
        fp_slot,
    }
    .pack(r.below(2) == 1)
}

/// A register: small, near the top of the address space, aligned or not.
fn reg(r: &mut Rng) -> u64 {
    match r.below(5) {
        0 => r.below(512),
        1 => u64::MAX - r.below(512),
        2 => 0x7ffd_0000_0000 + r.below(1 << 20) * 8,
        3 => 0x7ffd_0000_0000 + r.below(1 << 20),
        _ => r.next(),
    }
}

#[test]
fn header_decoders_match_rust() {
    const N: usize = 400_000;
    let mut r = Rng(0x1234_5678_9abc_def1);
    let mut cases = Vec::with_capacity(N);
    let mut input = String::new();
    for _ in 0..N {
        let (p, sp, fp) = (packed(&mut r), reg(&mut r), reg(&mut r));
        let pc = if r.below(2) == 0 {
            r.next()
        } else {
            0x5555_0000_0000 + r.below(1 << 24)
        };
        // A span around `pc`, at its edges, empty, reversed or anywhere.
        let (lo, hi) = match r.below(6) {
            0 => (pc.wrapping_sub(r.below(64)), pc.wrapping_add(r.below(64))),
            1 => (pc, pc.wrapping_add(1 + r.below(4))),
            2 => (pc.wrapping_sub(1 + r.below(4)), pc),
            3 => (pc, pc),
            4 => (pc.wrapping_add(r.below(64)), pc.wrapping_sub(r.below(64))),
            _ => (r.next(), r.next()),
        };
        // The slot holding `pc`: its first, another of its set's, or any.
        let held = match r.below(3) {
            0 => row_hash(pc),
            1 => row_hash(pc) ^ (1 + r.below(ROW_WAYS as u64 - 1) as usize),
            _ => r.below(ROW_SLOTS as u64) as usize,
        };
        input.push_str(&format!("{p} {sp} {fp} {pc} {lo} {hi} {held}\n"));
        cases.push((p, sp, fp, pc, lo, hi, held));
    }
    let lines = run_c(&input);
    assert_eq!(lines.len(), N + 1, "one line per row, after the layout");
    let layout = format!(
        "{} {} {} {} {} {} {} {}",
        core::mem::size_of::<RowSlot>(),
        core::mem::offset_of!(RowSlot, map),
        core::mem::offset_of!(RowSlot, flags),
        core::mem::offset_of!(RowSlot, index),
        core::mem::offset_of!(RowSlot, common),
        ROW_SLOTS,
        core::mem::size_of::<RowSpan>(),
        core::mem::offset_of!(RowSpan, row),
    );
    assert_eq!(
        lines[0], layout,
        "struct unwind_rs_row_slot, unwind_rs_row_span"
    );
    let (mut valid, mut stepped, mut inside) = (0usize, 0usize, 0usize);
    let mut found = [0usize; 3];
    for ((p, sp, fp, pc, lo, hi, held), line) in cases.into_iter().zip(&lines[1..]) {
        let mut rows = [RowSlot {
            pc: pc.wrapping_add(1),
            map: 0,
            flags: 0,
            index: 0,
            common: 0,
        }; ROW_SLOTS];
        rows[held].pc = pc;
        let at = row_find(&rows, pc);
        // Found in its first slot, in another of its set, or not at all.
        found[if rows[at].pc != pc {
            2
        } else {
            (at != row_hash(pc)) as usize
        }] += 1;
        let span = RowSpan {
            lo,
            hi,
            row: RowSlot {
                pc: 0,
                map: 0,
                flags: 0,
                index: 0,
                common: 0,
            },
        };
        let ins = span.inside(pc);
        inside += ins as usize;
        let want = match Common::unpack(p) {
            Some((c, eh)) => {
                valid += 1;
                let cfa = c.cfa(sp, fp).unwrap_or(0);
                stepped += (cfa != 0) as usize;
                let span = 8 * u64::from(c.fp_slot.max(1));
                format!(
                    "1 {} {} {} {} {span} {cfa} {} {} {at}",
                    c.cfa_fp as u8,
                    eh as u8,
                    c.fp_slot,
                    c.off,
                    row_hash(pc),
                    ins as u8
                )
            }
            None => format!("0 0 0 0 0 0 0 {} {} {at}", row_hash(pc), ins as u8),
        };
        assert_eq!(
            line, &want,
            "packed {p:#x}, sp {sp:#x}, fp {fp:#x}, pc {pc:#x}, span {lo:#x}..{hi:#x}"
        );
    }
    // The rows must reach every branch: valid and not, stepped and not,
    // inside the span and not.
    assert!(
        valid > N / 2 && stepped > N / 20 && stepped < valid,
        "{valid} {stepped}"
    );
    assert!(inside > N / 10 && inside < N / 2, "{inside}");
    assert!(found.iter().all(|&n| n > N / 10), "{found:?}");
}

#[test]
fn pack_round_trips_through_the_header_constants() {
    let mut r = Rng(7);
    for _ in 0..100_000 {
        let p = packed(&mut r);
        if let Some((c, eh)) = Common::unpack(p) {
            // Bits above the offset's 25 are the offset's sign: any 32
            // bits with bit 0 set decode, and pack back to themselves.
            assert_eq!(c.pack(eh), p, "{p:#x}");
        }
    }
}
