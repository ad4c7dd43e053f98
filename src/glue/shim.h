/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers for the Rust code of unwind_deferred.ko: wrappers around
 * inline functions and macros that bindgen cannot call.
 */
#ifndef _UNWIND_RS_SHIM_H
#define _UNWIND_RS_SHIM_H

#include <linux/types.h>

struct pt_regs;
struct task_struct;

struct pt_regs *unwind_rs_user_regs(void);
bool unwind_rs_regs_compat(struct pt_regs *regs);
int unwind_rs_read_words_nofault(unsigned long addr, unsigned long *out, bool compat);
bool unwind_rs_can_fault(void);
bool unwind_rs_in_nmi(void);
bool unwind_rs_in_hardirq(void);
bool unwind_rs_irqs_disabled(void);
unsigned int unwind_rs_cpu(void);
u64 unwind_rs_cookie_count(void);
unsigned long unwind_rs_irq_save(void);
void unwind_rs_irq_restore(unsigned long flags);
typedef void (*unwind_rs_thread_fn)(struct task_struct *t, void *arg);
void unwind_rs_walk_threads(unwind_rs_thread_fn fn, void *arg);
void unwind_rs_debugfs_create(const char *const *names, u64 *values,
			      unsigned int n);
void unwind_rs_debugfs_remove(void);

#endif /* _UNWIND_RS_SHIM_H */
