// SPDX-License-Identifier: GPL-2.0
/*
 * Forced races of the request protocol (unwind_race.ko, injection build of
 * unwind_deferred.ko): one request per run from a known call chain, with
 * one or two NMIs/IRQs fired at chosen steps of request, process and the
 * exit reset; every run must keep the protocol's guarantee.
 */
#include <sys/ioctl.h>

#include "ut.h"
#include "../modules/race/unwind_race_uapi.h"

#define RACE_CTL "/sys/kernel/debug/unwind_race/ctl"

static const char *const step_names[RACE_NSTEPS] = {
	"CookieRead", "MaskRead", "CookieInstalled", "MaskSet", "PendingSeen",
	"PendingCleared", "Walked", "BeforeCallback", "AfterCallback",
	"ResetRead", "ResetDone",
};

static int fd;
static unsigned int runs, fired[RACE_NSTEPS], reuse_runs;
static struct race_result last;	/* of the last check() */

/* A few frames between main and the run's syscall. */
static int __attribute__((noinline)) run_at(struct race_run *run, int depth)
{
	int r;

	if (depth)
		r = run_at(run, depth - 1);
	else
		r = ioctl(fd, RACE_IOC_RUN, run);
	__asm__ volatile("" ::: "memory");	/* no tail call */
	return r;
}

static void check(struct race_run *run)
{
	struct race_result r;
	int i;

	runs++;
	if (run_at(run, 3)) {
		ut_check(0, "RACE_IOC_RUN: %s", strerror(errno));
		return;
	}
	/* A later entry, from another call chain. */
	if (ioctl(fd, RACE_IOC_RESULT, &r)) {
		ut_check(0, "RACE_IOC_RESULT: %s", strerror(errno));
		return;
	}
	for (i = 0; i < 2; i++)
		if (run->plan[i].action && (r.fired & (1u << i)))
			fired[run->plan[i].step]++;
#define PLAN "plan %s#%u a%u + %s#%u a%u", \
	step_names[run->plan[0].step], run->plan[0].hit, run->plan[0].action, \
	step_names[run->plan[1].step], run->plan[1].hit, run->plan[1].action
	ut_check(r.zero == 0, PLAN);
	ut_check(r.missing == 0, PLAN);
	ut_check(r.duplicate == 0, PLAN);
	ut_check(r.unrequested == 0, PLAN);
	ut_check(r.bad_trace == 0, PLAN);
	ut_check(r.reused == 0, PLAN);
	ut_check(r.late == 0, PLAN);
	ut_check(r.callbacks >= 1 && r.handed >= 1, PLAN);
	ut_check(r.direct_nr >= 5, "direct unwind of %u frames", r.direct_nr);
	last = r;
}

int main(void)
{
	struct race_run run;
	unsigned int s, t, a, hit, total = 0;

	fd = open(RACE_CTL, O_RDWR);
	if (fd < 0) {
		ut_diag("cannot open %s: %s", RACE_CTL, strerror(errno));
		return UT_FAIL;
	}
	/* One interrupt at every step (first and second time it is reached). */
	for (s = 0; s < RACE_NSTEPS; s++)
		for (hit = 1; hit <= 2; hit++)
			for (a = RACE_NMI_REQUEST_W0; a < RACE_NACTIONS; a++) {
				memset(&run, 0, sizeof(run));
				run.plan[0] = (struct race_plan){ s, hit, a, 0 };
				check(&run);
			}
	/* Two: an NMI or IRQ request, then an NMI at any step after it. */
	for (s = 0; s < RACE_NSTEPS; s++)
		for (t = 0; t < RACE_NSTEPS; t++) {
			memset(&run, 0, sizeof(run));
			run.plan[0] = (struct race_plan){ s, 1, RACE_NMI_REQUEST_W1, 0 };
			run.plan[1] = (struct race_plan){ t, 1, RACE_NMI_COOKIE, 0 };
			check(&run);
			run.plan[0] = (struct race_plan){ s, 1, RACE_IRQ_REQUEST_W2, 0 };
			run.plan[1] = (struct race_plan){ t, 1, RACE_NMI_REQUEST_W0, 0 };
			check(&run);
		}
	/*
	 * Bit reuse: work 1 requests (NMI), then, after the task work read its
	 * mask and before it calls back, work 1 is cancelled and a fresh work
	 * takes its bit: the fresh work must get no callback.
	 */
	for (s = 0; s < RACE_NSTEPS; s++) {
		struct race_result r;

		memset(&run, 0, sizeof(run));
		run.plan[0] = (struct race_plan){ 0, 1, RACE_NMI_REQUEST_W1, 0 };
		run.plan[1] = (struct race_plan){ s, 1, RACE_REUSE_W1, 0 };
		if (run_at(&run, 3) || ioctl(fd, RACE_IOC_RESULT, &r)) {
			ut_check(0, "reuse run: %s", strerror(errno));
			continue;
		}
		if (!(r.fired & 2))
			continue;
		reuse_runs++;
		ut_check(r.reused_bit, "reuse at %s: the fresh work got another bit", step_names[s]);
		ut_check(r.unrequested == 0 && r.missing == 0 && r.duplicate == 0 &&
			 r.bad_trace == 0 && r.zero == 0,
			 "reuse at %s: unrequested %u missing %u duplicate %u bad %u zero %u",
			 step_names[s], r.unrequested, r.missing, r.duplicate, r.bad_trace, r.zero);
	}
	ut_check(reuse_runs >= 2, "bit reuse forced in %u runs", reuse_runs);
	/*
	 * A task work that cannot be queued (the task is exiting) fails its
	 * request and clears only what that request set: works 0 and 1,
	 * requested after it in the same entry, get their callbacks.
	 */
	memset(&run, 0, sizeof(run));
	run.fail_queue = 1;
	check(&run);
	ut_diag("failed queueing: %s; then %u handed, %u called back",
		last.queue_failed ? "-ESRCH, cookie 0, bits cleared" : "WRONG",
		last.handed, last.callbacks);
	ut_check(last.queue_failed && last.handed == 2 && last.callbacks == 2,
		 "a request whose task work cannot be queued");
	/* Callbacks that came after their run's result. */
	memset(&run, 0, sizeof(run));
	check(&run);
	for (s = 0; s < RACE_NSTEPS; s++) {
		ut_check(fired[s] > 0, "no interrupt fired at %s", step_names[s]);
		total += fired[s];
	}
	ut_diag("%u runs, %u interrupts fired, bit reuse forced in %u", runs, total, reuse_runs);
	return ut_result();
}
