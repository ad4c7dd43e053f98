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

#endif /* _UNWIND_TEST_UAPI_H */
