// SPDX-License-Identifier: GPL-2.0
/*
 * sec_unload_released_task: a thread walked by unwind_user_faultable()
 * (its cache then keeps the mappings the walk looked up) exits and is
 * reaped, off the thread list, while a perf event opened on it keeps its
 * task_struct.  COMMANDS unload the modules; only then is the event
 * closed, and the task freed with no module loaded.  Whatever the walk
 * allocated must have been freed by the unload: the caller asks kmemleak.
 *
 *   released "COMMANDS"
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "ut.h"

static int to_main[2], to_thread[2];
static unsigned int walked;

static void *thread(void *arg __attribute__((unused)))
{
	uint64_t entries[64];
	struct ut_unwind u = {
		.max = 64, .mode = UT_MODE_FAULTABLE, .entries = (uintptr_t)entries,
	};
	pid_t tid = syscall(SYS_gettid);
	int fd = ut_open();
	char c;

	if (fd < 0 || ioctl(fd, UT_IOC_UNWIND, &u) || u.ret || !u.nr)
		tid = -1;
	walked = u.nr;
	if (fd >= 0)
		close(fd);
	if (write(to_main[1], &tid, sizeof(tid)) != sizeof(tid) ||
	    read(to_thread[0], &c, 1) != 1)
		return NULL;
	return NULL;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE, .size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY, .disabled = 1,
	};
	char path[64];
	pthread_t t;
	pid_t tid = -1;
	int ev, i;

	if (argc != 2 || pipe(to_main) || pipe(to_thread) ||
	    pthread_create(&t, NULL, thread, NULL))
		return UT_FAIL;
	ut_check(read(to_main[0], &tid, sizeof(tid)) == sizeof(tid) && tid > 0,
		 "the thread's walk failed");
	if (tid <= 0)
		return UT_FAIL;
	/* A per-task event holds its task until it is freed (hw.target). */
	ev = syscall(SYS_perf_event_open, &attr, tid, -1, -1, 0);
	ut_check(ev >= 0, "perf_event_open on the thread: %s", strerror(errno));
	ut_check(write(to_thread[1], "x", 1) == 1, "the thread is gone");
	pthread_join(t, NULL);
	/* The join returns at mm_release(), before release_task(). */
	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	for (i = 0; i < 1000 && !access(path, F_OK); i++)
		usleep(1000);
	ut_check(access(path, F_OK), "thread %d still listed", tid);
	ut_diag("thread %d walked (%u frames), exited and reaped; unloading: %s",
		tid, walked, argv[1]);
	ut_check(system(argv[1]) == 0, "unload failed");
	/* The task is freed now, by the kernel alone. */
	if (ev >= 0)
		close(ev);
	return ut_result();
}
