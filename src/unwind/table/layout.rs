// SPDX-License-Identifier: GPL-2.0

//! The layouts that C and Rust share, declared once in
//! `src/unwind/row_slot.h`: a walk's row memo (slot count, hash, slot and
//! its flag bits) and the packed common form of a row.  bindgen writes the
//! header's constants and struct into `$UNWIND_RS_GEN/row_slot.rs` when
//! the module is built (`Kbuild`) and when the host tests are
//! (`tests/host/run`); this file gives them Rust types.  Pure `core`.

#[allow(non_camel_case_types, dead_code, unreachable_pub)]
mod generated {
    include!(concat!(env!("UNWIND_RS_GEN"), "/row_slot.rs"));
}

use generated as g;

/// One slot of a walk's row memo (`struct unwind_rs_row_slot`).
pub use g::unwind_rs_row_slot as RowSlot;

/// The stretch of code around a walk's last topmost IP that has one row
/// (`struct unwind_rs_row_span`).
pub use g::unwind_rs_row_span as RowSpan;

impl RowSpan {
    /// Whether `pc` is in the span past its first address
    /// (`unwind_rs_span_inside()`): there the span's row is `pc`'s, and
    /// no entry starts at `pc`.
    #[inline(always)]
    pub fn inside(&self, pc: u64) -> bool {
        pc > self.lo && pc < self.hi
    }
}

/// The slots of a walk's row memo.
pub const ROW_SLOTS: usize = g::UNWIND_RS_ROW_SLOTS as usize;
/// The slots of one set: a PC's row is in one of its set's.
pub const ROW_WAYS: usize = g::UNWIND_RS_ROW_WAYS as usize;
/// `RowSlot::flags`: the row is from the entry's fallback table.
pub const SLOT_FALLBACK: u8 = g::UNWIND_RS_SLOT_FALLBACK as u8;
/// `RowSlot::flags`: an entry of the table starts at the PC.
pub const SLOT_STARTS: u8 = g::UNWIND_RS_SLOT_STARTS as u8;
/// `RowSlot::flags`: the outermost frame (RA undefined).
pub const SLOT_OUTERMOST: u8 = g::UNWIND_RS_SLOT_OUTERMOST as u8;
/// `RowSlot::flags`: kept from a file's functions, with no index into a
/// table (only the common form or `SLOT_OUTERMOST` says what it is).
pub const SLOT_NO_INDEX: u8 = g::UNWIND_RS_SLOT_NO_INDEX as u8;

/// A packed common row is valid (0 is none).
pub const COMMON_VALID: u32 = g::UNWIND_RS_COMMON_VALID;
/// A packed common row's CFA is FP + offset (else SP + offset).
pub const COMMON_CFA_FP: u32 = g::UNWIND_RS_COMMON_CFA_FP;
/// A packed common row came from `.eh_frame` (the caller's tag bit).
pub const COMMON_EH: u32 = g::UNWIND_RS_COMMON_EH;
/// Where a packed common row keeps its FP slot, and how many bits.
pub const COMMON_FP_SLOT_SHIFT: u32 = g::UNWIND_RS_COMMON_FP_SLOT_SHIFT;
pub const COMMON_FP_SLOT_MASK: u32 = g::UNWIND_RS_COMMON_FP_SLOT_MASK;
/// The bits of a packed common row below its (signed) offset.
pub const COMMON_OFF_SHIFT: u32 = g::UNWIND_RS_COMMON_OFF_SHIFT;
/// The lowest CFA a frame may have: room for every slot below it.
pub const CFA_MIN: u64 = g::UNWIND_RS_CFA_MIN as u64;

const _: () = {
    assert!(g::UNWIND_RS_SLOT_NO_INDEX <= u8::MAX as u32);
    assert!(ROW_SLOTS.is_power_of_two() && ROW_SLOTS <= 256);
    assert!(ROW_SLOTS == 1 << g::UNWIND_RS_ROW_BITS && g::UNWIND_RS_ROW_BITS < 64);
    assert!(ROW_WAYS.is_power_of_two() && ROW_WAYS <= ROW_SLOTS);
    assert!(COMMON_FP_SLOT_MASK == 15 && COMMON_OFF_SHIFT > COMMON_FP_SLOT_SHIFT + 3);
};

/// The row memo's first slot for `pc` (`unwind_rs_row_hash()`).
#[inline(always)]
pub fn row_hash(pc: u64) -> usize {
    // bindgen makes the multiplier an i64: the same 64 bits.
    (pc.wrapping_mul(g::UNWIND_RS_ROW_MULT as u64) >> (64 - g::UNWIND_RS_ROW_BITS)) as usize
}

/// The slot of `rows` that holds `pc`'s row if one of its set does, else
/// its first slot (`unwind_rs_row_find()`).
#[inline(always)]
pub fn row_find(rows: &[RowSlot; ROW_SLOTS], pc: u64) -> usize {
    let h = row_hash(pc);
    (0..ROW_WAYS)
        .map(|i| h ^ i)
        .find(|&k| rows[k].pc == pc)
        .unwrap_or(h)
}
