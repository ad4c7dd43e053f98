/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_H
#define _LINUX_UNWIND_USER_H

#include <linux/unwind_user_types.h>

/*
 * Walk the user stack of current.  Reads user memory with faults
 * allowed: call from task context only.  A walk stops cleanly, keeping
 * what it has, at a zero, misaligned, non-increasing, non-user or
 * unreadable frame pointer, or when max_entries is reached.
 *
 * unwind_user() returns 0 (also for a kernel thread, with nr == 0), or
 * -EINVAL for a NULL trace, no entries buffer, max_entries == 0 or a
 * context that may not fault.
 */
int unwind_user(struct unwind_stacktrace *trace, unsigned int max_entries);

/* Iteration underneath unwind_user(): 0, or -EINVAL when done. */
int unwind_user_start(struct unwind_user_state *state);
int unwind_user_next(struct unwind_user_state *state);

#define for_each_user_frame(state) \
	for (unwind_user_start(state); !(state)->done; unwind_user_next(state))

#endif /* _LINUX_UNWIND_USER_H */
