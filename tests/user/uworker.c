// SPDX-License-Identifier: GPL-2.0
/*
 * io_uring's user workers (PF_USER_WORKER: the SQPOLL thread, io-wq) have
 * no user context of their own: every API call from one is refused, and
 * the task that submitted keeps working.  The worker reads unwind_test's
 * ctl file, whose read() calls the API (struct ut_reader).
 */
#include <linux/io_uring.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "ut.h"

static int ring_fd;
static struct io_uring_params p;
static void *sq, *cq;
static struct io_uring_sqe *sqes;

static int setup(void)
{
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SQPOLL;
	p.sq_thread_idle = 2000;
	ring_fd = syscall(__NR_io_uring_setup, 4, &p);
	if (ring_fd < 0) {
		ut_diag("io_uring_setup: %s", strerror(errno));
		return -1;
	}
	sq = mmap(NULL, p.sq_off.array + p.sq_entries * sizeof(__u32),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd,
		  IORING_OFF_SQ_RING);
	cq = mmap(NULL, p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe),
		  PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd,
		  IORING_OFF_CQ_RING);
	sqes = mmap(NULL, p.sq_entries * sizeof(struct io_uring_sqe),
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, ring_fd,
		    IORING_OFF_SQES);
	if (sq == MAP_FAILED || cq == MAP_FAILED || sqes == MAP_FAILED) {
		ut_diag("mmap of the rings: %s", strerror(errno));
		return -1;
	}
	return 0;
}

#define RING(base, off) ((unsigned int *)((char *)(base) + (off)))

/* One read of @fd by the ring's workers; returns the CQE's result. */
static int worker_read(int fd, void *buf, unsigned int len)
{
	unsigned int tail = *RING(sq, p.sq_off.tail), head;
	unsigned int mask = *RING(sq, p.sq_off.ring_mask);
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe = &sqes[tail & mask];

	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (unsigned long)buf;
	sqe->len = len;
	sqe->off = 0;
	RING(sq, p.sq_off.array)[tail & mask] = tail & mask;
	__atomic_store_n(RING(sq, p.sq_off.tail), tail + 1, __ATOMIC_RELEASE);
	if (__atomic_load_n(RING(sq, p.sq_off.flags), __ATOMIC_ACQUIRE) & IORING_SQ_NEED_WAKEUP)
		syscall(__NR_io_uring_enter, ring_fd, 0, 0, IORING_ENTER_SQ_WAKEUP, NULL, 0);
	if (syscall(__NR_io_uring_enter, ring_fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0) {
		ut_diag("io_uring_enter: %s", strerror(errno));
		return -1000;
	}
	head = __atomic_load_n(RING(cq, p.cq_off.head), __ATOMIC_ACQUIRE);
	cqe = &((struct io_uring_cqe *)((char *)cq + p.cq_off.cqes))
		[head & *RING(cq, p.cq_off.ring_mask)];
	__atomic_store_n(RING(cq, p.cq_off.head), head + 1, __ATOMIC_RELEASE);
	return cqe->res;
}

int main(void)
{
	struct ut_reader r, mine;
	struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 1, .count = 1 };
	int fd = ut_open(), res;

	if (setup())
		return UT_FAIL;
	memset(&r, 0, sizeof(r));
	res = worker_read(fd, &r, sizeof(r));
	ut_check(res == sizeof(r), "worker read returned %d", res);
	ut_diag("worker: user_worker %u request %d cookie %#llx get_cookie %#llx faultable %d unwind_user %d nr %u",
		r.user_worker, r.request, (unsigned long long)r.cookie,
		(unsigned long long)r.get_cookie, r.faultable, r.unwind_user, r.unwind_nr);
	ut_check(r.user_worker == 1, "the read did not run in a user worker");
	ut_check(r.request == -EINVAL, "request from a user worker: %d", r.request);
	ut_check(r.cookie == 0 && r.get_cookie == 0, "cookies handed to a user worker");
	ut_check(r.faultable == -EINVAL, "faultable from a user worker: %d", r.faultable);
	ut_check(r.unwind_user == 0 && r.unwind_nr == 0, "unwind_user from a user worker");

	/* The submitting task itself is a user task as before. */
	res = read(fd, &mine, sizeof(mine));
	ut_check(res == sizeof(mine) && !mine.user_worker && mine.request == 0 &&
		 mine.cookie && mine.get_cookie == mine.cookie && mine.unwind_nr > 0,
		 "submitter: read %d worker %u request %d", res, mine.user_worker, mine.request);
	ut_check(ioctl(fd, UT_IOC_DEFERRED, &d) == 0 && d.ret >= 0, "submitter request %d", d.ret);
	return ut_result();
}
