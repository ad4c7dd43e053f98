/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface between unwind_test.ko and the user test programs:
 * ioctls on /sys/kernel/debug/unwind_test/ctl.  Same layout for 64-bit
 * and 32-bit callers.
 */
#ifndef _UNWIND_TEST_UAPI_H
#define _UNWIND_TEST_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* How UT_IOC_UNWIND walks the caller's stack. */
enum ut_mode {
	UT_MODE_UNWIND_USER = 0,	/* unwind_user() */
	UT_MODE_ITERATE = 1,		/* for_each_user_frame() */
	UT_MODE_FAULTABLE = 2,		/* unwind_user_faultable() */
	UT_MODE_FAULTABLE_TWICE = 3,	/* twice in one entry: cache hit */
	UT_MODE_UNWIND_USER_RCU = 4,	/* unwind_user() in rcu_read_lock() */
	UT_MODE_UNWIND_USER_MMAP = 5,	/* unwind_user(), current's mmap lock held */
};

struct ut_unwind {
	__u32 max;		/* in: room in entries (may be 0) */
	__u32 mode;		/* in: enum ut_mode */
	__u32 nr;		/* out: frames returned */
	__s32 ret;		/* out: return value of the API call */
	__u64 entries;		/* in: user address of __u64[max] */
	__u64 null_trace;	/* in: pass a NULL trace / NULL entries */
};

#define UT_IOC_UNWIND		_IOWR('u', 1, struct ut_unwind)

#define UT_NWORKS	4	/* works registered while the module is loaded */
#define UT_TRACE_MAX	64	/* frames kept per callback */

/* Operations of UT_IOC_DEFERRED. */
enum ut_op {
	UT_OP_RESET = 0,	/* forget all results */
	UT_OP_REQUEST,		/* request on @works, @count times each, in this syscall */
	UT_OP_REQUEST_NMI,	/* the same, from a self-NMI during this syscall */
	UT_OP_REQUEST_IRQ,	/* from an hrtimer on this CPU @arg us later, for this task */
	UT_OP_IRQ_RESULT,	/* what the hrtimer's request returned (ret 1: not yet) */
	UT_OP_RESULT,		/* callbacks of work @arg: struct ut_result at @ptr */
	UT_OP_GET_COOKIE,	/* unwind_user_get_cookie() twice: cookie, ret 0 if equal */
	UT_OP_ERRORS,		/* argument checks of the API: ret = failed checks */
	UT_OP_MASK,		/* take every free bit: ret = bits taken, see test */
	UT_OP_CANCEL_SLEEP,	/* request on the cancel work and @works, sleep @arg ms */
	UT_OP_CANCEL,		/* cancel the cancel work (and re-init it later) */
	UT_OP_CANCEL_INIT,	/* (re)register the cancel work */
	UT_OP_CONTEXT_ERRORS,	/* calls from a kthread and from IRQ: ret = failures */
	UT_OP_STRESS,		/* see struct ut_stress */
	UT_OP_BUSY_KTHREAD,	/* a kthread spins on CPU 0 for @arg ms: ret = its pid */
	UT_OP_REQUEST_SIGNAL,	/* UT_OP_REQUEST, then SIGUSR1 to current */
};

struct ut_deferred {
	__u32 op;
	__u32 works;		/* bitmask of works 0..UT_NWORKS-1 */
	__u32 count;
	__u32 arg;
	__s32 ret;		/* op result, or the first request's return */
	__s32 rets[UT_NWORKS];	/* each work's last request return */
	__u32 cookies_differ;	/* requests in this op whose cookie differed */
	__u64 cookie;		/* cookie of the first request */
	__u64 ptr;		/* user pointer for UT_OP_RESULT / UT_OP_STRESS */
	__u32 direct_nr;	/* a direct unwind_user() in the same entry */
	__u32 pad;
	__u64 direct[UT_TRACE_MAX];
};

/* One work's callbacks since UT_OP_RESET. */
struct ut_result {
	__u64 callbacks;
	__u64 cookie;		/* of the last callback */
	__u64 bad_after_cancel;	/* callbacks that ran after cancel returned */
	__s32 pid;		/* task of the last callback */
	__u32 exiting;		/* the last callback ran in the exit path */
	__u32 nr;		/* frames of the last trace */
	__u32 matches_direct;	/* last trace == direct unwind of its request */
	__s32 exit_request;	/* a request made from the exit-path callback */
	__u32 pad;
	__u64 entries[UT_TRACE_MAX];
};

/* UT_OP_STRESS, @ptr points here. */
struct ut_stress {
	__u32 seconds;
	__u32 pad;
	__u64 requests;		/* out: successful requests (0 or 1) */
	__u64 irq_requests;
	__u64 nmi_requests;
	__u64 callbacks;
	__u64 missing;		/* requested (work, cookie) pairs without callback */
	__u64 duplicates;	/* pairs with more than one callback */
	__u64 unrequested;	/* callbacks for pairs never requested */
	__u64 cycles;		/* init/cancel cycles of the churn work */
	__u64 late;		/* churn callbacks after its cancel returned */
	__u64 dropped;		/* events lost to a full log */
};

#define UT_IOC_DEFERRED		_IOWR('u', 2, struct ut_deferred)

/*
 * read() of the ctl file: the API called from the reading context, which
 * io_uring makes one of its user workers (sec_user_worker).
 */
struct ut_reader {
	__u32 user_worker;	/* the reader had PF_USER_WORKER */
	__s32 request;		/* unwind_deferred_request() on work 2 */
	__u64 cookie;		/* its cookie */
	__u64 get_cookie;	/* unwind_user_get_cookie() */
	__s32 faultable;	/* unwind_user_faultable() */
	__s32 unwind_user;	/* unwind_user() ... */
	__u32 unwind_nr;	/* ... and its frames */
	__u32 pad;
};

#endif /* _UNWIND_TEST_UAPI_H */
