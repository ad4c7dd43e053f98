/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A walk's row memo and the common form of a row, declared once: the C
 * loop (user_loops.c) includes this header, and Rust takes its constants
 * and its struct through bindgen (Kbuild and tests/host/run write them to
 * $UNWIND_RS_GEN/row_slot.rs, src/unwind/table/layout.rs includes that).
 * Kernel-free, plain C types only, so that tests/host/row_slot.rs
 * compiles the decoders below on the host and compares them with Rust's
 * (src/unwind/table/common.rs, layout.rs) on random rows.
 */
#ifndef _UNWIND_RS_ROW_SLOT_H
#define _UNWIND_RS_ROW_SLOT_H

/* The C loop's decoders are always inlined; the host test's may be. */
#ifndef __always_inline
#define __always_inline inline
#endif

/*
 * The slots of a walk's row memo, in sets of UNWIND_RS_ROW_WAYS: a PC's row
 * is in one slot of the set of unwind_rs_row_hash() (unwind_rs_row_find()).
 * The hash multiplies by 2^64 / phi and keeps the top bits, so that the
 * return addresses of neighbouring code spread over the sets.
 */
#define UNWIND_RS_ROW_BITS		5
#define UNWIND_RS_ROW_SLOTS		(1 << UNWIND_RS_ROW_BITS)
#define UNWIND_RS_ROW_WAYS		4
#define UNWIND_RS_ROW_MULT		0x9e3779b97f4a7c15UL

/* unwind_rs_row_slot.flags */
#define UNWIND_RS_SLOT_FALLBACK		0x1	/* the row is from the entry's fallback table */
#define UNWIND_RS_SLOT_STARTS		0x2	/* an entry of the table starts at the PC */
#define UNWIND_RS_SLOT_OUTERMOST	0x4	/* the outermost frame: RA undefined */
#define UNWIND_RS_SLOT_NO_INDEX		0x8	/* from a file's functions: no index */

/*
 * unwind_rs_row_slot.common: a row of the common form packed, 0 for a row
 * of another form.  CFA = (FP if CFA_FP, else SP) + OFF (the bits from
 * OFF_SHIFT up, signed), the return address at CFA - 8, the caller's FP at
 * CFA - 8 * FP_SLOT (2 to 15), or unchanged (0); EH: from .eh_frame.
 */
#define UNWIND_RS_COMMON_VALID		0x1
#define UNWIND_RS_COMMON_CFA_FP		0x2
#define UNWIND_RS_COMMON_EH		0x4
#define UNWIND_RS_COMMON_FP_SLOT_SHIFT	3
#define UNWIND_RS_COMMON_FP_SLOT_MASK	0xf
#define UNWIND_RS_COMMON_OFF_SHIFT	7

/* The lowest CFA a frame may have: room for every slot below it. */
#define UNWIND_RS_CFA_MIN		(8 * 16)

/* One slot of a walk's row memo (src/unwind/table_find.rs RowSlot). */
struct unwind_rs_row_slot {
	unsigned long pc;	/* the PC looked up; 0: none */
	unsigned char map;	/* the slot of its mapping */
	unsigned char flags;	/* UNWIND_RS_SLOT_* */
	unsigned short index;	/* the row's index in that mapping's table */
	unsigned int common;	/* UNWIND_RS_COMMON_*, 0: not common */
};

/*
 * The stretch [lo, hi) of user addresses around a walk's last topmost IP
 * that a table looked up: one row of the common form holds there, @row
 * (as the memo keeps a slot, without UNWIND_RS_SLOT_STARTS), and the
 * rules change only at @lo.  lo == hi: none.
 */
struct unwind_rs_row_span {
	unsigned long lo;
	unsigned long hi;
	struct unwind_rs_row_slot row;
};

/* A row of the common form, unpacked. */
struct unwind_rs_common {
	long off;
	unsigned long span;	/* the slots' span below the CFA */
	unsigned int fp_slot;
	unsigned int eh;
	int cfa_fp;
};

/* The memo's first slot for @pc (64-bit @pc, as the kernel's). */
static __always_inline unsigned int unwind_rs_row_hash(unsigned long pc)
{
	return (pc * UNWIND_RS_ROW_MULT) >> (64 - UNWIND_RS_ROW_BITS);
}

/*
 * The slot of @rows (UNWIND_RS_ROW_SLOTS) that holds @pc's row if one of
 * its set does, its first slot first: rows whose PCs hash alike all stay,
 * up to UNWIND_RS_ROW_WAYS of them (a walk that repeats a stack finds each
 * of its rows again); else the first slot, which does not hold it either.
 */
static __always_inline unsigned int unwind_rs_row_find(const struct unwind_rs_row_slot *rows,
						       unsigned long pc)
{
	unsigned int h = unwind_rs_row_hash(pc), i;

	for (i = 0; i < UNWIND_RS_ROW_WAYS; i++)
		if (rows[h ^ i].pc == pc)
			return h ^ i;
	return h;
}

/*
 * Whether @pc is in @s past its first address: there the span's row is
 * @pc's, and no entry starts at @pc.
 */
static __always_inline int unwind_rs_span_inside(const struct unwind_rs_row_span *s,
						 unsigned long pc)
{
	return pc > s->lo && pc < s->hi;
}

/* Unpacks @p into @c: false for 0 (no row of the common form). */
static __always_inline int unwind_rs_common_unpack(unsigned int p,
						   struct unwind_rs_common *c)
{
	if (!(p & UNWIND_RS_COMMON_VALID))
		return 0;
	c->cfa_fp = !!(p & UNWIND_RS_COMMON_CFA_FP);
	c->eh = !!(p & UNWIND_RS_COMMON_EH);
	c->fp_slot = (p >> UNWIND_RS_COMMON_FP_SLOT_SHIFT) & UNWIND_RS_COMMON_FP_SLOT_MASK;
	c->off = (int)p >> UNWIND_RS_COMMON_OFF_SHIFT;
	c->span = 8 * (c->fp_slot ? c->fp_slot : 1);
	return 1;
}

/*
 * The CFA of a frame at @sp, @fp by the rule (@off, @cfa_fp), or 0 where
 * it fails table::step()'s checks: no overflow, above SP, 8-byte aligned,
 * and room for the slots below it (Common::cfa()).  The rule comes in
 * registers: read through a struct it would be reloaded after every store.
 */
static __always_inline unsigned long
unwind_rs_common_cfa(long off, int cfa_fp, unsigned long sp, unsigned long fp)
{
	unsigned long base = cfa_fp ? fp : sp, cfa = base + off;

	if ((off >= 0 ? cfa < base : cfa > base) || cfa <= sp ||
	    (cfa & 7) || cfa < UNWIND_RS_CFA_MIN)
		return 0;
	return cfa;
}

#endif /* _UNWIND_RS_ROW_SLOT_H */
