// SPDX-License-Identifier: GPL-2.0
/*
 * A level with SFrame (-Wa,--gsframe, no frame pointer), linked with the
 * .eh_frame-only levels into ehchain-mixed3: a file with a partial
 * .sframe, where the walk takes SFrame's row here and .eh_frame's
 * elsewhere (per frame: SFrame, then .eh_frame, then frame pointers).
 */
#include "ehchain.h"

__attribute__((noinline)) void ehsf_level(int depth, struct eh_chain *c)
{
	eh_descend(depth, c);
}
