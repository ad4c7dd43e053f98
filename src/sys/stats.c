// SPDX-License-Identifier: GPL-2.0
/*
 * The counters (src/sys/stats.rs): events per CPU, summed when read, so
 * that a fork, an NMI's request or a frame writes no shared cache line;
 * gauges are one u64 each, written under the table cache's mutex or by
 * one file's owner.  Their debugfs directory lives here too.
 */
#include <linux/debugfs.h>
#include <linux/percpu.h>

#include "sys.h"

/* Zero-initialised: 6.12 does not relocate a module's per-CPU template. */
static DEFINE_PER_CPU(u64 [UNWIND_RS_EVENTS_MAX], unwind_rs_events);

unsigned int unwind_rs_events_max(void)
{
	return UNWIND_RS_EVENTS_MAX;
}

/* Any context, NMI included: one instruction on this CPU's copy. */
void unwind_rs_event_add(unsigned int i, u64 v)
{
	if (!WARN_ON_ONCE(i >= UNWIND_RS_EVENTS_MAX))
		this_cpu_add(unwind_rs_events[i], v);
}

/* The sum over every CPU (racing adds may or may not be in it). */
u64 unwind_rs_event_read(unsigned int i)
{
	u64 sum = 0;
	int cpu;

	if (WARN_ON_ONCE(i >= UNWIND_RS_EVENTS_MAX))
		return 0;
	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu(unwind_rs_events, cpu)[i]);
	return sum;
}

static struct dentry *unwind_rs_debugfs;

static int unwind_rs_event_get(void *data, u64 *val)
{
	*val = unwind_rs_event_read((unsigned long)data);
	return 0;
}
/* The _unsafe files' accesses are guarded: removal waits for readers. */
DEFINE_DEBUGFS_ATTRIBUTE(unwind_rs_event_fops, unwind_rs_event_get, NULL,
			 "%llu\n");

static u64 (*unwind_rs_pending_unqueued_fn)(void);

static int unwind_rs_pending_unqueued_get(void *data, u64 *val)
{
	*val = unwind_rs_pending_unqueued_fn();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(unwind_rs_pending_unqueued_fops,
			 unwind_rs_pending_unqueued_get, NULL, "%llu\n");

/*
 * Errors are ignored, as kernel policy wants for debugfs.  @pending_unqueued
 * computes the file of that name at each read.
 */
void unwind_rs_debugfs_create(u64 (*pending_unqueued)(void))
{
	unwind_rs_debugfs = debugfs_create_dir("unwind_deferred", NULL);
	unwind_rs_pending_unqueued_fn = pending_unqueued;
	debugfs_create_file_unsafe("pending_unqueued", 0444, unwind_rs_debugfs,
				   NULL, &unwind_rs_pending_unqueued_fops);
}

/* A file for event counter @i; @name may be a second name for it. */
void unwind_rs_debugfs_event(const char *name, unsigned int i)
{
	debugfs_create_file_unsafe(name, 0444, unwind_rs_debugfs,
				   (void *)(unsigned long)i,
				   &unwind_rs_event_fops);
}

/* A file for a gauge; @name may be a second name for it. */
void unwind_rs_debugfs_gauge(const char *name, u64 *value)
{
	debugfs_create_u64(name, 0444, unwind_rs_debugfs, value);
}

void unwind_rs_debugfs_remove(void)
{
	debugfs_remove(unwind_rs_debugfs);
}
