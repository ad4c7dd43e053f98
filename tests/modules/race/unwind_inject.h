/* SPDX-License-Identifier: GPL-2.0 */
/* The injection point of the test build of unwind_deferred.ko (src/deferred/inject.rs). */
#ifndef _UNWIND_INJECT_H
#define _UNWIND_INJECT_H

typedef void (*unwind_rs_inject_fn)(int step);
void unwind_rs_inject_set(unwind_rs_inject_fn fn);
/* The next queueing of a task work fails (-ESRCH), as for an exiting task. */
void unwind_rs_inject_fail_queue(void);
/* The table cache's lock (src/unwind/table_sys.c), exported to tests. */
void unwind_rs_table_cache_lock(void);
void unwind_rs_table_cache_unlock(void);

#endif /* _UNWIND_INJECT_H */
