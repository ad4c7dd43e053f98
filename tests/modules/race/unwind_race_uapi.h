/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface between unwind_race.ko and tests/user/race.c: ioctls on
 * /sys/kernel/debug/unwind_race/ctl.  Same layout for 64- and 32-bit.
 */
#ifndef _UNWIND_RACE_UAPI_H
#define _UNWIND_RACE_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* The protocol's steps, in the order of `Step` in src/deferred/protocol.rs. */
#define RACE_NSTEPS	11

/* What an injected interrupt does. */
enum race_action {
	RACE_NONE = 0,
	RACE_NMI_REQUEST_W0,	/* an NMI requests for work 0 (the task's own) */
	RACE_NMI_REQUEST_W1,	/* an NMI requests for work 1 */
	RACE_NMI_COOKIE,	/* an NMI calls unwind_user_get_cookie() */
	RACE_IRQ_REQUEST_W2,	/* an IRQ (irq_work) requests for work 2 */
	RACE_REUSE_W1,		/* cancel work 1, register one in its bit */
	RACE_NACTIONS,
};

struct race_plan {
	__u32 step;	/* fire at this step ... */
	__u32 hit;	/* ... the hit-th time current reaches it (from 1) */
	__u32 action;	/* enum race_action */
	__u32 fired;	/* unused: see race_result.fired */
};

/*
 * RACE_IOC_RUN: request for work 0 in this syscall with these injections.
 * With fail_queue, first a request for work 1 whose task work cannot be
 * queued (as for an exiting task), then work 0's and work 1's again.
 */
struct race_run {
	struct race_plan plan[2];
	__u32 fail_queue;
};

/* RACE_IOC_RESULT: what the last run handed out and called back. */
struct race_result {
	__u32 handed;		/* cookies handed out (requests, get_cookie) */
	__u32 callbacks;
	__u32 zero;		/* callbacks or requests with cookie 0 */
	__u32 missing;		/* (work, cookie) requested, no callback yet */
	__u32 duplicate;	/* more than one callback per (work, cookie) */
	__u32 unrequested;	/* a callback nobody asked for */
	__u32 bad_trace;	/* a trace other than the run's direct unwind */
	__u32 reused;		/* this syscall's cookie was handed out in the run */
	__u32 late;		/* callbacks that came after a run's result */
	__u32 direct_nr;	/* frames of the run's direct unwind */
	__u32 reused_bit;	/* RACE_REUSE_W1: the fresh work got work 1's bit */
	__u32 fired;		/* bit i: plan[i] fired */
	__u32 queue_failed;	/* fail_queue: -ESRCH, cookie 0, its bits cleared */
};

#define RACE_IOC_RUN	_IOWR('r', 1, struct race_run)
#define RACE_IOC_RESULT	_IOR('r', 2, struct race_result)

#endif /* _UNWIND_RACE_UAPI_H */
