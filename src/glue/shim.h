/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C helpers for the Rust code of unwind_deferred.ko: wrappers around
 * inline functions and macros that bindgen cannot call.
 */
#ifndef _UNWIND_RS_SHIM_H
#define _UNWIND_RS_SHIM_H

#include <linux/types.h>

struct file;
struct pt_regs;
struct task_struct;

/* A VMA's range and page offset (unwind_rs_vma_file()). */
struct unwind_rs_vma {
	unsigned long start;
	unsigned long end;
	unsigned long pgoff;
};

/* A file version's identity (unwind_rs_file_id()): the SFrame cache key. */
struct unwind_rs_file_id {
	u64 dev;
	u64 ino;
	u64 size;
	s64 ctime_sec;
	s64 mtime_sec;
	u32 ctime_nsec;
	u32 mtime_nsec;
	u32 generation;
	u32 pad;
};

/*
 * Which address space, and which version of its mappings (unwind_rs_mm_key()):
 * the key of the unwinders' mappings memo.
 */
struct unwind_rs_mm_key {
	unsigned long mm;
	u64 exec_id;
	u32 seq;
	u32 pad;
};

/*
 * What a walk starts from (unwind_rs_walk_ctx()): current's user
 * registers, whether SFrame may be used, and the memo's key.
 */
struct unwind_rs_walk_ctx {
	struct task_struct *task;
	unsigned long ip;
	unsigned long sp;
	unsigned long bp;
	struct unwind_rs_mm_key key;
	u16 cs;
	u16 ss;
	bool compat;
	bool can_fault;
	bool sframe;
	bool key_valid;
};

/* A request's context (unwind_rs_request_begin()). */
struct unwind_rs_request_ctx {
	unsigned long flags;
	bool in_nmi;
	bool in_hardirq;
	bool irqs_were_off;
};

/* A run of frame-pointer steps (unwind_rs_fp_frames()). */
struct unwind_rs_fp_walk {
	unsigned long ip;
	unsigned long sp;
	unsigned long fp;
	unsigned long lo;
	unsigned long hi;
	unsigned long *entries;
	unsigned int nr;
	unsigned int max;
};

struct pt_regs *unwind_rs_user_regs(void);
int unwind_rs_read_words_nofault(unsigned long addr, unsigned long *out, bool compat);
int unwind_rs_read_cfa_slots_nofault(unsigned long cfa, unsigned int fp_slot,
				     unsigned long *out);
bool unwind_rs_can_fault(void);
bool unwind_rs_in_nmi(void);
bool unwind_rs_in_hardirq(void);
bool unwind_rs_irqs_disabled(void);
bool unwind_rs_walk_ctx(struct unwind_rs_walk_ctx *c);
struct task_struct *unwind_rs_request_begin(struct unwind_rs_request_ctx *c);
u64 unwind_rs_cookie_count(unsigned int *cpu);
void unwind_rs_cookie_seed(void);
void unwind_rs_pagefault_disable(void);
void unwind_rs_pagefault_enable(void);
unsigned long unwind_rs_irq_save(void);
void unwind_rs_irq_restore(unsigned long flags);
typedef void (*unwind_rs_thread_fn)(struct task_struct *t, void *arg);
void unwind_rs_walk_threads(unwind_rs_thread_fn fn, void *arg);
void unwind_rs_debugfs_create(const char *const *names, u64 *values,
			      unsigned int n, u64 (*pending_unqueued)(void));
bool unwind_rs_work_queued(struct task_struct *t, struct callback_head *work);
void unwind_rs_debugfs_remove(void);
int unwind_rs_read_word_nofault(unsigned long addr, unsigned long *out);
unsigned int unwind_rs_sframe_cache_kb(void);
void unwind_rs_saved_maps_link(struct list_head *node);
void unwind_rs_saved_maps_unlink(struct list_head *node);
void unwind_rs_saved_maps_claim(struct list_head *out,
				bool (*claim)(struct list_head *node));
struct list_head *unwind_rs_list_pop(struct list_head *list);
void unwind_rs_sframe_lock(void);
void unwind_rs_sframe_unlock(void);
struct file *unwind_rs_vma_file(unsigned long ip, struct unwind_rs_vma *v);
void unwind_rs_file_id(struct file *file, struct unwind_rs_file_id *id);
bool unwind_rs_mm_key(struct unwind_rs_mm_key *k);
int unwind_rs_fp_frames(struct unwind_rs_fp_walk *w);

/*
 * One slot of a walk's row memo (src/unwind/table_find.rs RowSlot): the
 * PC looked up, its mapping's slot, flags (bit 2: the outermost frame)
 * and, if the row has the common form, that form packed
 * (src/unwind/table/common.rs Common::pack(): bit 0 valid, bit 1 CFA
 * from FP, bit 2 from .eh_frame, bits 3-6 the slot of the saved FP, bits
 * 7-31 the CFA offset).
 */
struct unwind_rs_row_slot {
	unsigned long pc;
	unsigned char map;
	unsigned char flags;
	unsigned short index;
	unsigned int common;
};

#define UNWIND_RS_ROW_SLOTS 32

/*
 * A run of table steps through the frames whose rows a walk's memo holds
 * in the common form (unwind_rs_memo_run()): @rows is the memo's
 * UNWIND_RS_ROW_SLOTS slots.  Out: the state at the first frame it could
 * not step, @nr, @eh (frames stepped with .eh_frame rows) and @done (the
 * outermost frame was reached).
 */
struct unwind_rs_memo_run {
	unsigned long ip;
	unsigned long sp;
	unsigned long fp;
	unsigned long *entries;
	const struct unwind_rs_row_slot *rows;
	unsigned int nr;
	unsigned int max;
	unsigned int eh;
	bool done;
};

void unwind_rs_memo_run(struct unwind_rs_memo_run *w);

/* Test builds only (UNWIND_RS_INJECT): src/deferred/inject.rs. */
void unwind_rs_inject_set(void (*fn)(int step));
void unwind_rs_inject_fail_queue(void);

#endif /* _UNWIND_RS_SHIM_H */
