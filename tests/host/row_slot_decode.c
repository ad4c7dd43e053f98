// SPDX-License-Identifier: GPL-2.0
/*
 * The C decoders of src/unwind/row_slot.h, compiled on the host for
 * tests/host/row_slot.rs: first the slot's and the span's layouts, then
 * for each input line "packed sp fp pc lo hi held" one line "valid cfa_fp
 * eh fp_slot off span cfa hash inside found", as the C loop
 * (src/unwind/user_loops.c) would see that row, whether @pc is inside the
 * span [lo, hi), and the slot unwind_rs_row_find() gives for @pc in a
 * memo whose slot held (0 to 31) holds @pc, each other slot @pc + 1.
 */
#include <stddef.h>
#include <stdio.h>

#include "../../src/unwind/row_slot.h"

int main(void)
{
	struct unwind_rs_row_span s = { 0 };
	struct unwind_rs_row_slot rows[UNWIND_RS_ROW_SLOTS];
	unsigned long sp, fp, pc;
	unsigned int p, held, i;

	printf("%zu %zu %zu %zu %zu %d %zu %zu\n", sizeof(struct unwind_rs_row_slot),
	       offsetof(struct unwind_rs_row_slot, map),
	       offsetof(struct unwind_rs_row_slot, flags),
	       offsetof(struct unwind_rs_row_slot, index),
	       offsetof(struct unwind_rs_row_slot, common), UNWIND_RS_ROW_SLOTS,
	       sizeof(struct unwind_rs_row_span),
	       offsetof(struct unwind_rs_row_span, row));
	while (scanf("%u %lu %lu %lu %lu %lu %u", &p, &sp, &fp, &pc, &s.lo, &s.hi, &held) == 7) {
		struct unwind_rs_common c = { 0 };
		int valid = unwind_rs_common_unpack(p, &c);
		unsigned long cfa = valid ? unwind_rs_common_cfa(c.off, c.cfa_fp, sp, fp) : 0;

		for (i = 0; i < UNWIND_RS_ROW_SLOTS; i++)
			rows[i].pc = i == held ? pc : pc + 1;
		printf("%d %d %u %u %ld %lu %lu %u %d %u\n", valid, c.cfa_fp, c.eh,
		       c.fp_slot, c.off, c.span, cfa, unwind_rs_row_hash(pc),
		       unwind_rs_span_inside(&s, pc), unwind_rs_row_find(rows, pc));
	}
	return 0;
}
