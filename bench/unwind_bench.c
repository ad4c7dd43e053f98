// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmarks of unwind_deferred.ko against perf's synchronous user
 * callchain, get_perf_callchain(), on the same stacks in the same boot.
 * Timed with local_clock(); run under QEMU -icount so guest time counts
 * instructions and ratios repeat.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <asm/apic.h>
#include <asm/irq_regs.h>
#include <asm/nmi.h>

#include "unwind_bench_uapi.h"

#define UB_WORKS 8

static struct dentry *ub_dir;
static struct unwind_work ub_works[UB_WORKS];
static atomic64_t ub_callbacks;
/* Keeps perf's callchain buffers allocated. */
static struct perf_event *ub_event;

static void ub_callback(struct unwind_work *work, struct unwind_stacktrace *trace,
			u64 cookie)
{
	atomic64_inc(&ub_callbacks);
}

/*
 * perf's user callchain of current, as a sample taken now would get it:
 * in an RCU read-side section, as perf's sample path is (the callchain
 * buffers are RCU protected; lockdep says so on a PREEMPT_RCU kernel).
 */
static unsigned int ub_perf_walk(struct pt_regs *regs, unsigned int max)
{
	struct perf_callchain_entry *e;
	unsigned int nr;

	rcu_read_lock();
	e = get_perf_callchain(regs, false, true, max, false, false, 0);
	nr = e ? e->nr : 0;
	rcu_read_unlock();
	return nr;
}

static long ub_walk(struct ub_walk __user *arg)
{
	struct pt_regs *regs = task_pt_regs(current);
	struct unwind_stacktrace trace;
	struct ub_walk w;
	unsigned long *buf;
	unsigned int i;
	u64 t0;

	if (copy_from_user(&w, arg, sizeof(w)))
		return -EFAULT;
	if (!w.max || w.max > 4096 || !w.rounds)
		return -EINVAL;
	buf = kcalloc(w.max, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	trace.entries = buf;

	/* Warm up both paths once before timing. */
	unwind_user(&trace, w.max);
	local_irq_disable();
	ub_perf_walk(regs, w.max);
	local_irq_enable();

	t0 = local_clock();
	for (i = 0; i < w.rounds; i++)
		unwind_user(&trace, w.max);
	w.ours_ns = local_clock() - t0;
	w.ours_frames = trace.nr;

	/* perf walks with interrupts off, as in its IRQ or NMI handler. */
	local_irq_disable();
	t0 = local_clock();
	for (i = 0; i < w.rounds; i++)
		w.perf_frames = ub_perf_walk(regs, w.max);
	w.perf_ns = local_clock() - t0;
	local_irq_enable();
	kfree(buf);
	return copy_to_user(arg, &w, sizeof(w)) ? -EFAULT : 0;
}

static long ub_cache(struct ub_cache __user *arg)
{
	struct pt_regs *regs = task_pt_regs(current);
	struct unwind_stacktrace trace;
	struct ub_cache c;
	unsigned int i, j;
	u64 cookie, t0;

	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	if (!c.callers || c.callers > UB_WORKS || !c.samples || c.samples > 10000)
		return -EINVAL;
	/*
	 * N callers x M samples in this one kernel entry, then the one walk
	 * their callbacks share (the task work finds it in the cache).
	 */
	t0 = local_clock();
	local_irq_disable();
	for (j = 0; j < c.samples; j++)
		for (i = 0; i < c.callers; i++)
			unwind_deferred_request(&ub_works[i], &cookie);
	local_irq_enable();
	unwind_user_faultable(&trace);
	c.deferred_ns = local_clock() - t0;

	local_irq_disable();
	t0 = local_clock();
	for (j = 0; j < c.samples * c.callers; j++)
		ub_perf_walk(regs, 512);
	c.sync_ns = local_clock() - t0;
	local_irq_enable();
	return copy_to_user(arg, &c, sizeof(c)) ? -EFAULT : 0;
}

/* --- sampling context: hrtimer (IRQ) and self-NMI ---------------------- */

static struct hrtimer ub_timer;
static pid_t ub_pid;
static unsigned int ub_period_us, ub_max;
static u64 ub_ticks, ub_perf_ns, ub_req_ns;
static u64 ub_nmi_ticks, ub_nmi_perf_ns, ub_nmi_req_ns;
static bool ub_nmi_armed;

/* One sample: perf's synchronous walk and a deferred request, both timed. */
static void ub_sample(struct pt_regs *regs, u64 *perf_ns, u64 *req_ns, u64 *ticks)
{
	u64 cookie, t0, t1, t2;

	t0 = local_clock();
	ub_perf_walk(regs, ub_max);
	t1 = local_clock();
	unwind_deferred_request(&ub_works[0], &cookie);
	t2 = local_clock();
	*perf_ns += t1 - t0;
	*req_ns += t2 - t1;
	(*ticks)++;
}

static int ub_nmi(unsigned int type, struct pt_regs *regs)
{
	if (!READ_ONCE(ub_nmi_armed))
		return NMI_DONE;
	WRITE_ONCE(ub_nmi_armed, false);
	/*
	 * The NMI lands in the timer interrupt, which had hit our task in user
	 * mode: both walkers start from the task's user registers.
	 */
	if (current->pid == ub_pid)
		ub_sample(task_pt_regs(current), &ub_nmi_perf_ns, &ub_nmi_req_ns,
			  &ub_nmi_ticks);
	return NMI_HANDLED;
}

static enum hrtimer_restart ub_tick(struct hrtimer *t)
{
	struct pt_regs *regs = get_irq_regs();

	if (current->pid == ub_pid && regs && user_mode(regs)) {
		/* Alternate: this tick samples in IRQ, the next from an NMI. */
		if (ub_ticks <= ub_nmi_ticks) {
			ub_sample(regs, &ub_perf_ns, &ub_req_ns, &ub_ticks);
		} else {
			WRITE_ONCE(ub_nmi_armed, true);
			__apic_send_IPI_self(NMI_VECTOR);
		}
	}
	hrtimer_forward_now(t, ns_to_ktime((u64)ub_period_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static long ub_irq(struct ub_irq __user *arg)
{
	struct ub_irq q;

	if (copy_from_user(&q, arg, sizeof(q)))
		return -EFAULT;
	if (q.period_us) {
		if (q.period_us < 10 || !q.max || q.max > 4096)
			return -EINVAL;
		hrtimer_cancel(&ub_timer);
		ub_pid = current->pid;
		ub_period_us = q.period_us;
		ub_max = q.max;
		ub_ticks = ub_perf_ns = ub_req_ns = 0;
		ub_nmi_ticks = ub_nmi_perf_ns = ub_nmi_req_ns = 0;
		atomic64_set(&ub_callbacks, 0);
		hrtimer_start(&ub_timer, ns_to_ktime((u64)q.period_us * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
		return 0;
	}
	hrtimer_cancel(&ub_timer);
	q.ticks = ub_ticks;
	q.perf_ns = ub_perf_ns;
	q.request_ns = ub_req_ns;
	q.nmi_ticks = ub_nmi_ticks;
	q.nmi_perf_ns = ub_nmi_perf_ns;
	q.nmi_request_ns = ub_nmi_req_ns;
	q.callbacks = atomic64_read(&ub_callbacks);
	return copy_to_user(arg, &q, sizeof(q)) ? -EFAULT : 0;
}

static long ub_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case UB_IOC_WALK:
		return ub_walk((void __user *)arg);
	case UB_IOC_CACHE:
		return ub_cache((void __user *)arg);
	case UB_IOC_IRQ:
		return ub_irq((void __user *)arg);
	}
	return -ENOTTY;
}

static const struct file_operations ub_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= ub_ioctl,
};

static int __init ub_init(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = NSEC_PER_SEC,
		.sample_type = PERF_SAMPLE_CALLCHAIN,
		.sample_max_stack = 512,
		.disabled = 1,
	};
	int i, ret;

	ub_event = perf_event_create_kernel_counter(&attr, 0, NULL, NULL, NULL);
	if (IS_ERR(ub_event))
		return PTR_ERR(ub_event);
	for (i = 0; i < UB_WORKS; i++) {
		ret = unwind_deferred_init(&ub_works[i], ub_callback);
		if (ret)
			goto err;
	}
	ret = register_nmi_handler(NMI_LOCAL, ub_nmi, 0, "unwind_bench");
	if (ret)
		goto err;
	hrtimer_init(&ub_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	ub_timer.function = ub_tick;
	ub_dir = debugfs_create_dir("unwind_bench", NULL);
	debugfs_create_file("ctl", 0600, ub_dir, NULL, &ub_fops);
	return 0;
err:
	while (--i >= 0)
		unwind_deferred_cancel(&ub_works[i]);
	perf_event_release_kernel(ub_event);
	return ret;
}

static void __exit ub_exit(void)
{
	int i;

	debugfs_remove(ub_dir);
	hrtimer_cancel(&ub_timer);
	unregister_nmi_handler(NMI_LOCAL, "unwind_bench");
	for (i = 0; i < UB_WORKS; i++)
		unwind_deferred_cancel(&ub_works[i]);
	perf_event_release_kernel(ub_event);
}

module_init(ub_init);
module_exit(ub_exit);
MODULE_DESCRIPTION("Benchmarks of deferred user unwinding against perf's callchains");
MODULE_LICENSE("GPL");
