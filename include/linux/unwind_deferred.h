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

/**
 * unwind_user_faultable - the user stack trace of current's kernel entry
 * @trace: filled with the trace: @trace->entries points into the task's
 *	   cache and stays valid until the task returns to user space
 *
 * Walks current's user stack, or returns the trace already taken in this
 * kernel entry (by this call or by the deferred requests' task work).
 * The walk may fault user pages in, take current's mmap lock and read
 * the unwind tables of the mapped files.
 *
 * Context: task context where page faults are allowed: not with
 * preemption, page faults or interrupts disabled, not inside an RCU
 * read-side section, not with current's mmap lock held.
 *
 * Return: 0 on success.
 *	   -EINVAL for a NULL @trace, a kernel thread or user worker, a task
 *	   without user registers or a context that may not fault.
 *	   -ENOMEM if the task's cache cannot be allocated.
 *	   -EBUSY if called from inside a walk of the same task (a fault
 *	   taken by that walk).
 */
int unwind_user_faultable(struct unwind_stacktrace *trace);

/**
 * unwind_deferred_init - register a consumer of deferred user stacks
 * @work: the consumer's descriptor; must stay valid until
 *	  unwind_deferred_cancel() for it has returned
 * @func: the callback, called in task context with the trace and the
 *	  cookie of each kernel entry in which @work requested
 *
 * Takes a free bit of the per-task request mask for @work.  A registered
 * work pins unwind_deferred.ko until it is cancelled.
 *
 * Context: any; does not sleep.
 *
 * Return: 0 on success.
 *	   -EINVAL for a NULL @work or @func.
 *	   -EBUSY if @work is already registered or no bit is left.
 */
int unwind_deferred_init(struct unwind_work *work, unwind_callback_t func);

/**
 * unwind_deferred_request - ask for current's user stack before it
 *			     returns to user space
 * @work: a work registered with unwind_deferred_init()
 * @cookie: gets the cookie of current's kernel entry, the same for every
 *	    caller in this entry; 0 on error
 *
 * The first request of a kernel entry queues the task work, which walks
 * the user stack once, just before the task returns to user space, and
 * calls every work that requested in this entry, each once, with the
 * same trace and @cookie.  Lock-free and allocation-free.
 *
 * Context: any context of a user task: task, IRQ or NMI, interrupts on
 * or off.
 *
 * Return: 0 if the callback was queued.
 *	   1 if @work had already requested in this kernel entry (its
 *	   callback is queued, running or done).
 *	   -EINVAL for a NULL @work or @cookie, a work that is not
 *	   registered (or was cancelled), a kernel thread or user worker, an
 *	   exiting task or a task without user registers.
 *	   The error of task_work_add() (-ESRCH) if the task exits before
 *	   its task work could be queued.
 */
int unwind_deferred_request(struct unwind_work *work, u64 *cookie);

/**
 * unwind_deferred_cancel - unregister a consumer of deferred user stacks
 * @work: a work registered with unwind_deferred_init(); a NULL or
 *	  unregistered work is ignored
 *
 * Waits for requests in flight and running callbacks, then clears the
 * work's bit in every task: no callback for @work runs after this
 * returns, and its bit may be given to another work.  Drops the module
 * reference unwind_deferred_init() took.
 *
 * Context: process context; may sleep.  Not from one of the callbacks
 * (it waits for them).
 */
void unwind_deferred_cancel(struct unwind_work *work);

/**
 * unwind_user_get_cookie - the cookie of current's kernel entry
 *
 * The cookie is non-zero, unique system-wide, and the same for every
 * caller until the task returns to user space; it is the one that
 * unwind_deferred_request() hands out in this entry.  Called from an NMI
 * or from task context with interrupts off, it may make the task
 * re-enter the kernel before it runs a user instruction (as a request
 * from there does), so that the cookie stays this entry's.
 *
 * Context: any context (NMI safe).
 *
 * Return: the cookie, or 0 for a kernel thread or user worker, or when
 * the re-entry cannot be queued (an exiting task).
 */
u64 unwind_user_get_cookie(void);

#endif /* _LINUX_UNWIND_USER_DEFERRED_H */
