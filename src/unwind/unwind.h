/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The walk's C helpers (user_loops.c, table_sys.c) and the layouts they
 * share with Rust, mirrored in src/unwind/ffi.rs (both sides assert the
 * sizes: src/api/exports.c and ffi.rs).
 */
#ifndef _UNWIND_RS_UNWIND_H
#define _UNWIND_RS_UNWIND_H

#include <linux/types.h>

#include "row_slot.h"

struct file;
struct task_struct;

/* A VMA's range and page offset (unwind_rs_vma_file()). */
struct unwind_rs_vma {
	unsigned long start;
	unsigned long end;
	unsigned long pgoff;
};

/* A file version's identity (unwind_rs_file_id()): the table cache key. */
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
 * registers, whether unwind tables may be used, and the memo's key.
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
	bool tables;
	bool key_valid;
	bool cached_only;
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

int unwind_rs_read_words_nofault(unsigned long addr, unsigned long *out, bool compat);
int unwind_rs_read_cfa_slots_nofault(unsigned long cfa, unsigned int fp_slot,
				     unsigned long *out);
int unwind_rs_read_word_nofault(unsigned long addr, unsigned long *out);
int unwind_rs_fp_frames(struct unwind_rs_fp_walk *w);
bool unwind_rs_walk_ctx(struct unwind_rs_walk_ctx *c);
unsigned int unwind_rs_table_cache_kb(void);
unsigned int unwind_rs_table_compile_kb(void);
unsigned int unwind_rs_sframe_compile_kb(void);
bool unwind_rs_table_read_keep_going(void);
void unwind_rs_table_cache_lock(void);
bool unwind_rs_table_cache_trylock(void);
void unwind_rs_table_cache_unlock(void);
bool unwind_rs_table_read_lock(void);
void unwind_rs_table_read_unlock(void);
struct file *unwind_rs_vma_file(unsigned long ip, struct unwind_rs_vma *v, bool trylock);
void unwind_rs_file_id(struct file *file, struct unwind_rs_file_id *id);
ssize_t unwind_rs_file_read(struct file *file, void *buf, size_t len, loff_t pos);
bool unwind_rs_mm_key(struct unwind_rs_mm_key *k);

/*
 * A run of table steps through the frames whose rows a walk's memo holds
 * in the common form (unwind_rs_memo_run()): @rows is the memo's
 * UNWIND_RS_ROW_SLOTS slots (row_slot.h), @top its topmost frame's slot,
 * @span the stretch of code around its last topmost IP; @topmost: the
 * state is at the topmost frame (its row is that of @ip, not @ip - 1).
 * Out: the state at the first frame it could not step, @nr, @eh (frames
 * stepped with .eh_frame rows), @done (the outermost frame was reached)
 * and @spanned (the topmost frame's row came from @span).
 */
struct unwind_rs_memo_run {
	unsigned long ip;
	unsigned long sp;
	unsigned long fp;
	unsigned long *entries;
	const struct unwind_rs_row_slot *rows;
	const struct unwind_rs_row_slot *top;
	const struct unwind_rs_row_span *span;
	unsigned int nr;
	unsigned int max;
	unsigned int eh;
	bool done;
	bool topmost;
	bool spanned;
};

void unwind_rs_memo_run(struct unwind_rs_memo_run *w);

#endif /* _UNWIND_RS_UNWIND_H */
