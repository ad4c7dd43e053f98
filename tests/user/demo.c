// SPDX-License-Identifier: GPL-2.0
/*
 * The README's main job: a program with a recognizable call chain asks
 * for its user stack through a deferred request (unwind_test.ko queues
 * it with unwind_deferred_request()), and prints what the callback got
 * before the syscall returned.  scripts/demo symbolizes the frames.
 */
#include <stdint.h>
#include <sys/ioctl.h>

#include "ut.h"

static int fd;

static __attribute__((noinline)) uint64_t compute_checksum(const char *s)
{
	struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 1 };
	uint64_t sum = 0;

	while (*s)
		sum = sum * 31 + *s++;
	if (ioctl(fd, UT_IOC_DEFERRED, &d))
		exit(UT_FAIL);
	printf("UT-REQUEST ret=%d cookie=%#llx\n", d.ret, (unsigned long long)d.cookie);
	return sum;
}

static __attribute__((noinline)) uint64_t handle_request(const char *path)
{
	uint64_t r = compute_checksum(path);

	asm volatile("" ::: "memory");
	return r;
}

static __attribute__((noinline)) uint64_t serve_one_client(int id)
{
	uint64_t r = handle_request(id & 1 ? "/index.html" : "/about.html");

	asm volatile("" ::: "memory");
	return r;
}

int main(void)
{
	struct ut_deferred reset = { .op = UT_OP_RESET };
	struct ut_result r;
	struct ut_deferred q = { .op = UT_OP_RESULT, .arg = 0, .ptr = (uintptr_t)&r };
	unsigned int i;

	fd = ut_open();
	ioctl(fd, UT_IOC_DEFERRED, &reset);
	serve_one_client(1);
	if (ioctl(fd, UT_IOC_DEFERRED, &q))
		return UT_FAIL;
	printf("UT-CALLBACK cookie=%#llx pid=%d frames=%u\n",
	       (unsigned long long)r.cookie, r.pid, r.nr);
	for (i = 0; i < r.nr && i < UT_TRACE_MAX; i++)
		printf("UT-FRAME %u %#llx\n", i, (unsigned long long)r.entries[i]);
	return r.callbacks == 1 ? UT_PASS : UT_FAIL;
}
