// SPDX-License-Identifier: GPL-2.0
/*
 * The C decoders of src/unwind/row_slot.h, compiled on the host for
 * tests/host/row_slot.rs: first the slot's and the span's layouts, then
 * for each input line "packed sp fp pc lo hi" one line "valid cfa_fp eh
 * fp_slot off span cfa hash inside", as the C loop
 * (src/unwind/user_loops.c) would see that row, and whether @pc is
 * inside the span [lo, hi).
 */
#include <stddef.h>
#include <stdio.h>

#include "../../src/unwind/row_slot.h"

int main(void)
{
	struct unwind_rs_row_span s = { 0 };
	unsigned long sp, fp, pc;
	unsigned int p;

	printf("%zu %zu %zu %zu %zu %d %zu %zu\n", sizeof(struct unwind_rs_row_slot),
	       offsetof(struct unwind_rs_row_slot, map),
	       offsetof(struct unwind_rs_row_slot, flags),
	       offsetof(struct unwind_rs_row_slot, index),
	       offsetof(struct unwind_rs_row_slot, common), UNWIND_RS_ROW_SLOTS,
	       sizeof(struct unwind_rs_row_span),
	       offsetof(struct unwind_rs_row_span, row));
	while (scanf("%u %lu %lu %lu %lu %lu", &p, &sp, &fp, &pc, &s.lo, &s.hi) == 6) {
		struct unwind_rs_common c = { 0 };
		int valid = unwind_rs_common_unpack(p, &c);
		unsigned long cfa = valid ? unwind_rs_common_cfa(c.off, c.cfa_fp, sp, fp) : 0;

		printf("%d %d %u %u %ld %lu %lu %u %d\n", valid, c.cfa_fp, c.eh,
		       c.fp_slot, c.off, c.span, cfa, unwind_rs_row_hash(pc),
		       unwind_rs_span_inside(&s, pc));
	}
	return 0;
}
