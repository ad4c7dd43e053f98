/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A known call chain for tests that check unwound frames:
 * chain_a() -> chain_b() -> chain_leaf().  The including program defines
 * chain_leaf(), which must store its own return address in chain_ra[0];
 * chain_b() and chain_a() store theirs in chain_ra[1] and chain_ra[2].
 */
#ifndef _UT_CHAIN_H
#define _UT_CHAIN_H

static volatile unsigned long chain_ra[3];

static void chain_leaf(void);

static __attribute__((noinline)) void chain_b(void)
{
	chain_leaf();
	chain_ra[1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");	/* no tail call */
}

static __attribute__((noinline)) void chain_a(void)
{
	chain_b();
	chain_ra[2] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

#endif /* _UT_CHAIN_H */
