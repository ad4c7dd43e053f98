// SPDX-License-Identifier: GPL-2.0
/*
 * Load/unload cycles for deferred_unload_1000 without a fork and exec
 * per insmod/rmmod:
 *   modcycle CYCLES CORE.ko CONSUMER.ko FIFO WAKE
 * Each cycle loads both modules, writes WAKE bytes to FIFO (waking the
 * victims, which re-enter read() with a request pending), then unloads
 * the consumer and the core.
 */
#include <sys/syscall.h>

#include "ut.h"

static int load(int fd, const char *what)
{
	if (syscall(SYS_finit_module, fd, "", 0)) {
		ut_diag("loading %s: %s", what, strerror(errno));
		return -1;
	}
	return 0;
}

/* Unloads that had to be retried: a task work running (it pins the module). */
static int busy_retries;

static int unload(const char *name)
{
	int tries;

	/*
	 * rmmod does not wait: EAGAIN while a task work walks a stack (the
	 * first walk after a load reads and compiles the victims' tables).
	 * A user retries; so does this, for up to a second.
	 */
	for (tries = 0; syscall(SYS_delete_module, name, O_NONBLOCK); tries++) {
		if (errno != EAGAIN || tries == 1000) {
			ut_diag("unloading %s: %s", name, strerror(errno));
			return -1;
		}
		busy_retries++;
		usleep(1000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int cycles, core, consumer, fifo, wake, i, w;
	unsigned long long q0;
	char bytes[64];

	if (argc != 6) {
		fprintf(stderr, "usage: modcycle CYCLES CORE.ko CONSUMER.ko FIFO WAKE\n");
		return UT_FAIL;
	}
	cycles = atoi(argv[1]);
	core = open(argv[2], O_RDONLY);
	consumer = open(argv[3], O_RDONLY);
	fifo = open(argv[4], O_RDWR);
	wake = atoi(argv[5]);
	if (core < 0 || consumer < 0 || fifo < 0 || wake < 0 || wake > 64) {
		ut_diag("bad arguments");
		return UT_FAIL;
	}
	memset(bytes, 'v', sizeof(bytes));
	for (i = 0; i < cycles; i++) {
		if (load(core, argv[2]) || load(consumer, argv[3]))
			break;
		q0 = ut_stat("queued");
		if (write(fifo, bytes, wake) != wake)
			break;
		/*
		 * Let the victims block again, each with a request queued:
		 * 5 ms, and on until WAKE works were queued (for up to a
		 * second).  Every byte read is one return to user space and
		 * one read() entered again, which queues a work, so by then
		 * every byte is read and each victim that read one blocks
		 * with its work queued.  Waiting for one work only was not
		 * enough under load: a victim that read a second byte ran the
		 * work it had queued, and unload found fewer than one a cycle.
		 */
		usleep(5000);
		for (w = 0; ut_stat("queued") < q0 + wake && w < 1000; w++)
			usleep(1000);
		if (unload("unwind_test") || unload("unwind_deferred"))
			break;
	}
	printf("# %d cycles, %d unloads retried (a task work was running)\n", i, busy_retries);
	return i == cycles ? UT_PASS : UT_FAIL;
}
