// SPDX-License-Identifier: GPL-2.0
/*
 * The counters' debugfs directory (src/sys/stats.rs).
 */
#include <linux/debugfs.h>

#include "sys.h"

static struct dentry *unwind_rs_debugfs;

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

/* A second name for a counter (an old one: src/sys/stats.rs ALIASES). */
void unwind_rs_debugfs_alias(const char *name, u64 *value)
{
	debugfs_create_u64(name, 0444, unwind_rs_debugfs, value);
}
