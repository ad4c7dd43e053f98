// SPDX-License-Identifier: GPL-2.0
/*
 * Races of the request protocol, forced: with the injection build of
 * unwind_deferred.ko, fire real NMIs (self-NMI IPI) and IRQs (irq_work) at
 * chosen steps of request, process and the exit reset of one task, then
 * check the protocol's guarantee on everything handed out and called back.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>
#include <asm/apic.h>
#include <asm/nmi.h>

#include "unwind_inject.h"
#include "unwind_race_uapi.h"

#define RACE_TRACE_MAX	64
#define RACE_LOG	64

/* Works 0-2, and 3: the fresh work of RACE_REUSE_W1. */
static struct unwind_work race_works[4];
static unsigned long race_cancelled;	/* works cancelled during the run */
static bool race_reused_bit;
static struct dentry *race_dir;

/* The run in progress: its task, plan and what it saw. */
static struct task_struct *race_task;
static struct race_plan race_plan[2];
static atomic_t race_hits[RACE_NSTEPS];
static bool race_open;
static unsigned long race_direct[RACE_TRACE_MAX];
static unsigned int race_direct_nr;
static bool race_queue_failed;

/* src/deferred/protocol.rs: PENDING, a task work is queued. */
#define RACE_MASK_PENDING	BIT(0)

struct race_event {
	int work;		/* -1 for get_cookie */
	u64 cookie;
	bool trace_ok;
};

/* Written from task, IRQ and NMI context of one task on one CPU. */
static struct race_event race_handed[RACE_LOG], race_called[RACE_LOG];
static atomic_t race_nhanded, race_ncalled, race_late;

static void race_log(struct race_event *log, atomic_t *n, int work, u64 cookie,
		     bool trace_ok)
{
	int i = atomic_inc_return(n) - 1;

	if (i < RACE_LOG)
		log[i] = (struct race_event){ work, cookie, trace_ok };
}

static void race_callback(struct unwind_work *work,
			  struct unwind_stacktrace *trace, u64 cookie)
{
	bool ok = trace->nr == race_direct_nr &&
		  !memcmp(trace->entries, race_direct,
			  race_direct_nr * sizeof(unsigned long));

	if (!READ_ONCE(race_open)) {
		atomic_inc(&race_late);
		return;
	}
	race_log(race_called, &race_ncalled, work - race_works, cookie, ok);
}

static void race_request(int w)
{
	u64 cookie = 0;
	int ret = unwind_deferred_request(&race_works[w], &cookie);

	if (ret >= 0)
		race_log(race_handed, &race_nhanded, w, cookie, true);
}

/* The action an interrupt runs, and its completion. */
static atomic_t race_armed, race_done;
static int race_action;

static void race_act(void)
{
	switch (race_action) {
	case RACE_NMI_REQUEST_W0:
		race_request(0);
		break;
	case RACE_NMI_REQUEST_W1:
		race_request(1);
		break;
	case RACE_NMI_COOKIE:
		race_log(race_handed, &race_nhanded, -1,
			 unwind_user_get_cookie(), true);
		break;
	case RACE_IRQ_REQUEST_W2:
		race_request(2);
		break;
	}
}

/*
 * Cancel work 1 and register work 3, which takes the lowest free bit: work
 * 1's.  A task work that read its mask before must not call work 3.
 */
static bool race_reuse(void)
{
	int bit = race_works[1].bit;

	if (!in_task() || irqs_disabled() || preempt_count() || bit < 0)
		return false;
	unwind_deferred_cancel(&race_works[1]);
	set_bit(1, &race_cancelled);
	if (unwind_deferred_init(&race_works[3], race_callback))
		return false;
	race_reused_bit = race_works[3].bit == bit;
	return true;
}

static int race_nmi(unsigned int type, struct pt_regs *regs)
{
	if (atomic_cmpxchg(&race_armed, 1, 0) != 1)
		return NMI_DONE;
	race_act();
	atomic_set(&race_done, 1);
	return NMI_HANDLED;
}

static void race_irq(struct irq_work *w)
{
	if (atomic_cmpxchg(&race_armed, 2, 0) != 2)
		return;
	race_act();
	atomic_set(&race_done, 1);
}

/*
 * Set up in race_init(): 6.12's module loader does not apply relocations to
 * a module's .data..percpu, so a static initialiser would leave .func NULL.
 */
static DEFINE_PER_CPU(struct irq_work, race_irq_work);

/* The steps of process() before it enters the hooks' SRCU read side. */
#define RACE_STEP_PENDING_SEEN		4
#define RACE_STEP_PENDING_CLEARED	5

/* Fires @action now and waits for it; false if it cannot fire here. */
static bool race_fire(int action, int step)
{
	int i;

	if (action == RACE_REUSE_W1)
		/* cancel() waits for the SRCU readers: not from inside one. */
		return (step == RACE_STEP_PENDING_SEEN ||
			step == RACE_STEP_PENDING_CLEARED) && race_reuse();
	if (action == RACE_IRQ_REQUEST_W2 && (irqs_disabled() || in_hardirq()))
		return false;
	race_action = action;
	atomic_set(&race_done, 0);
	/* The interrupt must hit this CPU while it runs this task. */
	preempt_disable();
	if (action == RACE_IRQ_REQUEST_W2) {
		atomic_set(&race_armed, 2);
		irq_work_queue(this_cpu_ptr(&race_irq_work));
	} else {
		atomic_set(&race_armed, 1);
		__apic_send_IPI_self(NMI_VECTOR);
	}
	for (i = 0; i < 1000000 && !atomic_read(&race_done); i++)
		cpu_relax();
	atomic_set(&race_armed, 0);
	preempt_enable();
	return atomic_read(&race_done);
}

/* The module's injection point: between two atomic steps of the protocol. */
static void race_inject(int step)
{
	int i, hit;

	if (current != READ_ONCE(race_task) || in_nmi() ||
	    step < 0 || step >= RACE_NSTEPS)
		return;
	hit = atomic_inc_return(&race_hits[step]);
	for (i = 0; i < ARRAY_SIZE(race_plan); i++) {
		struct race_plan *p = &race_plan[i];

		if (p->action != RACE_NONE && !p->fired &&
		    p->step == step && p->hit == hit)
			p->fired = race_fire(p->action, step);
	}
}

static long race_run(struct race_run __user *arg)
{
	struct unwind_stacktrace trace = { .entries = race_direct };
	struct race_run run;
	int i;

	if (copy_from_user(&run, arg, sizeof(run)))
		return -EFAULT;
	for (i = 0; i < ARRAY_SIZE(run.plan); i++) {
		if (run.plan[i].step >= RACE_NSTEPS ||
		    run.plan[i].action >= RACE_NACTIONS)
			return -EINVAL;
		run.plan[i].fired = 0;
	}
	if (unwind_user(&trace, RACE_TRACE_MAX))
		return -EINVAL;
	/* Undo the last run's RACE_REUSE_W1. */
	if (test_and_clear_bit(1, &race_cancelled)) {
		unwind_deferred_cancel(&race_works[3]);
		if (unwind_deferred_init(&race_works[1], race_callback))
			return -EBUSY;
	}
	race_reused_bit = false;
	race_direct_nr = trace.nr;
	atomic_set(&race_nhanded, 0);
	atomic_set(&race_ncalled, 0);
	for (i = 0; i < RACE_NSTEPS; i++)
		atomic_set(&race_hits[i], 0);
	memcpy(race_plan, run.plan, sizeof(race_plan));
	WRITE_ONCE(race_open, true);
	WRITE_ONCE(race_task, current);
	race_queue_failed = false;
	if (run.fail_queue) {
		/* Only what the failed request set is cleared. */
		u64 cookie = 1;
		int ret;

		unwind_rs_inject_fail_queue();
		ret = unwind_deferred_request(&race_works[1], &cookie);
		race_queue_failed = ret == -ESRCH && !cookie &&
			!(atomic_long_read(&current->unwind_hooks.unwind_mask) &
			  (RACE_MASK_PENDING | BIT(race_works[1].bit)));
	}
	/* The task's own request; the plan fires inside it and afterwards. */
	race_request(0);
	if (run.fail_queue)
		race_request(1);
	return 0;
}

static long race_result(struct race_result __user *arg)
{
	struct race_result r = {};
	int nh, nc, i, j;
	u64 now;

	WRITE_ONCE(race_task, NULL);
	WRITE_ONCE(race_open, false);
	/* A cookie of this later entry must be new. */
	now = unwind_user_get_cookie();
	nh = min(atomic_read(&race_nhanded), RACE_LOG);
	nc = min(atomic_read(&race_ncalled), RACE_LOG);
	r.handed = nh;
	r.callbacks = nc;
	r.direct_nr = race_direct_nr;
	r.late = atomic_xchg(&race_late, 0);
	r.reused_bit = race_reused_bit;
	r.queue_failed = race_queue_failed;
	for (i = 0; i < ARRAY_SIZE(race_plan); i++)
		if (race_plan[i].fired)
			r.fired |= BIT(i);
	for (i = 0; i < nh; i++) {
		struct race_event *h = &race_handed[i];
		int n = 0;

		if (!h->cookie)
			r.zero++;
		if (h->cookie == now)
			r.reused++;
		/* A cancelled work gets no callback. */
		if (h->work < 0 || test_bit(h->work, &race_cancelled))
			continue;
		/* Count each (work, cookie) once. */
		for (j = 0; j < i; j++)
			if (race_handed[j].work == h->work &&
			    race_handed[j].cookie == h->cookie)
				break;
		if (j < i)
			continue;
		for (j = 0; j < nc; j++)
			if (race_called[j].work == h->work &&
			    race_called[j].cookie == h->cookie)
				n++;
		if (!n)
			r.missing++;
		if (n > 1)
			r.duplicate++;
	}
	for (j = 0; j < nc; j++) {
		struct race_event *c = &race_called[j];

		if (!c->cookie)
			r.zero++;
		if (!c->trace_ok)
			r.bad_trace++;
		for (i = 0; i < nh; i++)
			if (race_handed[i].work == c->work &&
			    race_handed[i].cookie == c->cookie)
				break;
		if (i == nh)
			r.unrequested++;
	}
	return copy_to_user(arg, &r, sizeof(r)) ? -EFAULT : 0;
}

static long race_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case RACE_IOC_RUN:
		return race_run((void __user *)arg);
	case RACE_IOC_RESULT:
		return race_result((void __user *)arg);
	}
	return -ENOTTY;
}

static const struct file_operations race_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= race_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

/*
 * hold_table_lock: while 1 is written, a kthread holds the table cache's
 * lock, so the walks that must not wait find it taken (exit walks; see
 * t_sec_exit_walk_lock_busy).
 */
static struct task_struct *race_holder;
static DECLARE_COMPLETION(race_held);
static DEFINE_MUTEX(race_holder_mutex);

static int race_hold(void *unused)
{
	unwind_rs_table_cache_lock();
	complete(&race_held);
	while (!kthread_should_stop())
		schedule_timeout_interruptible(HZ / 100);
	unwind_rs_table_cache_unlock();
	return 0;
}

static void race_hold_stop(void)
{
	if (race_holder)
		kthread_stop(race_holder);
	race_holder = NULL;
}

static ssize_t race_hold_write(struct file *f, const char __user *buf,
			       size_t n, loff_t *pos)
{
	struct task_struct *t;
	bool hold;
	int ret = kstrtobool_from_user(buf, n, &hold);

	if (ret)
		return ret;
	mutex_lock(&race_holder_mutex);
	if (!hold) {
		race_hold_stop();
	} else if (!race_holder) {
		reinit_completion(&race_held);
		t = kthread_run(race_hold, NULL, "race_hold");
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
		} else {
			race_holder = t;
			wait_for_completion(&race_held);
		}
	}
	mutex_unlock(&race_holder_mutex);
	return ret ? ret : n;
}

static const struct file_operations race_hold_fops = {
	.owner	= THIS_MODULE,
	.write	= race_hold_write,
};

static int __init race_init(void)
{
	int i, cpu, ret;

	for_each_possible_cpu(cpu)
		*per_cpu_ptr(&race_irq_work, cpu) = IRQ_WORK_INIT_HARD(race_irq);
	for (i = 0; i < 3; i++) {
		ret = unwind_deferred_init(&race_works[i], race_callback);
		if (ret)
			goto err_works;
	}
	ret = register_nmi_handler(NMI_LOCAL, race_nmi, 0, "unwind_race");
	if (ret)
		goto err_works;
	race_dir = debugfs_create_dir("unwind_race", NULL);
	/* _unsafe: the full proxy has no compat_ioctl; .owner pins us. */
	debugfs_create_file_unsafe("ctl", 0600, race_dir, NULL, &race_fops);
	debugfs_create_file("hold_table_lock", 0200, race_dir, NULL,
			    &race_hold_fops);
	unwind_rs_inject_set(race_inject);
	return 0;

err_works:
	while (i--)
		unwind_deferred_cancel(&race_works[i]);
	return ret;
}

static void __exit race_exit(void)
{
	int i, cpu;

	unwind_rs_inject_set(NULL);
	debugfs_remove(race_dir);
	race_hold_stop();
	unregister_nmi_handler(NMI_LOCAL, "unwind_race");
	for_each_possible_cpu(cpu)
		irq_work_sync(per_cpu_ptr(&race_irq_work, cpu));
	for (i = 0; i < 3; i++)
		unwind_deferred_cancel(&race_works[i]);
	if (test_bit(1, &race_cancelled))
		unwind_deferred_cancel(&race_works[3]);
	/* Cancel waited for callbacks; the injection point runs in them too. */
	synchronize_rcu();
}

module_init(race_init);
module_exit(race_exit);
MODULE_DESCRIPTION("Forced races of unwind_deferred.ko's request protocol");
MODULE_LICENSE("GPL");
