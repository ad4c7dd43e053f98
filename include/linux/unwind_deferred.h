/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_DEFERRED_H
#define _LINUX_UNWIND_USER_DEFERRED_H

/*
 * Deferred unwinding of user-space stack traces, provided by
 * unwind_deferred.ko with the names and semantics of Linux 6.17.
 *
 * A tracer registers a struct unwind_work once.  From any context,
 * NMI included, it calls unwind_deferred_request() for the current
 * task and records the returned cookie with its kernel-side sample.
 * Before the task returns to user space its user stack is walked once
 * and every work that asked in this kernel entry gets its callback,
 * in task context, with the trace and the same cookie.
 */

#include <linux/bits.h>
#include <linux/list.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/unwind_user.h>
#include <linux/unwind_deferred_types.h>

struct unwind_work;

typedef void (*unwind_callback_t)(struct unwind_work *work,
				  struct unwind_stacktrace *trace, u64 cookie);

/**
 * struct unwind_work - a registered consumer of deferred user stacks
 * @list: reserved
 * @func: the callback
 * @bit: the consumer's bit in the per-task request mask, -1 once cancelled
 */
struct unwind_work {
	struct list_head	list;
	unwind_callback_t	func;
	int			bit;
};

/* Bits of the per-task mask used by the unwinder itself. */
enum {
	UNWIND_PENDING_BIT = 0,
	UNWIND_USED_BIT,
	UNWIND_RESERVED_BITS,
};

#define UNWIND_PENDING	BIT(UNWIND_PENDING_BIT)
#define UNWIND_USED	BIT(UNWIND_USED_BIT)

/* Entries in one cache page. */
#define UNWIND_MAX_ENTRIES \
	((SZ_4K - sizeof(struct unwind_cache)) / sizeof(long))

/*
 * Unwind current's user stack, or return the trace already taken in
 * this kernel entry.  trace->entries points into the task's cache and
 * stays valid until the task returns to user space.  Task context only.
 * Returns 0, -EINVAL (NULL trace, kernel thread, no user regs or a
 * context that may not fault) or -ENOMEM.
 */
int unwind_user_faultable(struct unwind_stacktrace *trace);

/*
 * Take a free bit for @work.  Returns 0, -EINVAL for a NULL work or
 * func, -EBUSY when @work is already registered or no bit is left.
 * A registered work pins unwind_deferred.ko until it is cancelled.
 */
int unwind_deferred_init(struct unwind_work *work, unwind_callback_t func);

/*
 * Ask for current's user stack before it returns to user space.  NMI
 * safe.  *cookie gets the cookie of this kernel entry (0 on error).
 * Returns 0 when the work was queued, 1 when it was already queued or
 * done for this entry, -EINVAL for a NULL argument, a work that is not
 * registered (or was cancelled), a kernel thread, an exiting task or a
 * task without user registers.
 */
int unwind_deferred_request(struct unwind_work *work, u64 *cookie);

/*
 * Remove @work: waits for running callbacks and clears its bit in every
 * task, so no callback for it runs after this returns.  May sleep.
 * A NULL or unregistered work is ignored.
 */
void unwind_deferred_cancel(struct unwind_work *work);

/*
 * The cookie of current's kernel entry: non-zero, unique system-wide,
 * the same for every caller until the task returns to user space.
 * NMI safe.  0 for a kernel thread.
 */
u64 unwind_user_get_cookie(void);

#endif /* _LINUX_UNWIND_USER_DEFERRED_H */
