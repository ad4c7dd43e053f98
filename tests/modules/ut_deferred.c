// SPDX-License-Identifier: GPL-2.0
/*
 * UT_IOC_DEFERRED: deferred requests from task, IRQ (hrtimer) and NMI
 * (self-NMI IPI) context, with callbacks recorded per work, and the
 * argument and context checks of the API.
 */
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <asm/apic.h>
#include <asm/irq_regs.h>
#include <asm/nmi.h>

#include "ut.h"

struct unwind_work ut_works[UT_NWORKS];

/* A work that tests cancel it and register it again. */
static struct unwind_work ut_cancel_work;
static bool ut_cancel_registered;
static atomic_t ut_cancel_returned;
static unsigned int ut_cancel_cb_sleep_ms;

static DEFINE_SPINLOCK(ut_lock);
static struct ut_result ut_results[UT_NWORKS + 1];

/* Direct unwinds taken at request time, to compare with the callbacks. */
#define UT_DIRECT_SLOTS 16
static struct ut_direct {
	u64 cookie;
	unsigned int nr;
	unsigned long entries[UT_TRACE_MAX];
} ut_direct[UT_DIRECT_SLOTS];
static unsigned int ut_direct_next;

static int ut_index(struct unwind_work *work)
{
	int i;

	for (i = 0; i < UT_NWORKS; i++)
		if (work == &ut_works[i])
			return i;
	return UT_NWORKS;	/* the cancel work */
}

static bool ut_same_as_direct(u64 cookie, struct unwind_stacktrace *trace)
{
	unsigned int i, j;

	for (i = 0; i < UT_DIRECT_SLOTS; i++) {
		struct ut_direct *d = &ut_direct[i];

		if (d->cookie != cookie)
			continue;
		if (d->nr != min_t(unsigned int, trace->nr, UT_TRACE_MAX))
			return false;
		for (j = 0; j < d->nr; j++)
			if (d->entries[j] != trace->entries[j])
				return false;
		return true;
	}
	return false;
}

static void ut_callback(struct unwind_work *work, struct unwind_stacktrace *trace,
			u64 cookie)
{
	struct ut_result *r = &ut_results[ut_index(work)];
	unsigned int i, n = min_t(unsigned int, trace->nr, UT_TRACE_MAX);
	unsigned long flags;

	ut_stress_callback(work, cookie);
	if (work == &ut_cancel_work && ut_cancel_cb_sleep_ms)
		msleep(ut_cancel_cb_sleep_ms);

	spin_lock_irqsave(&ut_lock, flags);
	r->callbacks++;
	r->cookie = cookie;
	r->pid = current->pid;
	r->exiting = !!(current->flags & PF_EXITING);
	/* An exiting task can no longer queue a task work: refused. */
	if (r->exiting) {
		u64 c;

		r->exit_request = unwind_deferred_request(work, &c);
	}
	r->nr = trace->nr;
	for (i = 0; i < n; i++)
		r->entries[i] = trace->entries[i];
	r->matches_direct = ut_same_as_direct(cookie, trace);
	/* Cancel must wait for us: its flag is only set once it returned. */
	if (work == &ut_cancel_work && atomic_read(&ut_cancel_returned))
		r->bad_after_cancel++;
	spin_unlock_irqrestore(&ut_lock, flags);
}

/* Requests on every work of req->works, req->count times: any context. */
static void ut_request_works(struct ut_deferred *req, struct unwind_work *extra)
{
	bool first = true;
	unsigned int w, c;
	u64 cookie;
	int ret;

	req->cookies_differ = 0;
	for (w = 0; w <= UT_NWORKS; w++) {
		struct unwind_work *work;

		if (w == UT_NWORKS) {
			if (!extra)
				break;
			work = extra;
		} else if (req->works & BIT(w)) {
			work = &ut_works[w];
		} else {
			continue;
		}
		for (c = 0; c < max(req->count, 1U); c++) {
			ret = unwind_deferred_request(work, &cookie);
			if (first) {
				req->ret = ret;
				req->cookie = cookie;
				first = false;
			} else if (cookie != req->cookie) {
				req->cookies_differ++;
			}
			if (w < UT_NWORKS)
				req->rets[w] = ret;
		}
	}
}

/* A direct unwind in the requesting entry, kept for ut_same_as_direct(). */
static void ut_direct_unwind(struct ut_deferred *req)
{
	unsigned long buf[UT_TRACE_MAX];
	struct unwind_stacktrace trace = { .entries = buf };
	struct ut_direct *d;
	unsigned long flags;
	unsigned int i;

	if (unwind_user(&trace, UT_TRACE_MAX))
		return;
	req->direct_nr = trace.nr;
	for (i = 0; i < trace.nr; i++)
		req->direct[i] = buf[i];
	spin_lock_irqsave(&ut_lock, flags);
	d = &ut_direct[ut_direct_next++ % UT_DIRECT_SLOTS];
	d->cookie = req->cookie;
	d->nr = trace.nr;
	memcpy(d->entries, buf, trace.nr * sizeof(*buf));
	spin_unlock_irqrestore(&ut_lock, flags);
}

/* --- NMI ---------------------------------------------------------------- */

static struct ut_deferred *ut_nmi_req;
static atomic_t ut_nmi_armed;
static atomic_t ut_nmi_done;

static int ut_nmi_handler(unsigned int type, struct pt_regs *regs)
{
	if (atomic_cmpxchg(&ut_nmi_armed, 1, 0) != 1)
		return NMI_DONE;
	ut_request_works(ut_nmi_req, NULL);
	/* Tell the caller the request really came from NMI context. */
	ut_nmi_req->arg = in_nmi() ? 1 : 0;
	atomic_set(&ut_nmi_done, 1);
	return NMI_HANDLED;
}

static int ut_request_nmi(struct ut_deferred *req)
{
	int i;

	atomic_set(&ut_nmi_done, 0);
	ut_nmi_req = req;
	preempt_disable();
	atomic_set(&ut_nmi_armed, 1);
	__apic_send_IPI_self(NMI_VECTOR);
	for (i = 0; i < 100000 && !atomic_read(&ut_nmi_done); i++)
		udelay(1);
	atomic_set(&ut_nmi_armed, 0);
	preempt_enable();
	return atomic_read(&ut_nmi_done) ? 0 : -ETIMEDOUT;
}

/* --- IRQ (hrtimer) ------------------------------------------------------ */

static struct hrtimer ut_timer;
static struct ut_deferred ut_irq_req;
static pid_t ut_irq_pid;
static int ut_irq_tries;
/* 0 idle, 1 armed, 2 done, 3 gave up */
static atomic_t ut_irq_state;

static enum hrtimer_restart ut_timer_fn(struct hrtimer *t)
{
	struct pt_regs *regs = get_irq_regs();

	/* Wait until the timer interrupts our task in user mode. */
	if (current->pid != ut_irq_pid || !regs || !user_mode(regs)) {
		if (++ut_irq_tries > 2000) {
			atomic_set(&ut_irq_state, 3);
			return HRTIMER_NORESTART;
		}
		hrtimer_forward_now(t, UT_US(50));
		return HRTIMER_RESTART;
	}
	ut_request_works(&ut_irq_req, NULL);
	ut_irq_req.arg = in_hardirq() ? 1 : 0;
	atomic_set(&ut_irq_state, 2);
	return HRTIMER_NORESTART;
}

/* --- checks ------------------------------------------------------------- */

static void ut_nop_callback(struct unwind_work *work,
			    struct unwind_stacktrace *trace, u64 cookie)
{
}

#define UT_CHECK(bit, cond)						\
do {									\
	if (!(cond)) {							\
		fails |= BIT(bit);					\
		pr_err("unwind_test: check %d failed: %s\n", bit, #cond); \
	}								\
} while (0)

static int ut_errors(void)
{
	static struct unwind_work w, zero;
	u64 cookie = 42;
	int fails = 0;

	UT_CHECK(0, unwind_deferred_init(NULL, ut_nop_callback) == -EINVAL);
	UT_CHECK(1, unwind_deferred_init(&w, NULL) == -EINVAL);
	UT_CHECK(2, unwind_deferred_init(&ut_works[0], ut_callback) == -EBUSY);
	UT_CHECK(3, unwind_deferred_request(NULL, &cookie) == -EINVAL && cookie == 0);
	UT_CHECK(4, unwind_deferred_request(&ut_works[0], NULL) == -EINVAL);
	memset(&zero, 0, sizeof(zero));
	cookie = 42;
	UT_CHECK(5, unwind_deferred_request(&zero, &cookie) == -EINVAL && cookie == 0);
	zero.bit = 70;
	UT_CHECK(6, unwind_deferred_request(&zero, &cookie) == -EINVAL);
	zero.bit = -5;
	UT_CHECK(7, unwind_deferred_request(&zero, &cookie) == -EINVAL);
	zero.bit = UNWIND_USED_BIT;
	UT_CHECK(8, unwind_deferred_request(&zero, &cookie) == -EINVAL);
	/* Another work's bit with the wrong struct. */
	zero.bit = ut_works[1].bit;
	UT_CHECK(9, unwind_deferred_request(&zero, &cookie) == -EINVAL);
	UT_CHECK(10, unwind_deferred_init(&w, ut_nop_callback) == 0);
	UT_CHECK(11, unwind_deferred_init(&w, ut_nop_callback) == -EBUSY);
	unwind_deferred_cancel(&w);
	UT_CHECK(12, w.bit == -1);
	cookie = 42;
	UT_CHECK(13, unwind_deferred_request(&w, &cookie) == -EINVAL && cookie == 0);
	unwind_deferred_cancel(&w);	/* twice: ignored */
	unwind_deferred_cancel(NULL);	/* ignored */
	unwind_deferred_cancel(&zero);	/* never registered: ignored */
	UT_CHECK(14, unwind_user_faultable(NULL) == -EINVAL);
	return fails;
}

static struct unwind_work ut_mask_works[BITS_PER_LONG + 1];

/* Takes every free bit; returns how many, the next init's error in *next. */
static int ut_mask(struct ut_deferred *req)
{
	int n = 0, i;

	while (n < BITS_PER_LONG &&
	       unwind_deferred_init(&ut_mask_works[n], ut_nop_callback) == 0)
		n++;
	req->rets[0] = unwind_deferred_init(&ut_mask_works[BITS_PER_LONG],
					    ut_nop_callback);
	if (req->rets[0] == 0)
		unwind_deferred_cancel(&ut_mask_works[BITS_PER_LONG]);
	/* A cancelled work frees its bit for the next one. */
	if (n) {
		unwind_deferred_cancel(&ut_mask_works[n - 1]);
		req->rets[1] = unwind_deferred_init(&ut_mask_works[BITS_PER_LONG],
						    ut_nop_callback);
		unwind_deferred_cancel(&ut_mask_works[BITS_PER_LONG]);
		n--;
	}
	for (i = 0; i < n; i++)
		unwind_deferred_cancel(&ut_mask_works[i]);
	/* Bits in use besides ours: the test works and the cancel work. */
	req->arg = UT_NWORKS + (ut_cancel_registered ? 1 : 0);
	return n + 1;
}

static DECLARE_COMPLETION(ut_kthread_done);
static int ut_kthread_fails;

static int ut_kthread_fn(void *data)
{
	unsigned long buf[4];
	struct unwind_stacktrace trace = { .entries = buf };
	u64 cookie = 42;
	int fails = 0;

	UT_CHECK(16, unwind_deferred_request(&ut_works[0], &cookie) == -EINVAL &&
		 cookie == 0);
	UT_CHECK(17, unwind_user_faultable(&trace) == -EINVAL && trace.entries == buf);
	UT_CHECK(18, unwind_user(&trace, 4) == 0 && trace.nr == 0);
	UT_CHECK(19, unwind_user_get_cookie() == 0);
	ut_kthread_fails = fails;
	complete(&ut_kthread_done);
	return 0;
}

static struct hrtimer ut_ctx_timer;
static atomic_t ut_ctx_fails;
static atomic_t ut_ctx_done;
static pid_t ut_ctx_pid;

static enum hrtimer_restart ut_ctx_timer_fn(struct hrtimer *t)
{
	unsigned long buf[4];
	struct unwind_stacktrace trace = { .entries = buf };
	int fails = 0;

	/* Hard IRQ on top of our (busy) task: no faults allowed. */
	if (current->pid != ut_ctx_pid) {
		hrtimer_forward_now(t, UT_US(50));
		return HRTIMER_RESTART;
	}
	UT_CHECK(20, unwind_user_faultable(&trace) == -EINVAL);
	UT_CHECK(21, unwind_user(&trace, 4) == -EINVAL);
	atomic_set(&ut_ctx_fails, fails);
	atomic_set(&ut_ctx_done, 1);
	return HRTIMER_NORESTART;
}

static int ut_context_errors(void)
{
	unsigned long buf[4];
	struct unwind_stacktrace trace = { .entries = buf };
	struct task_struct *t;
	int fails = 0, i;

	reinit_completion(&ut_kthread_done);
	t = kthread_run(ut_kthread_fn, NULL, "ut_kthread");
	if (IS_ERR(t))
		return PTR_ERR(t);
	wait_for_completion(&ut_kthread_done);
	fails |= ut_kthread_fails;

	preempt_disable();
	UT_CHECK(22, unwind_user_faultable(&trace) == -EINVAL);
	UT_CHECK(23, unwind_user(&trace, 4) == -EINVAL);
	preempt_enable();

	atomic_set(&ut_ctx_done, 0);
	ut_ctx_pid = current->pid;
	hrtimer_start(&ut_ctx_timer, UT_US(100), HRTIMER_MODE_REL_PINNED_HARD);
	/* Busy, so that the timer interrupts this task. */
	for (i = 0; i < 200000 && !atomic_read(&ut_ctx_done); i++)
		udelay(1);
	UT_CHECK(24, atomic_read(&ut_ctx_done));
	hrtimer_cancel(&ut_ctx_timer);
	return fails | atomic_read(&ut_ctx_fails);
}

/*
 * Kernel threads that keep CPU 0 busy, for perf's kernel-thread samples:
 * each held (a task reference) until module exit stops it, so that none
 * runs this module's text after it is freed.  Under ut_mutex.
 */
#define UT_BUSY_MAX 8
static struct task_struct *ut_busy[UT_BUSY_MAX];

static int ut_busy_fn(void *data)
{
	unsigned long end = jiffies + msecs_to_jiffies((unsigned long)data);

	while (time_before(jiffies, end) && !kthread_should_stop()) {
		cpu_relax();
		cond_resched();
	}
	return 0;
}

/* Stops busy thread @i (at once if it still spins) and drops it. */
static void ut_busy_reap(int i)
{
	kthread_stop(ut_busy[i]);
	put_task_struct(ut_busy[i]);
	ut_busy[i] = NULL;
}

static int ut_busy_kthread(unsigned int ms)
{
	struct task_struct *t;
	int i, free = -1;

	/* A free slot, or that of a thread whose time is up. */
	for (i = 0; i < UT_BUSY_MAX && free < 0; i++) {
		if (ut_busy[i] && READ_ONCE(ut_busy[i]->exit_state))
			ut_busy_reap(i);
		if (!ut_busy[i])
			free = i;
	}
	if (free < 0)
		return -EBUSY;
	t = kthread_create(ut_busy_fn, (void *)(unsigned long)ms, "ut_busy");
	if (IS_ERR(t))
		return PTR_ERR(t);
	get_task_struct(t);
	ut_busy[free] = t;
	kthread_bind(t, 0);
	wake_up_process(t);
	return t->pid;
}

/* --- ioctl -------------------------------------------------------------- */

static int ut_copy_result(struct ut_deferred *req)
{
	struct ut_result r;
	unsigned long flags;

	if (req->arg > UT_NWORKS)
		return -EINVAL;
	spin_lock_irqsave(&ut_lock, flags);
	r = ut_results[req->arg];
	spin_unlock_irqrestore(&ut_lock, flags);
	if (copy_to_user(u64_to_user_ptr(req->ptr), &r, sizeof(r)))
		return -EFAULT;
	return 0;
}

static int ut_deferred_op(struct ut_deferred *req)
{
	unsigned long flags;

	switch (req->op) {
	case UT_OP_RESET:
		spin_lock_irqsave(&ut_lock, flags);
		memset(ut_results, 0, sizeof(ut_results));
		memset(ut_direct, 0, sizeof(ut_direct));
		spin_unlock_irqrestore(&ut_lock, flags);
		return 0;
	case UT_OP_REQUEST:
		ut_request_works(req, NULL);
		ut_direct_unwind(req);
		return 0;
	case UT_OP_REQUEST_SIGNAL:
		ut_request_works(req, NULL);
		ut_direct_unwind(req);
		send_sig(SIGUSR1, current, 0);
		return 0;
	case UT_OP_REQUEST_NMI:
		if (ut_request_nmi(req))
			return -ETIMEDOUT;
		ut_direct_unwind(req);
		return 0;
	case UT_OP_REQUEST_IRQ:
		if (atomic_read(&ut_irq_state) == 1)
			return -EBUSY;
		hrtimer_cancel(&ut_timer);
		ut_irq_req = *req;
		ut_irq_pid = current->pid;
		ut_irq_tries = 0;
		atomic_set(&ut_irq_state, 1);
		hrtimer_start(&ut_timer, UT_US(req->arg), HRTIMER_MODE_REL_PINNED_HARD);
		return 0;
	case UT_OP_IRQ_RESULT: {
		int state = atomic_read(&ut_irq_state);

		if (state == 2 || state == 3) {
			u32 arg = ut_irq_req.arg;

			*req = ut_irq_req;
			req->op = UT_OP_IRQ_RESULT;
			/* arg: 0 pending, 1 done in hard IRQ, 2 done elsewhere, 3 gave up */
			req->arg = state == 3 ? 3 : (arg ? 1 : 2);
		} else {
			req->arg = 0;
		}
		return 0;
	}
	case UT_OP_RESULT:
		return ut_copy_result(req);
	case UT_OP_GET_COOKIE: {
		u64 a = unwind_user_get_cookie(), b = unwind_user_get_cookie();

		req->cookie = a;
		req->ret = (a && a == b) ? 0 : -EINVAL;
		/* A request in the same entry shares the cookie. */
		ut_request_works(req, NULL);
		if (req->works && req->cookie != a)
			req->cookies_differ++;
		req->cookie = a;
		return 0;
	}
	case UT_OP_ERRORS:
		req->ret = ut_errors();
		return 0;
	case UT_OP_CONTEXT_ERRORS:
		req->ret = ut_context_errors();
		return 0;
	case UT_OP_MASK:
		req->ret = ut_mask(req);
		return 0;
	case UT_OP_CANCEL_SLEEP:
		if (!ut_cancel_registered)
			return -ENOENT;
		ut_cancel_cb_sleep_ms = req->count;
		req->count = 1;
		ut_request_works(req, &ut_cancel_work);
		if (req->arg)
			msleep(req->arg);
		return 0;
	case UT_OP_CANCEL:
		if (!ut_cancel_registered)
			return -ENOENT;
		unwind_deferred_cancel(&ut_cancel_work);
		atomic_set(&ut_cancel_returned, 1);
		ut_cancel_registered = false;
		req->ret = ut_cancel_work.bit;
		return 0;
	case UT_OP_CANCEL_INIT:
		if (ut_cancel_registered)
			return 0;
		atomic_set(&ut_cancel_returned, 0);
		ut_cancel_cb_sleep_ms = 0;
		req->ret = unwind_deferred_init(&ut_cancel_work, ut_callback);
		ut_cancel_registered = !req->ret;
		return 0;
	case UT_OP_STRESS:
		return ut_stress(req);
	case UT_OP_BUSY_KTHREAD:
		req->ret = ut_busy_kthread(min(req->arg, 5000U));
		return 0;
	}
	return -EOPNOTSUPP;
}

static DEFINE_MUTEX(ut_mutex);

long ut_ioctl_deferred(void __user *arg)
{
	struct ut_deferred *req;
	long ret;

	req = kmalloc(sizeof(*req), GFP_KERNEL);
	if (!req)
		return -ENOMEM;
	ret = -EFAULT;
	if (copy_from_user(req, arg, sizeof(*req)))
		goto out;
	/* Cancel ops and the stress run must not wait behind a sleeper. */
	if (req->op == UT_OP_CANCEL_SLEEP || req->op == UT_OP_CANCEL ||
	    req->op == UT_OP_STRESS || req->op == UT_OP_REQUEST ||
	    req->op == UT_OP_REQUEST_SIGNAL) {
		ret = ut_deferred_op(req);
	} else {
		mutex_lock(&ut_mutex);
		ret = ut_deferred_op(req);
		mutex_unlock(&ut_mutex);
	}
	if (!ret && copy_to_user(arg, req, sizeof(*req)))
		ret = -EFAULT;
out:
	kfree(req);
	return ret;
}

int ut_deferred_init(void)
{
	int i, ret;

	for (i = 0; i < UT_NWORKS; i++) {
		ret = unwind_deferred_init(&ut_works[i], ut_callback);
		if (ret) {
			while (--i >= 0)
				unwind_deferred_cancel(&ut_works[i]);
			return ret;
		}
	}
	ret = unwind_deferred_init(&ut_cancel_work, ut_callback);
	if (ret)
		goto err;
	ut_cancel_registered = true;
	ret = register_nmi_handler(NMI_LOCAL, ut_nmi_handler, 0, "unwind_test");
	if (ret)
		goto err_cancel;
	hrtimer_init(&ut_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	ut_timer.function = ut_timer_fn;
	hrtimer_init(&ut_ctx_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	ut_ctx_timer.function = ut_ctx_timer_fn;
	return 0;

err_cancel:
	unwind_deferred_cancel(&ut_cancel_work);
err:
	for (i = 0; i < UT_NWORKS; i++)
		unwind_deferred_cancel(&ut_works[i]);
	return ret;
}

void ut_deferred_exit(void)
{
	int i;

	ut_stress_exit();
	for (i = 0; i < UT_BUSY_MAX; i++)
		if (ut_busy[i])
			ut_busy_reap(i);
	hrtimer_cancel(&ut_timer);
	hrtimer_cancel(&ut_ctx_timer);
	unregister_nmi_handler(NMI_LOCAL, "unwind_test");
	if (ut_cancel_registered)
		unwind_deferred_cancel(&ut_cancel_work);
	for (i = 0; i < UT_NWORKS; i++)
		unwind_deferred_cancel(&ut_works[i]);
}
