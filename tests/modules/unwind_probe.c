// SPDX-License-Identifier: GPL-2.0
/*
 * Reports whether the kernel's unwind hooks are switched on, without
 * depending on unwind_deferred.ko, so it can be asked while that module
 * is not loaded: /sys/kernel/debug/unwind_probe/hooks_enabled.  With
 * squat=NAME it also takes debugfs directory NAME.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/unwind_hooks.h>

static struct dentry *probe_dir, *probe_squat_dir;

/* A debugfs directory to take before unwind_deferred.ko can. */
static char *squat;
module_param(squat, charp, 0444);
MODULE_PARM_DESC(squat, "create this debugfs directory (module_load_without_debugfs)");
static int probe_null, probe_incomplete, probe_busy;

static void probe_fork(struct task_struct *t) {}
static void probe_exit_to_user(void) {}
static void probe_work(struct callback_head *head) {}

/* The registration's argument checks, and one table at a time. */
static void probe_register_checks(void)
{
	static const struct unwind_hooks incomplete = {
		.task_fork = probe_fork,
	};
	static const struct unwind_hooks full = {
		.task_fork = probe_fork,
		.task_exit = probe_fork,
		.task_exec = probe_fork,
		.task_free = probe_fork,
		.exit_to_user = probe_exit_to_user,
		.task_work = probe_work,
	};

	probe_null = unwind_hooks_register(NULL, THIS_MODULE);
	probe_incomplete = unwind_hooks_register(&incomplete, THIS_MODULE);
	/* Only meaningful with unwind_deferred.ko holding the hooks. */
	probe_busy = unwind_hooks_enabled() ?
		     unwind_hooks_register(&full, THIS_MODULE) : 0;
	if (!probe_busy && unwind_hooks_enabled())
		unwind_hooks_unregister(&full);
}

static int checks_show(struct seq_file *m, void *v)
{
	seq_printf(m, "null=%d incomplete=%d busy=%d\n", probe_null,
		   probe_incomplete, probe_busy);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(checks);

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
	if (squat)
		probe_squat_dir = debugfs_create_dir(squat, NULL);
	probe_register_checks();
	debugfs_create_file("register_checks", 0444, probe_dir, NULL, &checks_fops);
	return 0;
}

static void __exit probe_exit(void)
{
	debugfs_remove(probe_squat_dir);
	debugfs_remove(probe_dir);
}

module_init(probe_init);
module_exit(probe_exit);
MODULE_DESCRIPTION("Reports the state of the unwind hooks' static key");
MODULE_LICENSE("GPL");
