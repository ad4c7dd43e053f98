// SPDX-License-Identifier: GPL-2.0
/*
 * UT_OP_STRESS: user threads request from task context while per-CPU
 * hrtimers request from IRQ and self-NMIs from NMI context, and a kthread
 * loops init/cancel on a churn work.  Every successful request and every
 * callback is logged as (work, cookie); at the end each requested pair of
 * the stable works must have exactly one callback.
 *   arg 0: start, arg 1: stop and verify into struct ut_stress at ptr.
 */
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/apic.h>
#include <asm/irq_regs.h>
#include <asm/nmi.h>

#include "ut.h"

#define UT_EV_REQ	0
#define UT_EV_CB	1
#define UT_LOG_SIZE	(4 * 1024 * 1024)

struct ut_ev {
	u64 cookie;
	u32 work;
	u32 kind;
};

struct ut_cpu {
	struct hrtimer timer;
	unsigned int ticks;
};

static struct ut_ev *ut_log;
static atomic_t ut_log_n;
static atomic64_t ut_dropped, ut_irq_reqs, ut_nmi_reqs;
static bool ut_running;
static DEFINE_PER_CPU(struct ut_cpu, ut_cpus);
static DEFINE_PER_CPU(int, ut_nmi_armed);
static DEFINE_PER_CPU(u32, ut_rng);

/* ut_rand() takes a lock: not usable in NMI.  A per-CPU xorshift. */
static u32 ut_rand(void)
{
	u32 x;

	preempt_disable();
	x = this_cpu_read(ut_rng) ?: 2463534242u + smp_processor_id();
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	this_cpu_write(ut_rng, x);
	preempt_enable();
	return x;
}
static struct task_struct *ut_churn;
static struct unwind_work ut_churn_work;
static atomic_t ut_churn_gen;	/* odd while registered */
static atomic64_t ut_churn_cycles, ut_churn_late;
static DEFINE_MUTEX(ut_stress_mutex);

static void ut_log_ev(u32 work, u64 cookie, u32 kind)
{
	int i = atomic_inc_return(&ut_log_n) - 1;

	if (i >= UT_LOG_SIZE) {
		atomic64_inc(&ut_dropped);
		return;
	}
	ut_log[i].cookie = cookie;
	ut_log[i].work = work;
	ut_log[i].kind = kind;
}

static bool ut_is_stress_task(void)
{
	return !(current->flags & PF_KTHREAD) &&
	       !strncmp(current->comm, "ut_stress", 9);
}

/* Requests on a pseudo-random subset of the works; logs what succeeded. */
static int ut_stress_request(unsigned int seed)
{
	unsigned int w, n = 0;
	u64 cookie;
	int ret;

	for (w = 0; w < UT_NWORKS; w++) {
		if (!((seed >> w) & 1) && w != seed % UT_NWORKS)
			continue;
		ret = unwind_deferred_request(&ut_works[w], &cookie);
		if (ret >= 0) {
			ut_log_ev(w, cookie, UT_EV_REQ);
			n++;
		}
	}
	if (atomic_read(&ut_churn_gen) & 1)
		unwind_deferred_request(&ut_churn_work, &cookie);
	return n;
}

void ut_stress_callback(struct unwind_work *work, u64 cookie)
{
	int w;

	if (!READ_ONCE(ut_log))
		return;
	if (work == &ut_churn_work) {
		/* Even generation: cancel returned, no callback may run. */
		if (!(atomic_read(&ut_churn_gen) & 1))
			atomic64_inc(&ut_churn_late);
		return;
	}
	for (w = 0; w < UT_NWORKS; w++)
		if (work == &ut_works[w])
			ut_log_ev(w, cookie, UT_EV_CB);
}

static int ut_stress_nmi(unsigned int type, struct pt_regs *regs)
{
	if (!this_cpu_read(ut_nmi_armed))
		return NMI_DONE;
	this_cpu_write(ut_nmi_armed, 0);
	if (ut_is_stress_task() && ut_stress_request(ut_rand()))
		atomic64_inc(&ut_nmi_reqs);
	return NMI_HANDLED;
}

static enum hrtimer_restart ut_stress_tick(struct hrtimer *t)
{
	struct ut_cpu *c = container_of(t, struct ut_cpu, timer);

	if (!READ_ONCE(ut_running))
		return HRTIMER_NORESTART;
	if (ut_is_stress_task()) {
		if (ut_stress_request(ut_rand()))
			atomic64_inc(&ut_irq_reqs);
		if (++c->ticks % 3 == 0) {
			this_cpu_write(ut_nmi_armed, 1);
			__apic_send_IPI_self(NMI_VECTOR);
		}
	}
	hrtimer_forward_now(t, UT_US(40));
	return HRTIMER_RESTART;
}

static void ut_start_tick(void *unused)
{
	struct ut_cpu *c = this_cpu_ptr(&ut_cpus);

	hrtimer_start(&c->timer, UT_US(40), HRTIMER_MODE_REL_PINNED_HARD);
}

static void ut_churn_callback(struct unwind_work *work,
			      struct unwind_stacktrace *trace, u64 cookie)
{
	ut_stress_callback(work, cookie);
}

static int ut_churn_fn(void *unused)
{
	while (!kthread_should_stop()) {
		if (unwind_deferred_init(&ut_churn_work, ut_churn_callback) == 0) {
			atomic_inc(&ut_churn_gen);	/* odd: registered */
			usleep_range(200, 400);
			unwind_deferred_cancel(&ut_churn_work);
			/* even: cancel returned, no callback may run now */
			atomic_inc(&ut_churn_gen);
			atomic64_inc(&ut_churn_cycles);
		}
		usleep_range(100, 200);
	}
	return 0;
}

static int ut_ev_cmp(const void *a, const void *b)
{
	const struct ut_ev *x = a, *y = b;

	if (x->work != y->work)
		return x->work < y->work ? -1 : 1;
	if (x->cookie != y->cookie)
		return x->cookie < y->cookie ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static void ut_verify(struct ut_stress *out)
{
	int n = min(atomic_read(&ut_log_n), UT_LOG_SIZE);
	int i = 0;

	sort(ut_log, n, sizeof(*ut_log), ut_ev_cmp, NULL);
	while (i < n) {
		u64 reqs = 0, cbs = 0;
		int j = i;

		while (j < n && ut_log[j].work == ut_log[i].work &&
		       ut_log[j].cookie == ut_log[i].cookie) {
			if (ut_log[j].kind == UT_EV_REQ)
				reqs++;
			else
				cbs++;
			j++;
		}
		out->callbacks += cbs;
		if (reqs && !cbs)
			out->missing++;
		if (cbs > 1)
			out->duplicates++;
		if (cbs && !reqs)
			out->unrequested++;
		i = j;
	}
}

static int ut_stress_start(void)
{
	int cpu, ret;

	if (ut_log)
		return -EBUSY;
	ut_log = vzalloc(array_size(UT_LOG_SIZE, sizeof(*ut_log)));
	if (!ut_log)
		return -ENOMEM;
	atomic_set(&ut_log_n, 0);
	atomic64_set(&ut_dropped, 0);
	atomic64_set(&ut_irq_reqs, 0);
	atomic64_set(&ut_nmi_reqs, 0);
	atomic64_set(&ut_churn_cycles, 0);
	atomic64_set(&ut_churn_late, 0);
	ret = register_nmi_handler(NMI_LOCAL, ut_stress_nmi, 0, "unwind_stress");
	if (ret)
		goto err;
	ut_churn = kthread_run(ut_churn_fn, NULL, "ut_churn");
	if (IS_ERR(ut_churn)) {
		ret = PTR_ERR(ut_churn);
		unregister_nmi_handler(NMI_LOCAL, "unwind_stress");
		goto err;
	}
	WRITE_ONCE(ut_running, true);
	for_each_online_cpu(cpu) {
		struct ut_cpu *c = per_cpu_ptr(&ut_cpus, cpu);

		hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
		c->timer.function = ut_stress_tick;
	}
	on_each_cpu(ut_start_tick, NULL, 1);
	return 0;
err:
	vfree(ut_log);
	ut_log = NULL;
	return ret;
}

/*
 * Stops what a running stress run left running: its timers, its NMI
 * handler and its churn thread, each of which runs this module's text.
 * Under ut_stress_mutex, with ut_log set.
 */
static void ut_stress_halt(void)
{
	int cpu;

	WRITE_ONCE(ut_running, false);
	for_each_online_cpu(cpu)
		hrtimer_cancel(&per_cpu_ptr(&ut_cpus, cpu)->timer);
	unregister_nmi_handler(NMI_LOCAL, "unwind_stress");
	kthread_stop(ut_churn);
}

static int ut_stress_stop(struct ut_deferred *req)
{
	struct ut_stress out;
	struct ut_ev *log;

	if (!ut_log)
		return -EINVAL;
	if (copy_from_user(&out, u64_to_user_ptr(req->ptr), sizeof(out)))
		return -EFAULT;
	/* Task-context requesters are done: the caller joined them. */
	ut_stress_halt();

	memset(&out, 0, sizeof(out));
	ut_verify(&out);
	out.requests = atomic_read(&ut_log_n) - out.callbacks;
	out.irq_requests = atomic64_read(&ut_irq_reqs);
	out.nmi_requests = atomic64_read(&ut_nmi_reqs);
	out.cycles = atomic64_read(&ut_churn_cycles);
	out.late = atomic64_read(&ut_churn_late);
	out.dropped = atomic64_read(&ut_dropped);
	log = ut_log;
	WRITE_ONCE(ut_log, NULL);
	vfree(log);
	if (copy_to_user(u64_to_user_ptr(req->ptr), &out, sizeof(out)))
		return -EFAULT;
	return 0;
}

int ut_stress(struct ut_deferred *req)
{
	int ret;

	if (req->arg == 2) {
		/* One task-context request round from a stress thread. */
		if (!ut_is_stress_task() || !READ_ONCE(ut_running))
			return -EPERM;
		ut_stress_request(ut_rand());
		return 0;
	}
	mutex_lock(&ut_stress_mutex);
	switch (req->arg) {
	case 0:
		ret = ut_stress_start();
		break;
	case 1:
		ret = ut_stress_stop(req);
		break;
	default:
		ret = -EINVAL;
	}
	mutex_unlock(&ut_stress_mutex);
	return ret;
}

/*
 * Module exit: a stress run that its caller never stopped (the caller died,
 * or rmmod came first) is stopped here, or its timers, NMI handler and
 * churn thread would run freed module text, or a reloaded module's at the
 * same address.  A stress request of a task still in the ioctl holds the
 * file open, which pins the module: none runs here.
 */
void ut_stress_exit(void)
{
	struct ut_ev *log;

	mutex_lock(&ut_stress_mutex);
	if (ut_log) {
		ut_stress_halt();
		log = ut_log;
		WRITE_ONCE(ut_log, NULL);
		vfree(log);
	}
	mutex_unlock(&ut_stress_mutex);
}
