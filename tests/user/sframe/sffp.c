// SPDX-License-Identifier: GPL-2.0
/*
 * Frame-pointer code without .sframe (built with -fno-omit-frame-pointer
 * and no --gsframe), linked into the SFrame test program: the walk must
 * switch to frame pointers here and back to SFrame in sf_mixed().
 */
#include "sfchain.h"

__attribute__((noinline)) void sffp_level(int depth, struct sf_chain *c)
{
	sf_mixed(depth - 1, c);
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");	/* no tail call */
}
