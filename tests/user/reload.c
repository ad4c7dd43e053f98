// SPDX-License-Identifier: GPL-2.0
/*
 * sec_reload_dequeued: a task's deferred-unwind task work is taken off its
 * queue but not yet run (a newer task work, unwind_stall.ko's release,
 * blocks in front of it) while unwind_test.ko and unwind_deferred.ko are
 * unloaded and loaded again.  When the old work finally runs it must call
 * none of the new module's works (they reuse the old bit numbers), and the
 * task's next request must be delivered normally.
 *
 *   reload "COMMANDS"	COMMANDS (sh -c) unload and reload the modules
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "ut.h"

#define STALL "/sys/kernel/debug/unwind_stall/"

static int stall_state(void)
{
	char s[8] = "";
	int fd = open(STALL "state", O_RDONLY);

	if (fd < 0 || read(fd, s, sizeof(s) - 1) < 0)
		s[0] = '?';
	if (fd >= 0)
		close(fd);
	return s[0] - '0';
}

static void stall_release(void)
{
	int fd = open(STALL "state", O_WRONLY);

	if (fd < 0 || write(fd, "1", 1) != 1)
		ut_diag("cannot release the stall: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
}

static int deferred(int fd, struct ut_deferred *d)
{
	return ioctl(fd, UT_IOC_DEFERRED, d);
}

/*
 * The stalled task: its dup2() requests works 0-3 (ut_syscall.c), then
 * drops the last reference to the block file, whose release runs from a
 * task work queued after ours (close() would release it synchronously).
 */
static int child(int to_parent, int from_parent)
{
	struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 1 };
	struct ut_result r = { 0 };
	struct ut_deferred res = { .op = UT_OP_RESULT, .arg = 0, .ptr = (uintptr_t)&r };
	int fd = open(STALL "block", O_RDONLY);
	char c = 0;

	if (fd < 0)
		return UT_FAIL;
	prctl(PR_SET_NAME, "ut_reload");
	/* Blocks in the release's task work, which runs before ours. */
	syscall(SYS_dup2, 0, fd);
	prctl(PR_SET_NAME, "reload");
	if (write(to_parent, "r", 1) != 1 || read(from_parent, &c, 1) != 1)
		return UT_FAIL;
	/* The reloaded module serves this task's next request. */
	fd = ut_open();
	if (deferred(fd, &d) || deferred(fd, &res))
		return UT_FAIL;
	ut_diag("stalled task: request ret %d cookie %#llx; callbacks %llu cookie %#llx nr %u",
		d.ret, (unsigned long long)d.cookie, (unsigned long long)r.callbacks,
		(unsigned long long)r.cookie, r.nr);
	ut_check(d.ret == 0 && d.cookie, "request after the reload");
	ut_check(r.callbacks == 1 && r.cookie == d.cookie && r.matches_direct,
		 "its callback");
	return ut_result();
}

int main(int argc, char **argv)
{
	int up[2], down[2], status, i, fd;
	char c;
	pid_t pid;

	if (argc != 2 || pipe(up) || pipe(down))
		return UT_FAIL;
	pid = fork();
	if (!pid)
		_exit(child(up[1], down[0]));
	for (i = 0; i < 1000 && stall_state() != 1; i++)
		usleep(10000);
	ut_check(stall_state() == 1, "the child's dup2() did not block");
	ut_diag("reloading: %s", argv[1]);
	ut_check(system(argv[1]) == 0, "reload failed");
	fd = ut_open();
	{
		struct ut_deferred d = { .op = UT_OP_RESET };

		ut_check(!deferred(fd, &d), "reset");
	}
	stall_release();
	ut_check(read(up[0], &c, 1) == 1, "child gone");
	/* The old task work has run: none of the new works was called. */
	for (i = 0; i < UT_NWORKS; i++) {
		struct ut_result r = { 0 };
		struct ut_deferred d = { .op = UT_OP_RESULT, .arg = i, .ptr = (uintptr_t)&r };

		ut_check(!deferred(fd, &d) && r.callbacks == 0,
			 "work %d called %llu times, cookie %#llx", i,
			 (unsigned long long)r.callbacks, (unsigned long long)r.cookie);
	}
	close(fd);
	ut_check(write(down[1], "g", 1) == 1, "child gone");
	ut_check(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		 WEXITSTATUS(status) == 0, "child failed: %#x", status);
	return ut_result();
}
