// SPDX-License-Identifier: GPL-2.0
/*
 * A deferred walk blocked in a user page fault (a frame pointer into a
 * userfaultfd region nobody serves) must not block the module's cancel
 * path: unwind_deferred_cancel() and rmmod finish within 5 s while the
 * walk waits, and everything completes once the page is served.
 *
 *   uffd exec	sec_exec_walk_nofault: the exec hook's walk never faults
 *		(execve() holds cred_guard_mutex there, see t_exec())
 */
#include <linux/userfaultfd.h>
#include <poll.h>
#include <stdint.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "ut.h"

#define LIMIT_MS 5000

#ifdef __x86_64__
static char *region;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * unwind_test's sys_enter probe requests for comm "ut_victim*" at every
 * syscall: this getpid()'s walk reads the frame at @fp, in the region.
 */
static void *victim(void *arg)
{
	unsigned long fp = (unsigned long)region + 256;
	long ret;

	(void)arg;
	prctl(PR_SET_NAME, "ut_victim");
	asm volatile("push %%rbp\n\t"
		     "mov %1, %%rbp\n\t"
		     "syscall\n\t"
		     "pop %%rbp"
		     : "=a"(ret)
		     : "r"(fp), "a"((long)SYS_getpid)
		     : "rcx", "r11", "memory");
	prctl(PR_SET_NAME, "uffd_done");
	return NULL;
}

/* Runs @cmd in a child; returns its time in ms, or -1 past LIMIT_MS. */
static double timed(const char *what, int (*fn)(void *), void *arg, int *status)
{
	double t0 = now_ms();
	pid_t pid = fork();
	int st = 0;

	if (pid == 0)
		_exit(fn(arg));
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ms() - t0 > LIMIT_MS) {
			ut_diag("%s still running after %d ms", what, LIMIT_MS);
			*status = -1;
			return -1;
		}
		usleep(10000);
	}
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	return now_ms() - t0;
}

static int cancel(void *arg)
{
	int fd = ut_open();
	struct ut_deferred d = { .op = UT_OP_CANCEL_INIT };

	(void)arg;
	if (ioctl(fd, UT_IOC_DEFERRED, &d))
		return 1;
	d.op = UT_OP_CANCEL;
	return ioctl(fd, UT_IOC_DEFERRED, &d) ? 1 : 0;
}

static int run(void *arg)
{
	execl("/sbin/rmmod", "rmmod", (char *)arg, (char *)NULL);
	return 127;
}

/* A private page registered with a new userfaultfd, not populated. */
static int uffd_region(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	int uffd = syscall(SYS_userfaultfd, O_CLOEXEC);

	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		ut_diag("userfaultfd: %s", strerror(errno));
		return -1;
	}
	region = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (unsigned long)region;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (region == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		ut_diag("UFFDIO_REGISTER: %s", strerror(errno));
		return -1;
	}
	return uffd;
}

/*
 * A second thread calls execve() with its frame pointer in the region;
 * unwind_test's sys_enter probe requests for comm "ut_exec*" at execve(),
 * so the exec hook walks this stack.  It runs after de_thread() killed
 * the main thread, which would be the region's handler: a fault there
 * would wait until SIGKILL, under cred_guard_mutex.
 */
static void *exec_thread(void *arg)
{
	static char *const argv[] = { "true", NULL };
	static char *const envp[] = { NULL };
	unsigned long fp = (unsigned long)region + 256;
	long ret;

	(void)arg;
	prctl(PR_SET_NAME, "ut_exec_uffd");
	asm volatile("push %%rbp\n\t"
		     "mov %1, %%rbp\n\t"
		     "syscall\n\t"
		     "pop %%rbp"
		     : "=a"(ret)
		     : "r"(fp), "a"((long)SYS_execve), "D"("/bin/true"), "S"(argv),
		       "d"(envp)
		     : "rcx", "r11", "memory");
	_exit(99);	/* execve failed */
}

static int exec_child(void)
{
	pthread_t t;

	if (uffd_region() < 0)
		return UT_FAIL;
	pthread_create(&t, NULL, exec_thread, NULL);
	/* Never serves the region: de_thread() kills this thread. */
	for (;;)
		pause();
}

/*
 * sec_exec_walk_nofault: the execve() finishes within LIMIT_MS, and the
 * request pending at it gets its callback with the frames before the
 * page that is not there (the IP only: the first frame is in it).
 */
static int t_exec(void)
{
	struct ut_result r = { 0 };
	struct ut_deferred d = { .op = UT_OP_RESET };
	int fd = ut_open(), st = 0;
	double t0 = now_ms();
	pid_t pid;

	ut_check(!ioctl(fd, UT_IOC_DEFERRED, &d), "reset");
	pid = fork();
	if (pid == 0)
		_exit(exec_child());
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ms() - t0 > LIMIT_MS) {
			ut_check(0, "execve() still blocked after %d ms: killing it", LIMIT_MS);
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return ut_result();
		}
		usleep(10000);
	}
	ut_diag("execve() done in %.0f ms, status %#x", now_ms() - t0, st);
	ut_check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec'd program status %#x", st);
	d = (struct ut_deferred){ .op = UT_OP_RESULT, .arg = 0, .ptr = (uintptr_t)&r };
	ut_check(!ioctl(fd, UT_IOC_DEFERRED, &d), "result");
	ut_diag("callbacks %llu pid %d (child %d) nr %u",
		(unsigned long long)r.callbacks, r.pid, pid, r.nr);
	ut_check(r.callbacks == 1, "%llu callbacks for the request pending at exec",
		 (unsigned long long)r.callbacks);
	ut_check(r.pid == pid, "callback for pid %d", r.pid);
	ut_check(r.nr == 1, "%u frames: the walk went past the missing page", r.nr);
	close(fd);
	return ut_result();
}

int main(int argc, char **argv)
{
	struct uffdio_zeropage zero;
	struct uffd_msg msg;
	struct pollfd pfd;
	pthread_t t;
	double ms;
	int uffd, st;

	if (argc > 1 && !strcmp(argv[1], "exec"))
		return t_exec();
	uffd = uffd_region();
	if (uffd < 0)
		return UT_FAIL;
	pthread_create(&t, NULL, victim, NULL);

	/* The walk is blocked once the fault reaches us. */
	pfd = (struct pollfd){ .fd = uffd, .events = POLLIN };
	if (poll(&pfd, 1, LIMIT_MS) != 1 || read(uffd, &msg, sizeof(msg)) != sizeof(msg) ||
	    msg.event != UFFD_EVENT_PAGEFAULT) {
		ut_diag("the walk did not fault on the region");
		return UT_FAIL;
	}
	ut_diag("walk blocked at %#llx", (unsigned long long)msg.arg.pagefault.address);

	ms = timed("unwind_deferred_cancel()", cancel, NULL, &st);
	ut_diag("cancel: %.0f ms, status %d", ms, st);
	ut_check(ms >= 0 && st == 0, "cancel blocked behind the walk");

	ms = timed("rmmod unwind_test", run, "unwind_test", &st);
	ut_diag("rmmod unwind_test: %.0f ms, status %d", ms, st);
	ut_check(ms >= 0 && st == 0, "rmmod of a consumer blocked behind the walk");

	/* The core is pinned by the walk: refused at once, or unloaded. */
	ms = timed("rmmod unwind_deferred", run, "unwind_deferred", &st);
	ut_diag("rmmod unwind_deferred: %.0f ms, status %d", ms, st);
	ut_check(ms >= 0, "rmmod of the core blocked behind the walk");

	zero.range.start = (unsigned long)region;
	zero.range.len = 4096;
	zero.mode = 0;
	if (ioctl(uffd, UFFDIO_ZEROPAGE, &zero))
		ut_check(0, "UFFDIO_ZEROPAGE: %s", strerror(errno));
	pthread_join(t, NULL);
	ut_diag("walk released");
	/* Let the children blocked until now finish before the next test. */
	while (wait(&st) > 0)
		;
	return ut_result();
}
#else
int main(void)
{
	ut_diag("the blocked walk is set up by 64-bit code only");
	return UT_SKIP;
}
#endif
