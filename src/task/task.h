/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The task helpers (task_sys.c), declared by hand in src/task/mod.rs and
 * src/task/saved_maps.rs.
 */
#ifndef _UNWIND_RS_TASK_H
#define _UNWIND_RS_TASK_H

#include <linux/types.h>

struct callback_head;
struct list_head;
struct task_struct;

typedef void (*unwind_rs_thread_fn)(struct task_struct *t, void *arg);
void unwind_rs_walk_threads(unwind_rs_thread_fn fn, void *arg);
bool unwind_rs_work_queued(struct task_struct *t, struct callback_head *work);
void unwind_rs_saved_maps_link(struct list_head *node);
void unwind_rs_saved_maps_unlink(struct list_head *node);
void unwind_rs_saved_maps_claim(struct list_head *out,
				bool (*claim)(struct list_head *node));
struct list_head *unwind_rs_list_pop(struct list_head *list);

#endif /* _UNWIND_RS_TASK_H */
