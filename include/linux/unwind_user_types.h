/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_TYPES_H
#define _LINUX_UNWIND_USER_TYPES_H

/*
 * Types of the user-space unwinder exported by unwind_deferred.ko, with
 * the names of the Linux 6.17 interface.  The layouts are shared with
 * the Rust implementation: do not reorder.
 */

#include <linux/bits.h>
#include <linux/types.h>

enum unwind_user_type {
	UNWIND_USER_TYPE_NONE		= 0,
	/* x86-64 frame pointers: [fp] = caller's fp, [fp + 8] = return address */
	UNWIND_USER_TYPE_FP		= BIT(0),
	/* IA32 emulation: 4-byte slots, CS/SS segment bases applied */
	UNWIND_USER_TYPE_COMPAT_FP	= BIT(1),
	/* x86-64 SFrame (.sframe, PT_GNU_SFRAME), found from the mapped file */
	UNWIND_USER_TYPE_SFRAME		= BIT(2),
};

/**
 * struct unwind_stacktrace - a user stack trace
 * @nr: number of valid entries
 * @entries: return addresses, innermost (the user IP) first
 */
struct unwind_stacktrace {
	unsigned int	nr;
	unsigned long	*entries;
};

/**
 * struct unwind_user_state - iterator over the frames of current's user stack
 * @ip: instruction pointer of the current frame
 * @sp: stack pointer (canonical frame address of the previous frame)
 * @fp: frame pointer of the current frame
 * @cs_base: code segment base (compat only)
 * @ss_base: stack segment base (compat only)
 * @current_type: how the current frame was reached (the caller's step)
 * @ws: word size of a stack slot in bytes
 * @done: no more frames
 * @topmost: the current frame is the interrupted one (its IP is exact)
 */
struct unwind_user_state {
	unsigned long		ip;
	unsigned long		sp;
	unsigned long		fp;
	unsigned long		cs_base;
	unsigned long		ss_base;
	enum unwind_user_type	current_type;
	unsigned int		ws;
	bool			done;
	bool			topmost;
};

#endif /* _LINUX_UNWIND_USER_TYPES_H */
