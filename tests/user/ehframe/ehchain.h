/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A known call chain for the ehframe_* tests: code without frame pointers
 * and without SFrame, described only by .eh_frame (+ .eh_frame_hdr).
 * Every level stores its own return address after its callee returned;
 * the leaf first walks its stack with libgcc's own .eh_frame unwinder
 * (_Unwind_Backtrace: the oracle, down to _start), then asks
 * unwind_test.ko for the stack from inside its syscall, and the program
 * compares both.  Shared by the C program (ehchain.c) and the C++ one
 * (ehcxx.cc), through ehcore.c.
 */
#ifndef _EHCHAIN_H
#define _EHCHAIN_H

#include "../ut.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EH_MAX_DEPTH	1000
#define EH_MAX_FRAMES	4096

struct eh_chain {
	struct ut_unwind req;
	unsigned long cmd;		/* the leaf's ioctl: UT_IOC_UNWIND ... */
	void *arg;			/* ... on &req, or UT_IOC_DEFERRED */
	int fd;
	int no_oracle;			/* code without CFI in the chain */
	long spin;			/* > 0: the leaf loops this long instead */
	int wide;			/* loops of 128 adds, for spin ms of CPU */
	long ret;
	unsigned long leaf_ip;		/* the syscall's return address */
	/* ra[0]: the leaf's; ra[k]: level k's (as many as the chain has) */
	unsigned long ra[EH_MAX_DEPTH + 8];
	/* libgcc's walk from the leaf: [0] is in the leaf, [1] its RA, ... */
	unsigned long oracle[EH_MAX_FRAMES];
	unsigned int oracle_nr;
	/* mixed chains: level d (which stores ra[d + 1]) is level[d % kinds] */
	void (*level[3])(int depth, struct eh_chain *c);
	int kinds;
};

typedef void (*eh_leaf_fn)(struct eh_chain *c);

/* ehcore.c */
void eh_leaf(struct eh_chain *c);
void eh_setup(struct eh_chain *c, int mode);
/*
 * The trace (c->req.nr frames at got) against the chain: frame 0 the
 * syscall, frames 1..nra the recorded return addresses, and unless
 * no_oracle, every frame after 0 equal to the oracle's, the last one in
 * _start.  how: "exact"; "loose" (hostile files: the walk ends cleanly
 * and starts at the leaf); "control" (must NOT be exact).
 */
int eh_check(struct eh_chain *c, const unsigned long long *got, unsigned int nra,
	     const char *how);
extern unsigned long long eh_frames[EH_MAX_FRAMES];
int eh_deferred(struct eh_chain *c, void (*start)(struct eh_chain *, int), int depth,
		int op, unsigned int nra);
int eh_edges(int mode);
int eh_nocfi(int mode);

/* ehlib.c (libehlink.so, libehdl*.so): @depth levels, then @leaf. */
void ehlib_chain(int depth, struct eh_chain *c, eh_leaf_fn leaf);
/* ehfp.c: a frame-pointer level without any CFI (no FDE). */
void ehfp_level(int depth, struct eh_chain *c);
/* ehsf.c: a level with SFrame (--gsframe), for the mixed3 program. */
void ehsf_level(int depth, struct eh_chain *c);
/* ehchain.c: the .eh_frame level of the mixed chains. */
void eh_mixed(int depth, struct eh_chain *c);

/* The body of a mixed level: the leaf, or the next level down. */
static inline __attribute__((always_inline)) void eh_descend(int depth, struct eh_chain *c)
{
	if (depth == 0)
		eh_leaf(c);
	else
		c->level[(depth - 1) % c->kinds](depth - 1, c);
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");	/* no tail call */
}

#ifdef __cplusplus
}
#endif

#endif /* _EHCHAIN_H */
