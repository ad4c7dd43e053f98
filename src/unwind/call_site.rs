// SPDX-License-Identifier: GPL-2.0

//! Whether a return address follows an x86-64 call instruction: the check
//! of a return address that no unwind table vouches for (`fp.rs`, the
//! topmost frame of code without a row).
//!
//! A near call is `E8 rel32` or `FF /2` (Intel SDM, CALL), the latter with
//! any ModRM form: a register, `[reg]`, `[rip + disp32]`, `[reg + disp8]`,
//! `[reg + disp32]`, with a SIB byte where r/m is 100b (and a disp32 where
//! that SIB's base is 101b under mod 00).  Prefixes (REX, segment) come
//! before the opcode and change nothing after it.  So the call ends at the
//! return address exactly when the opcode sits 5 bytes before it (`E8`) or
//! 2, 3, 4, 6 or 7 bytes before it with a ModRM of that length after it.
//!
//! Pure `core`: `tests/host/call_site.rs` compiles this file as it is.

/// The bytes just before a return address: `[ra - 8, ra)`.
pub(crate) const BEFORE: usize = 8;

/// The length of a ModRM byte `m` with its SIB and displacement; `sib`
/// is the byte after `m`, if known.
fn modrm_len(m: u8, sib: Option<u8>) -> usize {
    let (md, rm) = (m >> 6, m & 7);
    let has_sib = md != 3 && rm == 4;
    let disp = match md {
        0 if rm == 5 => 4,
        0 if has_sib && sib.is_some_and(|s| s & 7 == 5) => 4,
        1 => 1,
        2 => 4,
        _ => 0,
    };
    1 + usize::from(has_sib) + disp
}

/// Whether a call instruction ends at the end of `bytes`, the [`BEFORE`]
/// bytes before a return address.
pub(crate) fn ends_in_call(bytes: [u8; BEFORE]) -> bool {
    if bytes[BEFORE - 5] == 0xe8 {
        return true;
    }
    // `FF /2` whose ModRM part is `len` bytes long.
    [1usize, 2, 3, 5, 6].into_iter().any(|len| {
        let m = bytes[BEFORE - len];
        bytes[BEFORE - len - 1] == 0xff
            && (m >> 3) & 7 == 2
            && modrm_len(m, bytes.get(BEFORE - len + 1).copied()) == len
    })
}
