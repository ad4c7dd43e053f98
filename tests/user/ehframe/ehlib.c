// SPDX-License-Identifier: GPL-2.0
/*
 * The shared library of the ehframe_* tests, built three times: linked
 * (libehlink.so), dlopen'd (libehdl.so) and dlopen'd with other code at
 * the same place (libehdl2.so, -DEH_SHIFT: a function before the chain
 * moves it).
 */
#include "ehchain.h"

#ifdef EH_SHIFT
__attribute__((noinline, used)) void ehlib_pad(void)
{
	asm volatile(".fill 1000, 1, 0x90" ::: "memory");
}
#endif

__attribute__((noinline)) void ehlib_chain(int depth, struct eh_chain *c, eh_leaf_fn leaf)
{
	if (depth == 0)
		leaf(c);
	else
		ehlib_chain(depth - 1, c, leaf);
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");	/* no tail call */
}
