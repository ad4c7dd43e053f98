/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A known call chain across SFrame and frame-pointer code, for the
 * sframe_* tests: every function stores its own return address after its
 * callee returned, the leaf asks unwind_test.ko for the stack from inside
 * its syscall, and the program compares.
 */
#ifndef _SFCHAIN_H
#define _SFCHAIN_H

#include "../ut.h"

#define SF_MAX_DEPTH	1000

struct sf_chain {
	struct ut_unwind req;
	unsigned long cmd;		/* the leaf's ioctl: UT_IOC_UNWIND ... */
	void *arg;			/* ... on &req, or UT_IOC_DEFERRED */
	int fd;
	long spin;			/* > 0: the leaf loops this long instead */
	long ret;
	unsigned long leaf_ip;		/* the syscall's return address */
	/* ra[0]: the leaf's; ra[k], 1 <= k <= depth: chain level k's;
	 * ra[depth + 1]: the function that started the chain. */
	unsigned long ra[SF_MAX_DEPTH + 2];
};

typedef void (*sf_leaf_fn)(struct sf_chain *c);

/* sflib.c (libsflink.so, libsfdl*.so): a chain of @depth levels in the
 * library, then @leaf (the program's). */
void sflib_chain(int depth, struct sf_chain *c, sf_leaf_fn leaf);
void sflib_pad(void);

/* Mixed chains: level d (which stores ra[d + 1]) is sf_mixed() (SFrame)
 * for even d, sffp_level() (sffp.c: frame pointers, no .sframe) for odd
 * d; level 0 calls the leaf. */
void sffp_level(int depth, struct sf_chain *c);
void sf_mixed(int depth, struct sf_chain *c);

#endif /* _SFCHAIN_H */
