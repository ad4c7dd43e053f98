// SPDX-License-Identifier: GPL-2.0
/*
 * The C API's exports and the checks of every layout that C and Rust
 * share: the Rust functions of src/api/exports.rs exported with
 * EXPORT_SYMBOL_GPL(), as rust/exports.c exports the kernel crate's.
 */
#include <linux/export.h>
#include <linux/perf_event.h>
#include <linux/unwind_deferred.h>

#include "../deferred/inject.h"
#include "../sys/sys.h"
#include "../unwind/unwind.h"

/*
 * The Rust side copies these C layouts (src/unwind/walk.rs,
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
	      sizeof(struct unwind_rs_memo_run) == 72 &&
	      offsetof(struct unwind_rs_memo_run, nr) == 56 &&
	      offsetof(struct unwind_rs_memo_run, done) == 68 &&
	      offsetof(struct unwind_rs_memo_run, topmost) == 69 &&
	      offsetof(struct unwind_rs_memo_run, spanned) == 70 &&
	      sizeof(struct unwind_rs_walk_ctx) == 72 &&
	      sizeof(struct unwind_rs_request_ctx) == 16 &&
	      offsetof(struct unwind_rs_walk_ctx, cs) == 56 &&
	      offsetof(struct unwind_rs_fp_walk, nr) == 48 &&
	      offsetof(struct unwind_rs_mm_key, seq) == 16);
static_assert(offsetof(struct unwind_cache, nr_entries) == 8 &&
	      offsetof(struct unwind_cache, entries) == 16);

/* src/api/perf.rs declares this one by hand: the bindings lack perf. */
static_assert(__builtin_types_compatible_p(typeof(&perf_callchain_deferred),
	      int (*)(u64, const unsigned long *, unsigned int)));

/*
 * The API is implemented in Rust (src/api/exports.rs); the prototypes in
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
/* A test holds the table cache's lock (tests/modules/race/). */
UNWIND_RS_EXPORT(unwind_rs_table_cache_lock);
UNWIND_RS_EXPORT(unwind_rs_table_cache_unlock);
#endif
