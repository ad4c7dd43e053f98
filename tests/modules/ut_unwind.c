// SPDX-License-Identifier: GPL-2.0
/* UT_IOC_UNWIND: the caller asks for an unwind of its own stack. */
#include <linux/mmap_lock.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "ut.h"

#define UT_MAX_ENTRIES 4096

static int ut_walk(struct ut_unwind *req, unsigned long *buf)
{
	struct unwind_stacktrace trace = { .entries = buf };
	struct unwind_user_state state;
	unsigned int i;
	int ret;

	switch (req->mode) {
	case UT_MODE_UNWIND_USER:
		if (req->null_trace == 1)
			return unwind_user(NULL, req->max);
		if (req->null_trace == 2) {
			trace.entries = NULL;
			return unwind_user(&trace, req->max);
		}
		ret = unwind_user(&trace, req->max);
		req->nr = trace.nr;
		return ret;
	case UT_MODE_UNWIND_USER_RCU:
		/* No sleeping here: frame pointers only, no tables. */
		rcu_read_lock();
		ret = unwind_user(&trace, req->max);
		rcu_read_unlock();
		req->nr = trace.nr;
		return ret;
	case UT_MODE_UNWIND_USER_MMAP:
		/* The tables' lookup would take the lock again. */
		mmap_read_lock(current->mm);
		ret = unwind_user(&trace, req->max);
		mmap_read_unlock(current->mm);
		req->nr = trace.nr;
		return ret;
	case UT_MODE_ITERATE:
		if (req->null_trace == 2) {
			/* A state unwind_user_start() never set up: zeroed... */
			memset(&state, 0, sizeof(state));
			ret = unwind_user_next(&state);
			if (ret != -EINVAL)
				return ret ?: -EBADE;
			/*
			 * ...with a frame above the stack pointer (a step with
			 * a word size of 0 would compute ws - 1)...
			 */
			state.sp = 8;
			state.fp = 16;
			/* The first call ended the walk: not done, to step again. */
			state.done = false;
			ret = unwind_user_next(&state);
			if (ret != -EINVAL)
				return ret ?: -EBADE;
			/* ...or garbage that claims not to be done. */
			memset(&state, 0x5a, sizeof(state));
			state.done = false;
			return unwind_user_next(&state);
		}
		if (req->null_trace)
			return unwind_user_start(NULL) ?: unwind_user_next(NULL);
		req->nr = 0;
		for_each_user_frame(&state) {
			if (req->nr >= req->max)
				break;
			buf[req->nr++] = state.ip;
		}
		return 0;
	case UT_MODE_FAULTABLE:
	case UT_MODE_FAULTABLE_TWICE:
		if (req->null_trace)
			return unwind_user_faultable(NULL);
		ret = unwind_user_faultable(&trace);
		if (!ret && req->mode == UT_MODE_FAULTABLE_TWICE) {
			unsigned long *first = trace.entries;

			ret = unwind_user_faultable(&trace);
			/* A cache hit hands out the same buffer. */
			if (!ret && trace.entries != first)
				ret = -EBADE;
		}
		if (ret)
			return ret;
		req->nr = min(trace.nr, req->max);
		for (i = 0; i < req->nr; i++)
			buf[i] = trace.entries[i];
		return 0;
	}
	return -EOPNOTSUPP;
}

long ut_ioctl_unwind(void __user *arg)
{
	struct ut_unwind req;
	unsigned long *buf;
	unsigned int i;
	long ret = 0;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.max > UT_MAX_ENTRIES)
		return -EINVAL;
	buf = kcalloc(req.max + 1, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	req.nr = 0;
	req.ret = ut_walk(&req, buf);
	for (i = 0; i < req.nr; i++) {
		u64 v = buf[i];

		if (copy_to_user(u64_to_user_ptr(req.entries) + i * sizeof(v),
				 &v, sizeof(v))) {
			ret = -EFAULT;
			break;
		}
	}
	if (!ret && copy_to_user(arg, &req, sizeof(req)))
		ret = -EFAULT;
	kfree(buf);
	return ret;
}
