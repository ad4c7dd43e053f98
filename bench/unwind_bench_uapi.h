/* SPDX-License-Identifier: GPL-2.0 */
/* ioctls of unwind_bench.ko on /sys/kernel/debug/unwind_bench/ctl. */
#ifndef _UNWIND_BENCH_UAPI_H
#define _UNWIND_BENCH_UAPI_H

#include <linux/ioctl.h>
#include <linux/types.h>

struct ub_walk {
	__u32 rounds;		/* in: walks of each kind */
	__u32 max;		/* in: frames at most */
	__u64 perf_ns;		/* out: total, perf's get_perf_callchain() (user part) */
	__u64 ours_ns;		/* out: total, unwind_user() */
	__u32 perf_frames;	/* out: frames per walk, perf */
	__u32 ours_frames;	/* out: frames per walk, ours */
};

struct ub_cache {
	__u32 callers;		/* in: N works */
	__u32 samples;		/* in: M requests per work, one kernel entry */
	__u64 deferred_ns;	/* out: N*M requests + the one walk */
	__u64 sync_ns;		/* out: N*M get_perf_callchain() */
	__u64 reserved;
};

struct ub_irq {
	__u32 period_us;	/* in: hrtimer period; 0 stops and reports */
	__u32 max;		/* in: frames at most for perf */
	__u64 ticks;		/* out: timer ticks that hit the task in user mode */
	__u64 perf_ns;		/* out: total in get_perf_callchain() */
	__u64 request_ns;	/* out: total in unwind_deferred_request() */
	__u64 nmi_ticks;	/* out: self-NMIs that did the same */
	__u64 nmi_perf_ns;
	__u64 nmi_request_ns;
	__u64 callbacks;	/* out: deferred callbacks */
};

#define UB_IOC_WALK	_IOWR('b', 1, struct ub_walk)
#define UB_IOC_CACHE	_IOWR('b', 2, struct ub_cache)
#define UB_IOC_IRQ	_IOWR('b', 3, struct ub_irq)

#endif /* _UNWIND_BENCH_UAPI_H */
