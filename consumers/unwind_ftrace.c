// SPDX-License-Identifier: GPL-2.0
/*
 * An ftrace-style consumer of unwind_deferred.ko.
 *
 * For every syscall entry of the tasks chosen in
 * /sys/kernel/debug/unwind_ftrace/{comm,pid} it requests the deferred
 * user stack and writes two events to the ftrace ring buffer:
 * unwind_ftrace:unwind_request with the cookie at the syscall, and
 * unwind_ftrace:unwind_stack with the same cookie and the user frames
 * when the callback runs.  Stitch them by cookie.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>

#include "consumer_comm.h"

#define CREATE_TRACE_POINTS
#include "unwind_ftrace_trace.h"

static struct unwind_work uf_work;
static struct tracepoint *uf_sys_enter;
static struct dentry *uf_dir;

/* Filters: a comm (empty: none) and a tgid (0: none). */
static char uf_comm[TASK_COMM_LEN];
static u32 uf_pid;

static bool uf_match(void)
{
	if (current->flags & PF_KTHREAD)
		return false;
	if (READ_ONCE(uf_pid) && current->tgid == READ_ONCE(uf_pid))
		return true;
	return uf_comm[0] && !strncmp(current->comm, uf_comm, TASK_COMM_LEN);
}

static void uf_sys_enter_probe(void *data, struct pt_regs *regs, long id)
{
	u64 cookie;
	int ret;

	if (!uf_match())
		return;
	ret = unwind_deferred_request(&uf_work, &cookie);
	trace_unwind_request(cookie, id, ret);
}

static void uf_callback(struct unwind_work *work, struct unwind_stacktrace *trace,
			u64 cookie)
{
	trace_unwind_stack(cookie, min_t(unsigned int, trace->nr, UNWIND_FTRACE_MAX_FRAMES),
			   trace->entries);
}

static ssize_t uf_comm_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	return consumer_comm_write(uf_comm, ubuf, count);
}

static ssize_t uf_comm_read(struct file *file, char __user *ubuf, size_t count,
			    loff_t *ppos)
{
	char buf[TASK_COMM_LEN + 1];
	int n = scnprintf(buf, sizeof(buf), "%s\n", uf_comm);

	return simple_read_from_buffer(ubuf, count, ppos, buf, n);
}

static const struct file_operations uf_comm_fops = {
	.owner	= THIS_MODULE,
	.read	= uf_comm_read,
	.write	= uf_comm_write,
};

static void uf_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sys_enter"))
		uf_sys_enter = tp;
}

static int __init uf_init(void)
{
	int ret;

	/* sys_enter is not exported: find it by name. */
	for_each_kernel_tracepoint(uf_find, NULL);
	if (!uf_sys_enter)
		return -ENOENT;
	ret = unwind_deferred_init(&uf_work, uf_callback);
	if (ret)
		return ret;
	uf_dir = debugfs_create_dir("unwind_ftrace", NULL);
	debugfs_create_file("comm", 0600, uf_dir, NULL, &uf_comm_fops);
	debugfs_create_u32("pid", 0600, uf_dir, &uf_pid);
	ret = tracepoint_probe_register(uf_sys_enter, uf_sys_enter_probe, NULL);
	if (ret) {
		debugfs_remove(uf_dir);
		unwind_deferred_cancel(&uf_work);
	}
	return ret;
}

static void __exit uf_exit(void)
{
	tracepoint_probe_unregister(uf_sys_enter, uf_sys_enter_probe, NULL);
	tracepoint_synchronize_unregister();
	debugfs_remove(uf_dir);
	/* Waits for running callbacks: none may trace after this. */
	unwind_deferred_cancel(&uf_work);
}

module_init(uf_init);
module_exit(uf_exit);
MODULE_DESCRIPTION("ftrace-style consumer of deferred user stack traces");
MODULE_LICENSE("GPL");
