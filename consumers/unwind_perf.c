// SPDX-License-Identifier: GPL-2.0
/*
 * A perf-style consumer of unwind_deferred.ko.
 *
 * Writing 1 to /sys/kernel/debug/unwind_perf/enable creates a sampling
 * perf event on every CPU: the cpu-clock software event (hrtimer, IRQ
 * context) and, where the CPU has one, the cycles hardware counter (NMI).
 * For samples of the task named in .../comm the overflow handler records
 * the kernel part at once (interrupted IP, kernel stack) and requests
 * the deferred user stack; the callback files the user frames under the
 * same cookie.  .../samples prints the samples stitched by cookie.
 */
#include <linux/debugfs.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/stacktrace.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>

#include "consumer_comm.h"

#define UP_SAMPLES	4096
#define UP_KFRAMES	8
#define UP_UFRAMES	32

struct up_sample {
	u64 cookie;
	u64 ip;
	pid_t pid;
	u8 user;		/* interrupted user mode */
	u8 hw;			/* from the hardware counter (NMI) */
	u8 nr_kernel;
	unsigned long kernel[UP_KFRAMES];
};

struct up_stack {
	u64 cookie;
	unsigned int nr;
	unsigned long frames[UP_UFRAMES];
};

static struct unwind_work up_work;
static struct dentry *up_dir;
static DEFINE_MUTEX(up_mutex);		/* enable/disable, reading */
/* Per CPU: the cpu-clock event and, if any, the hardware counter. */
struct up_cpu {
	struct perf_event *ev[2];
};

static DEFINE_PER_CPU(struct up_cpu, up_cpus);
static char up_comm[TASK_COMM_LEN];
static u32 up_period_us = 200;
static bool up_have_hw;

/* Written from IRQ/NMI: a slot is claimed with one atomic increment. */
static struct up_sample *up_samples;
static atomic_t up_nsamples;
static atomic_t up_lost;

static DEFINE_SPINLOCK(up_stack_lock);
static struct up_stack *up_stacks;
static unsigned int up_nstacks;

static void up_overflow(struct perf_event *event, struct perf_sample_data *data,
			struct pt_regs *regs)
{
	struct up_sample *s;
	u64 cookie;
	int i;

	if ((current->flags & PF_KTHREAD) ||
	    strncmp(current->comm, up_comm, TASK_COMM_LEN))
		return;
	if (unwind_deferred_request(&up_work, &cookie) < 0)
		return;
	i = atomic_inc_return(&up_nsamples) - 1;
	if (i >= UP_SAMPLES) {
		atomic_inc(&up_lost);
		return;
	}
	s = &up_samples[i];
	s->cookie = cookie;
	s->ip = instruction_pointer(regs);
	s->pid = current->pid;
	s->user = user_mode(regs);
	s->hw = event->attr.type == PERF_TYPE_HARDWARE;
	s->nr_kernel = s->user ? 0 : stack_trace_save(s->kernel, UP_KFRAMES, 0);
}

static void up_callback(struct unwind_work *work, struct unwind_stacktrace *trace,
			u64 cookie)
{
	struct up_stack *st;
	unsigned long flags;

	spin_lock_irqsave(&up_stack_lock, flags);
	if (up_nstacks < UP_SAMPLES) {
		st = &up_stacks[up_nstacks++];
		st->cookie = cookie;
		st->nr = min_t(unsigned int, trace->nr, UP_UFRAMES);
		memcpy(st->frames, trace->entries, st->nr * sizeof(*st->frames));
	}
	spin_unlock_irqrestore(&up_stack_lock, flags);
}

static void up_disable(void)
{
	int cpu, k;

	for_each_possible_cpu(cpu) {
		struct perf_event **ev = per_cpu_ptr(&up_cpus, cpu)->ev;

		for (k = 0; k < 2; k++) {
			if (ev[k])
				perf_event_release_kernel(ev[k]);
			ev[k] = NULL;
		}
	}
}

static int up_enable(void)
{
	struct perf_event_attr attr = {
		.size		= sizeof(attr),
		.pinned		= 1,
		.sample_period	= (u64)up_period_us * NSEC_PER_USEC,
	};
	struct perf_event *e;
	int cpu;

	atomic_set(&up_nsamples, 0);
	atomic_set(&up_lost, 0);
	up_nstacks = 0;
	up_have_hw = false;
	for_each_online_cpu(cpu) {
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CPU_CLOCK;
		e = perf_event_create_kernel_counter(&attr, cpu, NULL, up_overflow, NULL);
		if (IS_ERR(e)) {
			up_disable();
			return PTR_ERR(e);
		}
		per_cpu_ptr(&up_cpus, cpu)->ev[0] = e;
		/* A hardware counter overflows in NMI: use it where there is one. */
		attr.type = PERF_TYPE_HARDWARE;
		attr.config = PERF_COUNT_HW_CPU_CYCLES;
		attr.sample_period = 1000000;
		e = perf_event_create_kernel_counter(&attr, cpu, NULL, up_overflow, NULL);
		if (!IS_ERR(e)) {
			per_cpu_ptr(&up_cpus, cpu)->ev[1] = e;
			up_have_hw = true;
		}
		attr.sample_period = (u64)up_period_us * NSEC_PER_USEC;
	}
	return 0;
}

static ssize_t up_enable_write(struct file *file, const char __user *ubuf,
			       size_t count, loff_t *ppos)
{
	bool on;
	int ret;

	ret = kstrtobool_from_user(ubuf, count, &on);
	if (ret)
		return ret;
	mutex_lock(&up_mutex);
	up_disable();
	ret = on ? up_enable() : 0;
	mutex_unlock(&up_mutex);
	return ret ?: count;
}

static const struct file_operations up_enable_fops = {
	.owner	= THIS_MODULE,
	.write	= up_enable_write,
};

static ssize_t up_comm_write(struct file *file, const char __user *ubuf,
			     size_t count, loff_t *ppos)
{
	return consumer_comm_write(up_comm, ubuf, count);
}

static const struct file_operations up_comm_fops = {
	.owner	= THIS_MODULE,
	.write	= up_comm_write,
};

static int up_samples_show(struct seq_file *m, void *v)
{
	int n, i, j, k;

	mutex_lock(&up_mutex);
	n = min(atomic_read(&up_nsamples), UP_SAMPLES);
	seq_printf(m, "# samples %d lost %d hw %d\n", n, atomic_read(&up_lost), up_have_hw);
	for (i = 0; i < n; i++) {
		struct up_sample *s = &up_samples[i];
		struct up_stack *st = NULL;

		spin_lock_irq(&up_stack_lock);
		for (j = 0; j < up_nstacks; j++) {
			if (up_stacks[j].cookie == s->cookie) {
				st = &up_stacks[j];
				break;
			}
		}
		spin_unlock_irq(&up_stack_lock);
		seq_printf(m, "sample cookie=%llx pid=%d %s%s ip=%llx kernel=",
			   s->cookie, s->pid, s->user ? "user" : "kernel",
			   s->hw ? " hw" : "", s->ip);
		for (k = 0; k < s->nr_kernel; k++)
			seq_printf(m, "%s%pS", k ? "," : "", (void *)s->kernel[k]);
		if (!st) {
			seq_puts(m, " user=pending\n");
			continue;
		}
		seq_puts(m, " user=");
		for (k = 0; k < st->nr; k++)
			seq_printf(m, "%s%lx", k ? "," : "", st->frames[k]);
		seq_putc(m, '\n');
	}
	mutex_unlock(&up_mutex);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(up_samples);

static int __init up_init(void)
{
	int ret;

	up_samples = kvcalloc(UP_SAMPLES, sizeof(*up_samples), GFP_KERNEL);
	up_stacks = kvcalloc(UP_SAMPLES, sizeof(*up_stacks), GFP_KERNEL);
	if (!up_samples || !up_stacks) {
		ret = -ENOMEM;
		goto err;
	}
	ret = unwind_deferred_init(&up_work, up_callback);
	if (ret)
		goto err;
	up_dir = debugfs_create_dir("unwind_perf", NULL);
	debugfs_create_file("enable", 0200, up_dir, NULL, &up_enable_fops);
	debugfs_create_file("comm", 0200, up_dir, NULL, &up_comm_fops);
	debugfs_create_u32("period_us", 0600, up_dir, &up_period_us);
	debugfs_create_file("samples", 0400, up_dir, NULL, &up_samples_fops);
	return 0;
err:
	kvfree(up_samples);
	kvfree(up_stacks);
	return ret;
}

static void __exit up_exit(void)
{
	debugfs_remove(up_dir);
	mutex_lock(&up_mutex);
	up_disable();
	mutex_unlock(&up_mutex);
	unwind_deferred_cancel(&up_work);
	kvfree(up_samples);
	kvfree(up_stacks);
}

module_init(up_init);
module_exit(up_exit);
MODULE_DESCRIPTION("perf-style consumer of deferred user stack traces");
MODULE_LICENSE("GPL");
