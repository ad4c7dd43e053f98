// SPDX-License-Identifier: GPL-2.0
/*
 * A file whose release blocks: the last close() of
 * /sys/kernel/debug/unwind_stall/block runs ->release from a task work,
 * and task works run newest first, so a deferred request made earlier in
 * the same syscall has its task work taken off the queue but not yet run
 * while this one waits.  Writing "state" lets it go; reading "state"
 * says 0 (idle), 1 (blocked) or 2 (released).  No dependency on
 * unwind_deferred.ko, which may be reloaded meanwhile (sec_reload_dequeued).
 * The injection build of unwind_deferred.ko lets it go from inside its
 * unload (unwind_stall_release(), race_unload_trampoline).
 */
#include <linux/completion.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>

#define STALL_TIMEOUT	(30 * HZ)

static struct dentry *stall_dir;
static DECLARE_COMPLETION(stall_go);
static atomic_t stall_state;

static int stall_open(struct inode *inode, struct file *file)
{
	reinit_completion(&stall_go);
	atomic_set(&stall_state, 0);
	return 0;
}

static int stall_release(struct inode *inode, struct file *file)
{
	atomic_set(&stall_state, 1);
	if (!wait_for_completion_timeout(&stall_go, STALL_TIMEOUT))
		pr_warn("unwind_stall: not released in time\n");
	atomic_set(&stall_state, 2);
	return 0;
}

static const struct file_operations stall_block_fops = {
	.owner		= THIS_MODULE,
	.open		= stall_open,
	.release	= stall_release,
};

static ssize_t stall_state_read(struct file *file, char __user *buf,
				size_t len, loff_t *pos)
{
	char s[4];
	int n = scnprintf(s, sizeof(s), "%d\n", atomic_read(&stall_state));

	return simple_read_from_buffer(buf, len, pos, s, n);
}

static ssize_t stall_state_write(struct file *file, const char __user *buf,
				 size_t len, loff_t *pos)
{
	complete(&stall_go);
	return len;
}

/*
 * Lets a blocked release go; true if one was blocked.  Found with
 * symbol_get() by the injection build of unwind_deferred.ko, so that
 * neither module depends on the other.  Any context.
 */
bool unwind_stall_release(void);
bool unwind_stall_release(void)
{
	if (atomic_read(&stall_state) != 1)
		return false;
	complete(&stall_go);
	return true;
}
EXPORT_SYMBOL_GPL(unwind_stall_release);

static const struct file_operations stall_state_fops = {
	.owner	= THIS_MODULE,
	.read	= stall_state_read,
	.write	= stall_state_write,
};

static int __init stall_init(void)
{
	stall_dir = debugfs_create_dir("unwind_stall", NULL);
	debugfs_create_file("block", 0600, stall_dir, NULL, &stall_block_fops);
	debugfs_create_file("state", 0600, stall_dir, NULL, &stall_state_fops);
	return 0;
}

static void __exit stall_exit(void)
{
	debugfs_remove(stall_dir);
}

module_init(stall_init);
module_exit(stall_exit);
MODULE_DESCRIPTION("A file whose release blocks, for unwind_deferred tests");
MODULE_LICENSE("GPL");
