// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver for unwind_deferred.ko, built only against the public
 * headers in include/: user test programs drive it through ioctls on
 * /sys/kernel/debug/unwind_test/ctl.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/uaccess.h>

#include "ut.h"

static struct dentry *ut_dir;

static long ut_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case UT_IOC_UNWIND:
		return ut_ioctl_unwind((void __user *)arg);
	case UT_IOC_DEFERRED:
		return ut_ioctl_deferred((void __user *)arg);
	}
	return -ENOTTY;
}

static ssize_t ut_read(struct file *file, char __user *buf, size_t len,
		       loff_t *pos)
{
	unsigned long entries[4];
	struct unwind_stacktrace trace = {};
	struct ut_reader r = {};

	r.user_worker = !!(current->flags & PF_USER_WORKER);
	r.request = unwind_deferred_request(&ut_works[2], &r.cookie);
	r.get_cookie = unwind_user_get_cookie();
	r.faultable = unwind_user_faultable(&trace);
	trace.entries = entries;
	r.unwind_user = unwind_user(&trace, ARRAY_SIZE(entries));
	r.unwind_nr = trace.nr;
	len = min(len, sizeof(r));
	return copy_to_user(buf, &r, len) ? -EFAULT : len;
}

static const struct file_operations ut_fops = {
	.owner		= THIS_MODULE,
	.read		= ut_read,
	.unlocked_ioctl	= ut_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static int __init ut_init(void)
{
	int ret;

	ret = ut_deferred_init();
	if (ret)
		return ret;
	ret = ut_syscall_init();
	if (ret)
		goto err_deferred;
	ut_dir = debugfs_create_dir("unwind_test", NULL);
	if (IS_ERR(ut_dir)) {
		ret = PTR_ERR(ut_dir);
		goto err_syscall;
	}
	/* _unsafe: the full proxy has no compat_ioctl; .owner pins us while open. */
	debugfs_create_file_unsafe("ctl", 0600, ut_dir, NULL, &ut_fops);
	return 0;

err_syscall:
	ut_syscall_exit();
err_deferred:
	ut_deferred_exit();
	return ret;
}

static void __exit ut_exit(void)
{
	debugfs_remove(ut_dir);
	ut_syscall_exit();
	ut_deferred_exit();
}

module_init(ut_init);
module_exit(ut_exit);
MODULE_DESCRIPTION("Test driver for unwind_deferred.ko");
MODULE_LICENSE("GPL");
