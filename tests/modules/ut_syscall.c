// SPDX-License-Identifier: GPL-2.0
/*
 * A sys_enter probe that requests deferred stacks for chosen tasks, so
 * that requests are pending while the task sleeps in, or exits from, a
 * syscall that is not ours:
 *   comm "ut_exit*":   on exit_group(), work 0 (delivered by the exit hook)
 *   comm "ut_exec*":   on execve(), work 0 (pending when the program goes)
 *   comm "ut_victim*": on every syscall, work 1 (pending at module unload)
 *   comm "ut_reload*": on dup2(), works 0-3 (dequeued across a reload)
 * sys_enter is not exported in 6.12, so it is found by name.
 */
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/unistd.h>

#include "ut.h"

#define NR_EXIT_GROUP_64	231
#define NR_EXIT_GROUP_32	252
#define NR_EXECVE_64		59
#define NR_EXECVE_32		11
#define NR_DUP2_64		33
#define NR_DUP2_32		63

static struct tracepoint *ut_sys_enter;

static void ut_probe(void *data, struct pt_regs *regs, long id)
{
	u64 cookie;
	int i;

	if (!strncmp(current->comm, "ut_exit", 7) &&
	    (id == NR_EXIT_GROUP_64 || id == NR_EXIT_GROUP_32))
		unwind_deferred_request(&ut_works[0], &cookie);
	else if (!strncmp(current->comm, "ut_exec", 7) &&
		 id == (in_compat_syscall() ? NR_EXECVE_32 : NR_EXECVE_64))
		unwind_deferred_request(&ut_works[0], &cookie);
	else if (!strncmp(current->comm, "ut_victim", 9))
		unwind_deferred_request(&ut_works[1], &cookie);
	else if (!strncmp(current->comm, "ut_reload", 9) &&
		 id == (in_compat_syscall() ? NR_DUP2_32 : NR_DUP2_64))
		for (i = 0; i < UT_NWORKS; i++)
			unwind_deferred_request(&ut_works[i], &cookie);
}

static void ut_find(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "sys_enter"))
		ut_sys_enter = tp;
}

int ut_syscall_init(void)
{
	for_each_kernel_tracepoint(ut_find, NULL);
	if (!ut_sys_enter) {
		pr_err("unwind_test: no sys_enter tracepoint\n");
		return -ENOENT;
	}
	return tracepoint_probe_register(ut_sys_enter, ut_probe, NULL);
}

void ut_syscall_exit(void)
{
	tracepoint_probe_unregister(ut_sys_enter, ut_probe, NULL);
	tracepoint_synchronize_unregister();
}
