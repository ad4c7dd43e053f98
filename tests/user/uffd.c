// SPDX-License-Identifier: GPL-2.0
/*
 * A deferred walk blocked in a user page fault (a frame pointer into a
 * userfaultfd region nobody serves) must not block the module's cancel
 * path: unwind_deferred_cancel() and rmmod finish within 5 s while the
 * walk waits, and everything completes once the page is served.
 */
#include <linux/userfaultfd.h>
#include <poll.h>
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

int main(void)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg;
	struct uffdio_zeropage zero;
	struct uffd_msg msg;
	struct pollfd pfd;
	pthread_t t;
	double ms;
	int uffd, st;

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		ut_diag("userfaultfd: %s", strerror(errno));
		return UT_FAIL;
	}
	region = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	reg.range.start = (unsigned long)region;
	reg.range.len = 4096;
	reg.mode = UFFDIO_REGISTER_MODE_MISSING;
	if (region == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		ut_diag("UFFDIO_REGISTER: %s", strerror(errno));
		return UT_FAIL;
	}
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

	zero.range = reg.range;
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
