// SPDX-License-Identifier: GPL-2.0
/*
 * Frame-pointer code without any CFI (built with -fno-omit-frame-pointer
 * -fno-asynchronous-unwind-tables -fno-unwind-tables: no FDE covers it),
 * linked into the ehframe programs: the walk must switch to frame
 * pointers here, and back to .eh_frame in the next level.
 */
#include "ehchain.h"

__attribute__((noinline)) void ehfp_level(int depth, struct eh_chain *c)
{
	eh_descend(depth, c);
}
