// SPDX-License-Identifier: GPL-2.0
/*
 * Test driver for unwind_deferred.ko, built only against the public
 * headers in include/: user test programs drive it through ioctls on
 * /sys/kernel/debug/unwind_test/ctl.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>

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

static const struct file_operations ut_fops = {
	.owner		= THIS_MODULE,
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
