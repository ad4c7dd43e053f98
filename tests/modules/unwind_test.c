// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver for unwind_deferred.ko, built only against the public
 * headers in include/: user test programs ask it, through ioctls on
 * /sys/kernel/debug/unwind_test/ctl, to unwind their own stack.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>

#include "unwind_test_uapi.h"

#define UT_MAX_ENTRIES 4096

static struct dentry *ut_dir;

static int ut_walk(struct ut_unwind *req, unsigned long *buf)
{
	struct unwind_stacktrace trace = { .entries = buf };
	struct unwind_user_state state;
	unsigned int i;
	int ret;

	switch (req->mode) {
	case UT_MODE_UNWIND_USER:
		if (req->null_trace)
			return unwind_user(req->null_trace == 1 ? NULL : &(struct unwind_stacktrace){},
					   req->max);
		ret = unwind_user(&trace, req->max);
		req->nr = trace.nr;
		return ret;
	case UT_MODE_ITERATE:
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

static long ut_ioctl_unwind(void __user *arg)
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

static long ut_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case UT_IOC_UNWIND:
		return ut_ioctl_unwind((void __user *)arg);
	}
	return -ENOTTY;
}

static const struct file_operations ut_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= ut_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static int __init ut_init(void)
{
	ut_dir = debugfs_create_dir("unwind_test", NULL);
	if (IS_ERR(ut_dir))
		return PTR_ERR(ut_dir);
	/* _unsafe: the full proxy has no compat_ioctl; .owner pins us while open. */
	debugfs_create_file_unsafe("ctl", 0600, ut_dir, NULL, &ut_fops);
	return 0;
}

static void __exit ut_exit(void)
{
	debugfs_remove(ut_dir);
}

module_init(ut_init);
module_exit(ut_exit);
MODULE_DESCRIPTION("Test driver for unwind_deferred.ko");
MODULE_LICENSE("GPL");
