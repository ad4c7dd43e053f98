// SPDX-License-Identifier: GPL-2.0
/*
 * The context helpers of src/sys/context.rs: what Rust cannot reach of
 * the current context (inline functions and macros: the preempt count,
 * interrupt flags, page-fault toggles, a task's saved user registers) and
 * the per-CPU cookie counters, each hot path's checks gathered in one call.
 */
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/oom.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/uaccess.h>

#include "sys.h"

/*
 * The user registers saved at kernel entry, NULL for kernel threads and
 * user workers (io_uring, vhost: their saved registers are not a user
 * context), as is_user_task() decides.
 */
struct pt_regs *unwind_rs_user_regs(void)
{
	struct pt_regs *regs;

	if (current->flags & (PF_KTHREAD | PF_USER_WORKER))
		return NULL;
	regs = task_pt_regs(current);
	return user_mode(regs) ? regs : NULL;
}

/*
 * The context checks of a request, in one call: current if it may
 * request (a user task that is not exiting, in an entry from user mode),
 * with its context noted in @c and local interrupts then disabled
 * (@c->flags restores them).  NULL otherwise, interrupts untouched.
 */
struct task_struct *unwind_rs_request_begin(struct unwind_rs_request_ctx *c)
{
	if ((current->flags & PF_EXITING) || !unwind_rs_user_regs())
		return NULL;
	c->in_nmi = in_nmi();
	c->in_hardirq = in_hardirq();
	c->irqs_were_off = irqs_disabled();
	local_irq_save(c->flags);
	return current;
}

/*
 * Whether the walk may sleep (take current's mmap lock, the table cache's
 * mutex), whether or not page faults are disabled for it.
 */
bool unwind_rs_may_sleep(void)
{
	/* preemptible(): a zero preempt count (task context) and IRQs on. */
	if (IS_ENABLED(CONFIG_PREEMPT_COUNT)) {
		if (!preemptible())
			return false;
	} else if (!in_task() || irqs_disabled() || preempt_count()) {
		return false;
	}
	/* A preemptible RCU read side keeps the preempt count at zero. */
	if (rcu_preempt_depth())
		return false;
	/*
	 * A caller holding current's mmap lock would deadlock against a
	 * queued writer when the tables' lookup takes it again; only lockdep
	 * knows about a read hold (a limit in the README).
	 */
#ifdef CONFIG_LOCKDEP
	if (current->mm && lockdep_is_held(&current->mm->mmap_lock) == LOCK_STATE_HELD)
		return false;
#endif
	return true;
}

/*
 * Whether the walk may fault user pages in and read files (the unwind
 * tables): it may sleep, and page faults are not disabled.
 */
bool unwind_rs_can_fault(void)
{
	return unwind_rs_may_sleep() && !pagefault_disabled();
}

/*
 * Whether current is dying: a fatal signal is pending or it is an OOM
 * victim.  Its walk must not wait on anyone (a file server, a fault) nor
 * allocate table buffers from the reserves meant to let it exit.
 */
bool unwind_rs_dying(void)
{
	return fatal_signal_pending(current) || tsk_is_oom_victim(current);
}

/*
 * False from the moment rmmod makes this module GOING, before its exit
 * runs: the kernel's task work can no longer pin it (unwind_hooks_get()),
 * so a request taken from then on would be dropped with its sample.
 */
bool unwind_rs_module_live(void)
{
	return module_is_live(THIS_MODULE);
}

bool unwind_rs_in_nmi(void)
{
	return in_nmi();
}

bool unwind_rs_in_hardirq(void)
{
	return in_hardirq();
}

bool unwind_rs_irqs_disabled(void)
{
	return irqs_disabled();
}

/* Zero-initialised: 6.12 does not relocate a module's per-CPU template. */
static DEFINE_PER_CPU(u64, unwind_rs_cookie_counts);

/*
 * The counters start from the clock, in 16 ns units, at every load: no
 * CPU hands out a cookie every 16 ns, so a count never passes the clock,
 * and a module loaded later starts above every cookie an earlier one
 * handed out (they must never repeat: see cookie.rs).
 */
void unwind_rs_cookie_seed(void)
{
	u64 seed = ktime_get_ns() >> 4;
	int cpu;

	for_each_possible_cpu(cpu)
		per_cpu(unwind_rs_cookie_counts, cpu) = seed;
}

/* This CPU's next count, and the CPU: interrupts are off. */
u64 unwind_rs_cookie_count(unsigned int *cpu)
{
	*cpu = raw_smp_processor_id();
	return this_cpu_inc_return(unwind_rs_cookie_counts);
}

unsigned long unwind_rs_irq_save(void)
{
	unsigned long flags;

	local_irq_save(flags);
	return flags;
}

void unwind_rs_irq_restore(unsigned long flags)
{
	local_irq_restore(flags);
}

/* Inline in linux/uaccess.h: per task, and they nest. */
void unwind_rs_pagefault_disable(void)
{
	pagefault_disable();
}

void unwind_rs_pagefault_enable(void)
{
	pagefault_enable();
}
