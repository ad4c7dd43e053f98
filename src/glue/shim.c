// SPDX-License-Identifier: GPL-2.0
/*
 * Thin C part of unwind_deferred.ko: the EXPORT_SYMBOL_GPL()s of the Rust
 * functions and wrappers for what Rust cannot reach (inline functions,
 * macros), gathered per hot path so that each costs one call.  The only
 * logic here is the frame-pointer loop, which must stay inside one user
 * access section (unwind_rs_fp_frames()).
 */
#include <linux/debugfs.h>
#include <linux/export.h>
#include <linux/fs.h>
#include <linux/list.h>
#include <linux/hardirq.h>
#include <linux/irqflags.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/ptrace.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <linux/unwind_deferred.h>

#include "shim.h"

/*
 * The Rust side copies these C layouts (src/unwind/fp.rs,
 * src/deferred/mod.rs, src/task/cache.rs) and asserts the same numbers:
 * a change on either side breaks the build.
 */
static_assert(sizeof(struct unwind_work) == 32 &&
	      offsetof(struct unwind_work, func) == 16 &&
	      offsetof(struct unwind_work, bit) == 24);
static_assert(sizeof(struct unwind_stacktrace) == 16 &&
	      offsetof(struct unwind_stacktrace, entries) == 8);
static_assert(sizeof(struct unwind_user_state) == 56 &&
	      offsetof(struct unwind_user_state, ss_base) == 32 &&
	      offsetof(struct unwind_user_state, current_type) == 40 &&
	      offsetof(struct unwind_user_state, ws) == 44 &&
	      offsetof(struct unwind_user_state, done) == 48 &&
	      offsetof(struct unwind_user_state, topmost) == 49);
static_assert(sizeof(struct unwind_rs_vma) == 24 &&
	      sizeof(struct unwind_rs_file_id) == 56 &&
	      offsetof(struct unwind_rs_file_id, ctime_nsec) == 40 &&
	      offsetof(struct unwind_rs_file_id, generation) == 48 &&
	      sizeof(struct unwind_rs_mm_key) == 24 &&
	      sizeof(struct unwind_rs_fp_walk) == 56 &&
	      sizeof(struct unwind_rs_row_slot) == 16 &&
	      offsetof(struct unwind_rs_row_slot, common) == 12 &&
	      sizeof(struct unwind_rs_memo_run) == 56 &&
	      offsetof(struct unwind_rs_memo_run, nr) == 40 &&
	      offsetof(struct unwind_rs_memo_run, done) == 52 &&
	      sizeof(struct unwind_rs_walk_ctx) == 64 &&
	      sizeof(struct unwind_rs_request_ctx) == 16 &&
	      offsetof(struct unwind_rs_walk_ctx, cs) == 56 &&
	      offsetof(struct unwind_rs_fp_walk, nr) == 48 &&
	      offsetof(struct unwind_rs_mm_key, seq) == 16);
static_assert(offsetof(struct unwind_cache, nr_entries) == 8 &&
	      offsetof(struct unwind_cache, entries) == 16);

/* src/glue/perf.rs declares this one by hand: the bindings lack perf. */
static_assert(__builtin_types_compatible_p(typeof(&perf_callchain_deferred),
	      int (*)(u64, const unsigned long *, unsigned int)));

/*
 * The API is implemented in Rust (src/glue/exports.rs); the prototypes in
 * include/linux/unwind_*.h are the contract it must match.  Exported the
 * way rust/exports.c exports the kernel crate's symbols: by name, away
 * from a C definition.
 */
#define UNWIND_RS_EXPORT(sym) EXPORT_SYMBOL_GPL(sym)

UNWIND_RS_EXPORT(unwind_user);
UNWIND_RS_EXPORT(unwind_user_start);
UNWIND_RS_EXPORT(unwind_user_next);
UNWIND_RS_EXPORT(unwind_user_faultable);
UNWIND_RS_EXPORT(unwind_deferred_init);
UNWIND_RS_EXPORT(unwind_deferred_request);
UNWIND_RS_EXPORT(unwind_deferred_cancel);
UNWIND_RS_EXPORT(unwind_user_get_cookie);
#ifdef UNWIND_RS_INJECT
/* Test builds only: see src/deferred/inject.rs and tests/modules/race/. */
UNWIND_RS_EXPORT(unwind_rs_inject_set);
UNWIND_RS_EXPORT(unwind_rs_inject_fail_queue);
#endif

static struct dentry *unwind_rs_debugfs;

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
 * Everything a walk of current's user stack starts from, in one call
 * (each would be a call of its own from Rust): false without user
 * registers (@c untouched).  SFrame needs faults allowed and the cache
 * on; the memo's key only matters then.
 */
bool unwind_rs_walk_ctx(struct unwind_rs_walk_ctx *c)
{
	struct pt_regs *regs = unwind_rs_user_regs();

	if (!regs)
		return false;
	c->task = current;
	c->ip = regs->ip;
	c->sp = regs->sp;
	c->bp = regs->bp;
	c->cs = regs->cs;
	c->ss = regs->ss;
	c->compat = !user_64bit_mode(regs);
	c->can_fault = unwind_rs_can_fault();
	c->sframe = c->can_fault && unwind_rs_sframe_cache_kb();
	c->key_valid = c->sframe && unwind_rs_mm_key(&c->key);
	return true;
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
 * Two consecutive user words (8 or 4 bytes each) at @addr, without
 * faulting: __get_user() is a macro Rust cannot call, and it is much
 * cheaper than copy_from_user_nofault()'s generic copy for 16 bytes.
 */
int unwind_rs_read_words_nofault(unsigned long addr, unsigned long *out, bool compat)
{
	int ret;

	if (compat) {
		u32 __user *p = (u32 __user *)addr;
		u32 a, b;

		if (!access_ok(p, 2 * sizeof(*p)))
			return -EFAULT;
		pagefault_disable();
		ret = __get_user(a, p) ?: __get_user(b, p + 1);
		pagefault_enable();
		if (!ret) {
			out[0] = a;
			out[1] = b;
		}
	} else {
		unsigned long __user *p = (unsigned long __user *)addr;

		if (!access_ok(p, 2 * sizeof(*p)))
			return -EFAULT;
		pagefault_disable();
		ret = __get_user(out[0], p) ?: __get_user(out[1], p + 1);
		pagefault_enable();
	}
	return ret;
}

/*
 * The slots of a frame in the common form (src/unwind/table/common.rs):
 * @out[1] the return address at @cfa - 8 and, if @fp_slot, @out[0] the
 * caller's FP at @cfa - 8 * @fp_slot (2 to 15), in one user access
 * section, without faulting: 0 or -EFAULT.
 */
int unwind_rs_read_cfa_slots_nofault(unsigned long cfa, unsigned int fp_slot,
				     unsigned long *out)
{
	unsigned long lo = cfa - 8 * (fp_slot ?: 1);

	if (fp_slot > 15 || cfa < 8 * 16)
		return -EFAULT;
	pagefault_disable();
	if (!user_read_access_begin((void __user *)lo, cfa - lo))
		goto fail;
	unsafe_get_user(out[1], (unsigned long __user *)(cfa - 8), fault);
	if (fp_slot)
		unsafe_get_user(out[0], (unsigned long __user *)lo, fault);
	user_read_access_end();
	pagefault_enable();
	return 0;
fault:
	user_read_access_end();
fail:
	pagefault_enable();
	return -EFAULT;
}

/*
 * The CFA of a frame at @sp, @fp by the rule (@off, @cfa_fp), or 0 where
 * it fails table::step()'s checks: no overflow, above SP, 8-byte aligned
 * (and room for the slots below it, as Common::cfa()).  The rule comes in
 * registers: read through the struct it would be reloaded after every
 * store.
 */
static __always_inline unsigned long
unwind_rs_common_cfa(long off, bool cfa_fp, unsigned long sp, unsigned long fp)
{
	unsigned long base = cfa_fp ? fp : sp, cfa = base + off;

	if ((off >= 0 ? cfa < base : cfa > base) || cfa <= sp ||
	    (cfa & 7) || cfa < 8 * 16)
		return 0;
	return cfa;
}

/* The memo's slot of @pc: src/unwind/table_find.rs row_hash(). */
static __always_inline unsigned int unwind_rs_row_hash(unsigned long pc)
{
	return (pc ^ (pc >> 5) ^ (pc >> 10)) % UNWIND_RS_ROW_SLOTS;
}

/* A row of the common form, unpacked from a memo slot. */
struct unwind_rs_common {
	long off;
	unsigned long span;	/* the slots' span below the CFA */
	unsigned int fp_slot;
	unsigned int tag;	/* from .eh_frame */
	bool cfa_fp;
};

/*
 * The memo's row for @pc in the common form into @c: false if the memo
 * does not hold it in that form, or holds the outermost frame's (@w->done).
 */
static __always_inline bool unwind_rs_memo_row(struct unwind_rs_memo_run *w,
					       unsigned long pc,
					       struct unwind_rs_common *c)
{
	const struct unwind_rs_row_slot *r = &w->rows[unwind_rs_row_hash(pc)];
	unsigned int p = r->common;

	if (r->pc != pc || !pc)
		return false;
	if (r->flags & 4) {
		w->done = true;
		return false;
	}
	if (!(p & 1))
		return false;
	c->cfa_fp = p & 2;
	c->tag = (p >> 2) & 1;
	c->fp_slot = (p >> 3) & 15;
	c->off = (int)p >> 7;
	c->span = 8 * (c->fp_slot ?: 1);
	return true;
}

/*
 * Table steps of a 64-bit user stack in one user access section, for as
 * long as the memo holds each frame's row (that of its return address
 * minus one) in the common form: fp.rs's common_step() for each, with
 * table::step()'s checks (the CFA must not overflow, must be above SP and
 * 8-byte aligned).  A frame that returns to the same address as the one
 * before (recursion) reuses the row.  Never faults.  Stops with the state
 * at the first frame whose row the memo does not hold in that form, whose
 * CFA fails a check or whose slots are not present, at the outermost frame
 * (@w->done), or when @w->max entries are written; fp.rs goes on from
 * there.  The memo's slots are the walking task's own: nothing else
 * writes them meanwhile.
 */
void unwind_rs_memo_run(struct unwind_rs_memo_run *w)
{
	unsigned long ip = w->ip, sp = w->sp, fp = w->fp, cfa, ra, b;
	unsigned long *out = w->entries + w->nr, *end = w->entries + w->max;
	unsigned long *seg;
	unsigned int eh = 0;
	struct unwind_rs_common c;

	if (out >= end || !unwind_rs_memo_row(w, ip - 1, &c))
		goto out;
	cfa = unwind_rs_common_cfa(c.off, c.cfa_fp, sp, fp);
	if (!cfa)
		goto out;
	/* The first frame's slots open the section; later ones are checked. */
	pagefault_disable();
	if (!user_read_access_begin((void __user *)(cfa - c.span), c.span)) {
		pagefault_enable();
		goto out;
	}
	for (;;) {
		/*
		 * The frames of one row: while they return to the same
		 * address (recursion), the row stays.
		 */
		const unsigned long again = ip;

		seg = out;
		for (;;) {
			unsafe_get_user(ra, (unsigned long __user *)(cfa - 8), fault);
			if (c.fp_slot) {
				unsafe_get_user(b, (unsigned long __user *)(cfa - c.span), fault);
				fp = b;
			}
			sp = cfa;
			ip = ra;
			*out++ = ra;
			if (out == end || ra != again)
				break;
			cfa = unwind_rs_common_cfa(c.off, c.cfa_fp, sp, fp);
			if (!cfa || !access_ok((void __user *)(cfa - c.span), c.span))
				goto stop;
		}
		if (c.tag)
			eh += out - seg;
		if (out == end || !unwind_rs_memo_row(w, ip - 1, &c))
			break;
		cfa = unwind_rs_common_cfa(c.off, c.cfa_fp, sp, fp);
		if (!cfa || !access_ok((void __user *)(cfa - c.span), c.span))
			break;
	}
	goto done;
fault:	/* The state stays at the last frame stepped. */
stop:
	if (c.tag)
		eh += out - seg;
done:
	user_read_access_end();
	pagefault_enable();
out:
	w->ip = ip;
	w->sp = sp;
	w->fp = fp;
	w->eh = eh;
	w->nr = out - w->entries;
}

/*
 * Frame-pointer steps of a 64-bit user stack in one user access section,
 * for as long as the IPs stay in [lo, hi) (a mapping without SFrame data,
 * src/unwind/fp.rs decides).  The steps are fp.rs's step_fp(), written
 * here because a user access section cannot span calls into Rust: the
 * per-frame helper call, access_ok() and pagefault toggle it saves are most
 * of a frame's cost.  Never faults: on a page that is not present it stops
 * with -EFAULT and the state at that frame, for fp.rs to fault it in.
 * Returns 0 when the IP left the range or @w->max entries are written, 1
 * at the end of the chain (a frame that does not look right).
 */
int unwind_rs_fp_frames(struct unwind_rs_fp_walk *w)
{
	unsigned long lo = w->lo, span = w->hi - w->lo, a = w->fp, b, ra;
	unsigned long *out = w->entries + w->nr, *end = w->entries + w->max;
	unsigned long *last = end - 1;
	int ret;

	if (w->nr >= w->max)
		return 0;
	/*
	 * A frame below the stack pointer (0 included), outside user memory
	 * or not aligned ends the chain: checked for this frame here (user
	 * memory by user_read_access_begin()), for each caller's before the
	 * loop moves on to it.
	 */
	if (a < w->sp || (a & 7))
		return 1;
	pagefault_disable();
	if (!user_read_access_begin((void __user *)a, 16)) {
		pagefault_enable();
		return 1;
	}
	/*
	 * Two frames per iteration, the frame addresses alternating between
	 * a and b, so that nothing moves between frames; each exit sets the
	 * state from the registers it has.  The IP range is one unsigned
	 * compare (ra - 1 outside [lo, lo + span)).
	 */
	for (;;) {
		/* Keeps the compiler from deriving more counters from it. */
		OPTIMIZER_HIDE_VAR(out);
		unsafe_get_user(b, (unsigned long __user *)a, fault_a);
		unsafe_get_user(ra, (unsigned long __user *)(a + 8), fault_a);
		out[0] = ra;
		if (ra - 1 - lo >= span || out == last ||
		    b < a + 16 || (b & 7) || !access_ok((void __user *)b, 16)) {
			out++;
			goto at_b;
		}
		unsafe_get_user(a, (unsigned long __user *)b, fault_b1);
		unsafe_get_user(ra, (unsigned long __user *)(b + 8), fault_b1);
		out[1] = ra;
		out += 2;
		if (ra - 1 - lo >= span || out == end ||
		    a < b + 16 || (a & 7) || !access_ok((void __user *)a, 16))
			goto at_a;
	}
at_b:	/* The state is b's frame, the caller's of the last step. */
	w->sp = a + 16;
	w->fp = b;
	goto done;
at_a:
	w->sp = b + 16;
	w->fp = a;
done:
	/*
	 * Which test ended the loop is decided once, here: the IP left the
	 * range or the entries are full (0), else the next frame does not
	 * look like one (1).  Hidden, or the compiler keeps a flag for it in
	 * the loop.
	 */
	OPTIMIZER_HIDE_VAR(ra);
	ret = ra - 1 - lo >= span || out == end ? 0 : 1;
	w->ip = ra;
	user_read_access_end();
	pagefault_enable();
	w->nr = out - w->entries;
	return ret;
fault_b1:
	out++;
	a = b;
fault_a:
	/*
	 * The state stays at the frame whose page is not present, for the
	 * caller to fault it in.  Its stack pointer becomes the frame's own
	 * address: the frame-pointer step only checks that the frame is not
	 * below it, and this loop checked that it is above its callee's.
	 */
	user_read_access_end();
	pagefault_enable();
	if (out != w->entries + w->nr) {
		w->ip = out[-1];
		w->sp = a;
	}
	w->fp = a;
	w->nr = out - w->entries;
	return -EFAULT;
}

/*
 * Whether the walk may sleep: fault user pages in, take current's mmap
 * lock, read files (the unwind tables).
 */
bool unwind_rs_can_fault(void)
{
	/* preemptible(): a zero preempt count (task context) and IRQs on. */
	if (IS_ENABLED(CONFIG_PREEMPT_COUNT)) {
		if (!preemptible() || pagefault_disabled())
			return false;
	} else if (!in_task() || irqs_disabled() || faulthandler_disabled()) {
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

static u64 (*unwind_rs_pending_unqueued_fn)(void);

static int unwind_rs_pending_unqueued_get(void *data, u64 *val)
{
	*val = unwind_rs_pending_unqueued_fn();
	return 0;
}
/* The _unsafe file's accesses are guarded: removal waits for readers. */
DEFINE_DEBUGFS_ATTRIBUTE(unwind_rs_pending_unqueued_fops,
			 unwind_rs_pending_unqueued_get, NULL, "%llu\n");

/*
 * Errors are ignored, as kernel policy wants for debugfs.  @pending_unqueued
 * computes the file of that name at each read.
 */
void unwind_rs_debugfs_create(const char *const *names, u64 *values,
			      unsigned int n, u64 (*pending_unqueued)(void))
{
	unsigned int i;

	unwind_rs_debugfs = debugfs_create_dir("unwind_deferred", NULL);
	for (i = 0; i < n; i++)
		debugfs_create_u64(names[i], 0444, unwind_rs_debugfs, &values[i]);
	unwind_rs_pending_unqueued_fn = pending_unqueued;
	debugfs_create_file_unsafe("pending_unqueued", 0444, unwind_rs_debugfs,
				   NULL, &unwind_rs_pending_unqueued_fops);
}

void unwind_rs_debugfs_remove(void)
{
	debugfs_remove(unwind_rs_debugfs);
}

/* One 8-byte user word at @addr (an SFrame rule's load), without faulting. */
int unwind_rs_read_word_nofault(unsigned long addr, unsigned long *out)
{
	unsigned long __user *p = (unsigned long __user *)addr;
	int ret;

	if (!access_ok(p, sizeof(*p)))
		return -EFAULT;
	pagefault_disable();
	ret = __get_user(*out, p);
	pagefault_enable();
	return ret;
}

/* Unwind-table discovery (src/unwind/table_find.rs, table_cache.rs). */

/* One cap, two names: sframe_cache_kb is the name before .eh_frame. */
static unsigned int table_cache_kb = 4096;
module_param(table_cache_kb, uint, 0644);
MODULE_PARM_DESC(table_cache_kb,
		 "memory for compiled unwind tables in KiB (0: frame pointers only)");
module_param_named(sframe_cache_kb, table_cache_kb, uint, 0644);
MODULE_PARM_DESC(sframe_cache_kb, "old name of table_cache_kb");

unsigned int unwind_rs_sframe_cache_kb(void)
{
	return READ_ONCE(table_cache_kb);
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

/* The cache's lock: a mutex, as misses read files with it dropped. */
static DEFINE_MUTEX(unwind_rs_sframe_mutex);

void unwind_rs_sframe_lock(void)
{
	mutex_lock(&unwind_rs_sframe_mutex);
}

void unwind_rs_sframe_unlock(void)
{
	mutex_unlock(&unwind_rs_sframe_mutex);
}

/*
 * The VMA of current that holds @ip: its range and page offset in @v, and
 * a reference to its file if it is an executable mapping of a regular
 * file (the caller fput()s it).  NULL with an empty range when @ip is unmapped.
 * mmap_read_lock() and vma_lookup() are inline; the lock is held only
 * here, never while user memory or the file is read.
 */
struct file *unwind_rs_vma_file(unsigned long ip, struct unwind_rs_vma *v)
{
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct file *file = NULL;

	v->start = 0;
	v->end = 0;
	v->pgoff = 0;
	if (!mm)
		return NULL;
	mmap_read_lock(mm);
	vma = vma_lookup(mm, ip);
	if (vma) {
		v->start = vma->vm_start;
		v->end = vma->vm_end;
		v->pgoff = vma->vm_pgoff;
		/* Regular files only: reading a device has side effects. */
		if (vma->vm_file && (vma->vm_flags & VM_EXEC) &&
		    S_ISREG(file_inode(vma->vm_file)->i_mode))
			file = get_file(vma->vm_file);
	}
	mmap_read_unlock(mm);
	return file;
}

/*
 * What tells one version of a file from any other: the inode (device,
 * number, generation) and what any write or truncation changes (ctime,
 * mtime, size).  file_inode() and the time accessors are inline.
 */
void unwind_rs_file_id(struct file *file, struct unwind_rs_file_id *id)
{
	struct inode *inode = file_inode(file);
	struct timespec64 c = inode_get_ctime(inode);
	struct timespec64 m = inode_get_mtime(inode);

	id->dev = inode->i_sb->s_dev;
	id->ino = inode->i_ino;
	id->size = i_size_read(inode);
	id->ctime_sec = c.tv_sec;
	id->mtime_sec = m.tv_sec;
	id->ctime_nsec = c.tv_nsec;
	id->mtime_nsec = m.tv_nsec;
	id->generation = inode->i_generation;
	id->pad = 0;
}

/*
 * current's address space and the version of its mappings, for the memo of
 * mappings the unwinders keep between walks.  mm_lock_seq is odd while
 * mmap_lock is write-locked and moves on at every write unlock, so two
 * equal even values mean no mapping changed in between; self_exec_id
 * tells a new mm at a recycled address (exec) from the old one.  False
 * (no key, no memo) while a writer holds the lock, and without per-VMA
 * locks, which is what maintains the sequence.
 */
bool unwind_rs_mm_key(struct unwind_rs_mm_key *k)
{
#ifdef CONFIG_PER_VMA_LOCK
	struct mm_struct *mm = current->mm;
	unsigned int seq;

	if (!mm)
		return false;
	seq = raw_read_seqcount(&mm->mm_lock_seq);
	if (seq & 1)
		return false;
	k->mm = (unsigned long)mm;
	k->exec_id = current->self_exec_id;
	k->seq = seq;
	k->pad = 0;
	return true;
#else
	return false;
#endif
}
