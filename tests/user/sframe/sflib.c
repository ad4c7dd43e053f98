// SPDX-License-Identifier: GPL-2.0
/*
 * The shared library of the sframe_* tests, built three times: linked
 * (libsflink.so), dlopen'd (libsfdl.so) and dlopen'd with other code at
 * the same place (libsfdl2.so, -DSF_SHIFT: a function before the chain
 * moves it).
 */
#include "sfchain.h"

#ifdef SF_SHIFT
__attribute__((noinline, used)) void sflib_pad(void)
{
	asm volatile(".fill 1000, 1, 0x90" ::: "memory");
}
#endif

__attribute__((noinline)) void sflib_chain(int depth, struct sf_chain *c, sf_leaf_fn leaf)
{
	if (depth == 0)
		leaf(c);
	else
		sflib_chain(depth - 1, c, leaf);
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");	/* no tail call */
}
