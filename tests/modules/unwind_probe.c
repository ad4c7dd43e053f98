// SPDX-License-Identifier: GPL-2.0
/*
 * Reports whether the kernel's unwind hooks are switched on, without
 * depending on unwind_deferred.ko, so it can be asked while that module
 * is not loaded: /sys/kernel/debug/unwind_probe/hooks_enabled.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/unwind_hooks.h>

static struct dentry *probe_dir;

static int hooks_enabled_get(void *data, u64 *val)
{
	*val = unwind_hooks_enabled();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(hooks_enabled_fops, hooks_enabled_get, NULL, "%llu\n");

static int __init probe_init(void)
{
	probe_dir = debugfs_create_dir("unwind_probe", NULL);
	if (IS_ERR(probe_dir))
		return PTR_ERR(probe_dir);
	debugfs_create_file_unsafe("hooks_enabled", 0444, probe_dir, NULL,
				   &hooks_enabled_fops);
	return 0;
}

static void __exit probe_exit(void)
{
	debugfs_remove(probe_dir);
}

module_init(probe_init);
module_exit(probe_exit);
MODULE_DESCRIPTION("Reports the state of the unwind hooks' static key");
MODULE_LICENSE("GPL");
