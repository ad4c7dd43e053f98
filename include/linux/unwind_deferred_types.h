/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _LINUX_UNWIND_USER_DEFERRED_TYPES_H
#define _LINUX_UNWIND_USER_DEFERRED_TYPES_H

#include <linux/types.h>

/**
 * struct unwind_cache - per-task cache of the current entry's user stack
 * @unwind_completed: works whose callback already ran in this entry
 * @nr_entries: valid entries, 0 when nothing is cached
 * @entries: the trace
 *
 * One 4 KiB allocation per task, made on first use and freed with the
 * task.  The per-task state itself lives in task_struct::unwind_hooks.
 */
struct unwind_cache {
	unsigned long		unwind_completed;
	unsigned int		nr_entries;
	unsigned long		entries[];
};

#endif /* _LINUX_UNWIND_USER_DEFERRED_TYPES_H */
