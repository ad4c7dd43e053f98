/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM unwind_ftrace

#if !defined(_UNWIND_FTRACE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _UNWIND_FTRACE_TRACE_H

#include <linux/tracepoint.h>

#define UNWIND_FTRACE_MAX_FRAMES 128

/* At the sampled event: the cookie that the user stack will carry. */
TRACE_EVENT(unwind_request,
	TP_PROTO(u64 cookie, long syscall, int ret),
	TP_ARGS(cookie, syscall, ret),
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(long, syscall)
		__field(int, ret)
	),
	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->syscall = syscall;
		__entry->ret = ret;
	),
	TP_printk("cookie=%llx syscall=%ld ret=%d",
		  __entry->cookie, __entry->syscall, __entry->ret)
);

/* Before the task returns to user space: the same cookie and its stack. */
TRACE_EVENT(unwind_stack,
	TP_PROTO(u64 cookie, unsigned int nr, const unsigned long *frames),
	TP_ARGS(cookie, nr, frames),
	TP_STRUCT__entry(
		__field(u64, cookie)
		__field(unsigned int, nr)
		__dynamic_array(unsigned long, frames, nr)
	),
	TP_fast_assign(
		__entry->cookie = cookie;
		__entry->nr = nr;
		memcpy(__get_dynamic_array(frames), frames, nr * sizeof(*frames));
	),
	TP_printk("cookie=%llx nr=%u frames=%s", __entry->cookie, __entry->nr,
		  __print_array(__get_dynamic_array(frames), __entry->nr,
				sizeof(unsigned long)))
);

#endif /* _UNWIND_FTRACE_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#define TRACE_INCLUDE_FILE unwind_ftrace_trace
#include <trace/define_trace.h>
