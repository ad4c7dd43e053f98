/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bottom layer's C helpers (context.c, stats.c), declared by hand
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
bool unwind_rs_module_live(void);
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

/* The event counters' slots (stats.rs checks its count against it). */
#define UNWIND_RS_EVENTS_MAX 48
void unwind_rs_event_add(unsigned int i, u64 v);
u64 unwind_rs_event_read(unsigned int i);
unsigned int unwind_rs_events_max(void);
void unwind_rs_debugfs_create(u64 (*pending_unqueued)(void));
void unwind_rs_debugfs_event(const char *name, unsigned int i);
void unwind_rs_debugfs_gauge(const char *name, u64 *value);
void unwind_rs_debugfs_remove(void);

#endif /* _UNWIND_RS_SYS_H */
