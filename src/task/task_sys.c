// SPDX-License-Identifier: GPL-2.0
/*
 * The task helpers of src/task/: every thread, a task's work queue, and
 * the registry of saved mappings that unload sweeps.
 */
#include <linux/list.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/spinlock.h>

#include "task.h"

void unwind_rs_walk_threads(unwind_rs_thread_fn fn, void *arg)
{
	struct task_struct *g, *t;

	rcu_read_lock();
	for_each_process_thread(g, t)
		fn(t, arg);
	rcu_read_unlock();
}

/*
 * Whether @work is on @t's task work queue, without changing it: the walk
 * of task_work_cancel_match(), under the same lock.  task_work_run() takes
 * the whole list with a cmpxchg, then takes and drops pi_lock before it
 * runs (and may free) any entry, so the entries seen here stay valid; a
 * list it already took reads as not queued.  work_exited (an exited task)
 * has ->next NULL and ends the walk.
 */
bool unwind_rs_work_queued(struct task_struct *t, struct callback_head *work)
{
	struct callback_head *p;
	unsigned long flags;
	bool found = false;

	raw_spin_lock_irqsave(&t->pi_lock, flags);
	for (p = READ_ONCE(t->task_works); p; p = READ_ONCE(p->next)) {
		if (p == work) {
			found = true;
			break;
		}
	}
	raw_spin_unlock_irqrestore(&t->pi_lock, flags);
	return found;
}

/*
 * Every set of mappings a task's cache keeps (src/task/saved_maps.rs), so
 * that unload reaches those of tasks off the thread list but not yet
 * freed.  task_free() unlinks from an RCU callback too: irqsave.
 */
static LIST_HEAD(unwind_rs_saved_maps);
static DEFINE_SPINLOCK(unwind_rs_saved_maps_lock);

void unwind_rs_saved_maps_link(struct list_head *node)
{
	unsigned long flags;

	spin_lock_irqsave(&unwind_rs_saved_maps_lock, flags);
	list_add(node, &unwind_rs_saved_maps);
	spin_unlock_irqrestore(&unwind_rs_saved_maps_lock, flags);
}

void unwind_rs_saved_maps_unlink(struct list_head *node)
{
	unsigned long flags;

	spin_lock_irqsave(&unwind_rs_saved_maps_lock, flags);
	list_del_init(node);
	spin_unlock_irqrestore(&unwind_rs_saved_maps_lock, flags);
}

/* Moves to @out, under the lock, every node that @claim takes. */
void unwind_rs_saved_maps_claim(struct list_head *out,
				bool (*claim)(struct list_head *node))
{
	struct list_head *node, *next;
	unsigned long flags;

	spin_lock_irqsave(&unwind_rs_saved_maps_lock, flags);
	list_for_each_safe(node, next, &unwind_rs_saved_maps)
		if (claim(node))
			list_move(node, out);
	spin_unlock_irqrestore(&unwind_rs_saved_maps_lock, flags);
}

/* The first node of @list, taken off it, or NULL: @list is the caller's. */
struct list_head *unwind_rs_list_pop(struct list_head *list)
{
	struct list_head *node;

	if (list_empty(list))
		return NULL;
	node = list->next;
	list_del_init(node);
	return node;
}
