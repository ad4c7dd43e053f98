/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bottom layer's C helpers (context.c, debugfs.c), declared by hand
 * in src/sys/context.rs and src/sys/stats.rs.
 */
#ifndef _UNWIND_RS_SYS_H
#define _UNWIND_RS_SYS_H

#include <linux/types.h>

struct pt_regs;
struct task_struct;

/* A request's context (unwind_rs_request_begin()). */
struct unwind_rs_request_ctx {
	unsigned long flags;
	bool in_nmi;
	bool in_hardirq;
	bool irqs_were_off;
};

struct pt_regs *unwind_rs_user_regs(void);
bool unwind_rs_may_sleep(void);
bool unwind_rs_can_fault(void);
bool unwind_rs_dying(void);
bool unwind_rs_in_nmi(void);
bool unwind_rs_in_hardirq(void);
bool unwind_rs_irqs_disabled(void);
struct task_struct *unwind_rs_request_begin(struct unwind_rs_request_ctx *c);
u64 unwind_rs_cookie_count(unsigned int *cpu);
void unwind_rs_cookie_seed(void);
void unwind_rs_pagefault_disable(void);
void unwind_rs_pagefault_enable(void);
unsigned long unwind_rs_irq_save(void);
void unwind_rs_irq_restore(unsigned long flags);
void unwind_rs_debugfs_create(const char *const *names, u64 *values,
			      unsigned int n, u64 (*pending_unqueued)(void));
void unwind_rs_debugfs_remove(void);
void unwind_rs_debugfs_alias(const char *name, u64 *value);

#endif /* _UNWIND_RS_SYS_H */
