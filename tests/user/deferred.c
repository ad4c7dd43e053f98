// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred unwinding tests, built 64-bit and -m32.  One subcommand per
 * test; see tests/jobs/tests.sh.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <signal.h>

#include "ut.h"
#include "chain.h"

typedef unsigned long word;

static int fd;

static int op(struct ut_deferred *d)
{
	return ioctl(fd, UT_IOC_DEFERRED, d);
}

static void do_op(struct ut_deferred *d)
{
	if (op(d)) {
		ut_diag("op %u failed: %s", d->op, strerror(errno));
		exit(UT_FAIL);
	}
}

static void reset(void)
{
	struct ut_deferred d = { .op = UT_OP_RESET };

	do_op(&d);
}

static struct ut_result result(unsigned int work)
{
	struct ut_result r;
	struct ut_deferred d = { .op = UT_OP_RESULT, .arg = work, .ptr = (uintptr_t)&r };

	memset(&r, 0, sizeof(r));
	do_op(&d);
	return r;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		ut_diag("cannot pin to CPU %d", cpu);
		exit(UT_SKIP);
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The callback's trace must be the direct unwind of the same entry. */
static void check_delivered(struct ut_deferred *d, unsigned int work, const char *what)
{
	struct ut_result r = result(work);

	ut_diag("%s: ret %d cookie %#llx; callbacks %llu cookie %#llx nr %u direct %u match %u",
		what, d->ret, (unsigned long long)d->cookie,
		(unsigned long long)r.callbacks, (unsigned long long)r.cookie,
		r.nr, d->direct_nr, r.matches_direct);
	ut_check(d->ret == 0, "request returned %d", d->ret);
	ut_check(d->cookie != 0, "zero cookie");
	ut_check(r.callbacks == 1, "callbacks %llu", (unsigned long long)r.callbacks);
	ut_check(r.cookie == d->cookie, "cookie mismatch");
	ut_check(r.pid == getpid(), "callback for pid %d", r.pid);
	ut_check(r.nr >= 2 && r.nr == d->direct_nr, "nr %u direct %u", r.nr, d->direct_nr);
	ut_check(r.matches_direct, "trace differs from the direct unwind");
	ut_check(!r.exiting, "ran in exit path");
}

static int t_task(void)
{
	struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 1 };

	reset();
	do_op(&d);
	check_delivered(&d, 0, "task");
	return ut_result();
}

/*
 * A request pending when a signal is delivered is walked first (get_signal()
 * runs task works before it builds the frame): the trace is the syscall's,
 * not the handler's.
 */
static volatile sig_atomic_t sig_seen;

static void on_usr1(int sig)
{
	(void)sig;
	sig_seen = 1;
}

static int t_signal(void)
{
	struct ut_deferred d = { .op = UT_OP_REQUEST_SIGNAL, .works = 1 };

	signal(SIGUSR1, on_usr1);
	reset();
	do_op(&d);
	ut_check(sig_seen, "SIGUSR1 handler did not run");
	check_delivered(&d, 0, "signal");
	return ut_result();
}

static int t_nmi(void)
{
	struct ut_deferred d = { .op = UT_OP_REQUEST_NMI, .works = 1 };

	reset();
	do_op(&d);
	ut_check(d.arg == 1, "request did not run in NMI context");
	check_delivered(&d, 0, "nmi");
	return ut_result();
}

/* --- IRQ: an hrtimer interrupts this known chain in user mode -------- */

static volatile int spin_stop;

static __attribute__((noinline)) void chain_leaf(void)
{
	struct ut_deferred d = { .op = UT_OP_IRQ_RESULT };
	volatile unsigned long i;

	chain_ra[0] = (word)__builtin_return_address(0);
	while (!spin_stop) {
		for (i = 0; i < 200000; i++)
			;
		do_op(&d);
		if (d.arg)
			spin_stop = 1;
	}
}

/*
 * One hrtimer request while this task spins in chain_leaf().  Returns 1 when
 * the frames show the chain, 0 when the timer hit outside it or in
 * chain_leaf's prologue or epilogue (the frame pointer then still names the
 * caller's frame, the one window where frame-pointer unwinding is off by
 * one), -1 on failure.
 */
static int irq_once(void)
{
	struct ut_deferred d = { .op = UT_OP_REQUEST_IRQ, .works = 1, .arg = 300 };
	struct ut_result r;
	int i, chain = 1;

	reset();
	spin_stop = 0;
	do_op(&d);
	chain_a();
	d.op = UT_OP_IRQ_RESULT;
	do_op(&d);
	r = result(0);
	ut_diag("irq: state %u ret %d cookie %#llx; callbacks %llu cookie %#llx nr %u",
		d.arg, d.ret, (unsigned long long)d.cookie, (unsigned long long)r.callbacks,
		(unsigned long long)r.cookie, r.nr);
	ut_check(d.arg == 1, "hrtimer state %u (1: requested from hard IRQ)", d.arg);
	ut_check(d.ret == 0, "request returned %d", d.ret);
	ut_check(r.callbacks == 1 && r.cookie == d.cookie, "callback/cookie");
	ut_check(r.pid == getpid(), "pid");
	if (ut_failed)
		return -1;
	/*
	 * frames[0] is wherever the timer hit; then the chain's return
	 * addresses.  A shorter trace means the timer hit outside the chain
	 * (seen once, under KASAN): try again, like a hit in a prologue.
	 */
	if (r.nr < 4)
		chain = 0;
	for (i = 0; i < 3 && chain; i++)
		if (r.entries[i + 1] != chain_ra[i])
			chain = 0;
	if (!chain)
		ut_diag("frames %#llx %#llx %#llx, chain %#lx %#lx %#lx",
			(unsigned long long)r.entries[1], (unsigned long long)r.entries[2],
			(unsigned long long)r.entries[3], chain_ra[0], chain_ra[1], chain_ra[2]);
	return chain;
}

static int t_irq(void)
{
	int i, ret = 0;

	pin(0);
	for (i = 0; i < 5 && ret == 0; i++)
		ret = irq_once();
	ut_check(ret == 1, "no attempt out of %d showed the call chain", i);
	return ut_result();
}

/* --- cookies ------------------------------------------------------------ */

static int t_cookie_same(void)
{
	struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 0xf, .count = 25 };
	int w;

	reset();
	do_op(&d);
	ut_diag("100 requests, cookie %#llx, %u differed", (unsigned long long)d.cookie,
		d.cookies_differ);
	ut_check(d.ret == 0, "first request %d", d.ret);
	ut_check(d.cookies_differ == 0, "cookies differ");
	for (w = 0; w < UT_NWORKS; w++) {
		ut_check(d.rets[w] == 1, "repeat on work %d returned %d", w, d.rets[w]);
		ut_check(result(w).cookie == d.cookie, "work %d callback cookie", w);
	}
	return ut_result();
}

static int t_cookie_new(void)
{
	struct ut_deferred a = { .op = UT_OP_REQUEST, .works = 1 };
	struct ut_deferred b = a, g = { .op = UT_OP_GET_COOKIE, .works = 1 };

	do_op(&a);
	do_op(&b);
	ut_diag("entry 1 %#llx entry 2 %#llx", (unsigned long long)a.cookie,
		(unsigned long long)b.cookie);
	ut_check(a.cookie && b.cookie && a.cookie != b.cookie, "same cookie across entries");
	ut_check(a.ret == 0 && b.ret == 0, "second entry must queue again: %d %d", a.ret, b.ret);
	do_op(&g);
	ut_check(g.ret == 0, "get_cookie not stable within an entry");
	ut_check(g.cookies_differ == 0, "request and get_cookie disagree");
	ut_check(g.cookie != b.cookie && g.cookie, "get_cookie reused an old cookie");
	return ut_result();
}

/* Prints the cookies of @n entries on CPU 0, one per line. */
static int t_cookies(int n)
{
	struct ut_deferred g = { .op = UT_OP_GET_COOKIE };
	int i;

	pin(0);
	for (i = 0; i < n; i++) {
		do_op(&g);
		ut_check(g.cookie != 0, "cookie 0");
		printf("%llu\n", (unsigned long long)g.cookie);
	}
	return ut_result();
}

static uint64_t cpu_cookie[2];

static void *cookie_thread(void *arg)
{
	int cpu = (int)(uintptr_t)arg;
	struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 2 };

	pin(cpu);
	do_op(&d);
	cpu_cookie[cpu] = d.cookie;
	return NULL;
}

static int t_cookie_cpus(void)
{
	pthread_t t[2];
	int i;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		ut_diag("needs 2 CPUs");
		return UT_SKIP;
	}
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, cookie_thread, (void *)(uintptr_t)i);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	ut_diag("cpu0 %#llx cpu1 %#llx", (unsigned long long)cpu_cookie[0],
		(unsigned long long)cpu_cookie[1]);
	ut_check(cpu_cookie[0] && cpu_cookie[1] && cpu_cookie[0] != cpu_cookie[1], "cookies");
	ut_check((cpu_cookie[0] >> 48) != (cpu_cookie[1] >> 48), "CPU part of the cookie");
	return ut_result();
}

/* --- cache --------------------------------------------------------------- */

static int t_cache(void)
{
	struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 0xf };
	unsigned long long w0 = ut_stat("walks"), h0 = ut_stat("cache_hits");
	unsigned long long c0 = ut_stat("callbacks");
	struct ut_result r0, r;
	int w;

	reset();
	do_op(&d);
	ut_diag("4 works, one entry: walks +%llu, cache hits +%llu, callbacks +%llu",
		ut_stat("walks") - w0, ut_stat("cache_hits") - h0, ut_stat("callbacks") - c0);
	ut_check(ut_stat("walks") - w0 == 1, "exactly one walk");
	ut_check(ut_stat("callbacks") - c0 == 4, "one callback per work");
	r0 = result(0);
	for (w = 0; w < UT_NWORKS; w++) {
		r = result(w);
		ut_check(r.callbacks == 1 && r.cookie == d.cookie, "work %d", w);
		ut_check(r.nr == r0.nr && !memcmp(r.entries, r0.entries, sizeof(r.entries)),
			 "work %d got another trace", w);
		ut_check(r.matches_direct, "work %d trace", w);
	}
	return ut_result();
}

/* --- mask and errors ----------------------------------------------------- */

static int t_mask(void)
{
	struct ut_deferred d = { .op = UT_OP_MASK };
	int want;

	do_op(&d);
	/*
	 * The kernel's mask is 64 bits wide, also for a 32-bit caller: two
	 * reserved bits, three for perf's works (src/glue/perf.rs), d.arg
	 * held by the test module's own works.
	 */
	want = 64 - 2 - 3 - (int)d.arg;
	ut_diag("took %d free bits (want %d), next init %d, after cancel %d",
		d.ret, want, d.rets[0], d.rets[1]);
	ut_check(d.ret == want, "free bits");
	ut_check(d.rets[0] == -EBUSY, "init with no bit left");
	ut_check(d.rets[1] == 0, "cancel must free the bit");
	return ut_result();
}

static int t_errors(void)
{
	struct ut_deferred d = { .op = UT_OP_ERRORS };

	do_op(&d);
	ut_check(d.ret == 0, "failed argument checks: %#x (see dmesg)", d.ret);
	d.op = UT_OP_CONTEXT_ERRORS;
	do_op(&d);
	ut_check(d.ret == 0, "failed context checks: %#x (see dmesg)", d.ret);
	return ut_result();
}

/* --- cancel -------------------------------------------------------------- */

static struct ut_deferred sleeper;

static void *sleeper_thread(void *arg __attribute__((unused)))
{
	do_op(&sleeper);
	return NULL;
}

static int cancel_case(unsigned int ioctl_ms, unsigned int cb_ms, unsigned long long want_cb)
{
	struct ut_deferred c = { .op = UT_OP_CANCEL };
	struct ut_deferred i = { .op = UT_OP_CANCEL_INIT };
	struct ut_result rc, r0;
	pthread_t t;
	double t0, t1;

	do_op(&i);
	ut_check(i.ret == 0, "cancel work init %d", i.ret);
	reset();
	memset(&sleeper, 0, sizeof(sleeper));
	sleeper.op = UT_OP_CANCEL_SLEEP;
	sleeper.works = 1;
	sleeper.arg = ioctl_ms;
	sleeper.count = cb_ms;
	pthread_create(&t, NULL, sleeper_thread, NULL);
	usleep(60000);
	t0 = now();
	do_op(&c);
	t1 = now();
	pthread_join(t, NULL);
	rc = result(UT_NWORKS);
	r0 = result(0);
	ut_diag("request %d; cancel took %.0f ms; cancel work callbacks %llu (late %llu), work 0 %llu",
		sleeper.ret, (t1 - t0) * 1000, (unsigned long long)rc.callbacks,
		(unsigned long long)rc.bad_after_cancel, (unsigned long long)r0.callbacks);
	ut_check(sleeper.ret == 0, "request");
	ut_check(c.ret == -1, "cancelled work's bit is %d", c.ret);
	ut_check(rc.callbacks == want_cb, "cancel work callbacks");
	ut_check(rc.bad_after_cancel == 0, "callback after cancel returned");
	ut_check(r0.callbacks == 1, "the other work in the same entry");
	if (cb_ms)
		ut_check(t1 - t0 > cb_ms / 2000.0, "cancel did not wait for the callback");
	do_op(&i);
	return ut_result();
}

/* --- exit ---------------------------------------------------------------- */

static volatile word *exit_ra;

static __attribute__((noinline, noreturn)) void exit_leaf(void)
{
	exit_ra[0] = (word)__builtin_return_address(0);
	exit_ra[2] = getpid();
#ifdef __x86_64__
	asm volatile("syscall" :: "a"(231L), "D"(0L) : "memory");
#else
	asm volatile("int $0x80" :: "a"(252L), "b"(0L) : "memory");
#endif
	__builtin_unreachable();
}

static __attribute__((noinline)) void exit_mid(void)
{
	exit_ra[1] = (word)__builtin_return_address(0);
	exit_leaf();
}

/*
 * Runs @mid in a child named @comm (which unwind_test's sys_enter probe
 * acts on) with exit_ra shared, and returns the child's pid and status.
 */
static pid_t run_named(const char *comm, void (*mid)(void), int *st)
{
	pid_t pid;

	exit_ra = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	reset();
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, comm);
		mid();
		_exit(98);
	}
	waitpid(pid, st, 0);
	return pid;
}

/* Frames 1 and 2 of the last callback are the child's recorded ones. */
static void check_child_frames(struct ut_result *r, const char *what)
{
	ut_check(r->nr >= 3, "nr %u", r->nr);
	if (r->nr >= 3) {
		ut_check(r->entries[1] == exit_ra[0], "frame 1 %#llx != %#lx: %s",
			 (unsigned long long)r->entries[1], exit_ra[0], what);
		ut_check(r->entries[2] == exit_ra[1], "frame 2 %#llx != %#lx",
			 (unsigned long long)r->entries[2], exit_ra[1]);
	}
}

static int t_exit(void)
{
	struct ut_result r;
	pid_t pid;
	int st;

	pid = run_named("ut_exit", exit_mid, &st);
	r = result(0);
	ut_diag("child %d: callbacks %llu pid %d exiting %u nr %u", pid,
		(unsigned long long)r.callbacks, r.pid, r.exiting, r.nr);
	ut_check(r.callbacks == 1, "no callback for the exiting task");
	ut_check(r.pid == pid, "callback for pid %d", r.pid);
	ut_check(r.exiting, "callback did not run in the exit path");
	ut_check(r.exit_request == -EINVAL, "request from an exiting task: %d", r.exit_request);
	check_child_frames(&r, "not the exiting program's");
	return ut_result();
}

/* --- exec ---------------------------------------------------------------- */

/*
 * A request pending at execve() (made by unwind_test's sys_enter probe for
 * comm "ut_exec*") is delivered with the old program's stack, before the
 * new program replaces it: frames 1 and 2 are this program's.
 */
static __attribute__((noinline, noreturn)) void exec_leaf(void)
{
	static char *const argv[] = { "true", NULL };
	static char *const envp[] = { NULL };

	exit_ra[0] = (word)__builtin_return_address(0);
#ifdef __x86_64__
	asm volatile("syscall" :: "a"(59L), "D"("/bin/true"), "S"(argv), "d"(envp)
		     : "memory", "rcx", "r11");
#else
	asm volatile("int $0x80" :: "a"(11L), "b"("/bin/true"), "c"(argv), "d"(envp)
		     : "memory");
#endif
	_exit(99);	/* execve failed */
}

static __attribute__((noinline)) void exec_mid(void)
{
	exit_ra[1] = (word)__builtin_return_address(0);
	exec_leaf();
}

static int t_exec(void)
{
	struct ut_result r;
	pid_t pid;
	int st;

	pid = run_named("ut_exec", exec_mid, &st);
	ut_check(WIFEXITED(st) && WEXITSTATUS(st) == 0, "exec'd program status %#x", st);
	r = result(0);
	ut_diag("child %d: callbacks %llu pid %d nr %u frame 1 %#llx want %#lx", pid,
		(unsigned long long)r.callbacks, r.pid, r.nr,
		(unsigned long long)r.entries[1], exit_ra[0]);
	ut_check(r.callbacks == 1, "%llu callbacks for the request pending at exec",
		 (unsigned long long)r.callbacks);
	ut_check(r.pid == pid, "callback for pid %d", r.pid);
	check_child_frames(&r, "not the old program");
	return ut_result();
}

/* --- victims for the unload test ---------------------------------------- */

/*
 * Each victim blocks in read() on a FIFO; unwind_test's sys_enter probe
 * queues a request at every read() entry, which stays pending while the
 * victim sleeps.  The test writes one byte per victim and cycle.
 */
static int t_victims(int n, const char *fifo)
{
	int i;

	for (i = 0; i < n; i++) {
		if (fork() == 0) {
			int f = open(fifo, O_RDWR);
			char c;

			prctl(PR_SET_NAME, "ut_victim");
			while (f >= 0 && read(f, &c, 1) >= 0)
				;
			_exit(1);
		}
	}
	return UT_PASS;
}

/* --- stress -------------------------------------------------------------- */

static volatile int stress_stop;
static unsigned long stress_rounds;

static void *stress_thread(void *arg)
{
	struct ut_deferred d = { .op = UT_OP_STRESS, .arg = 2 };
	volatile unsigned long i;

	pin((int)(uintptr_t)arg);
	prctl(PR_SET_NAME, "ut_stress");
	while (!stress_stop) {
		if (op(&d) == 0)
			__atomic_fetch_add(&stress_rounds, 1, __ATOMIC_RELAXED);
		for (i = 0; i < 2000; i++)	/* user time for IRQs and NMIs to hit */
			;
	}
	return NULL;
}

static int t_stress(int seconds)
{
	struct ut_stress s = { .seconds = seconds };
	struct ut_deferred d = { .op = UT_OP_STRESS, .arg = 0, .ptr = (uintptr_t)&s };
	int ncpu = sysconf(_SC_NPROCESSORS_ONLN), i, n = 0;
	pthread_t t[16];

	do_op(&d);
	for (i = 0; i < 2 * ncpu && i < 16; i++, n++)
		pthread_create(&t[i], NULL, stress_thread, (void *)(uintptr_t)(i % ncpu));
	sleep(seconds);
	stress_stop = 1;
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	d.arg = 1;
	do_op(&d);
	ut_diag("%d threads on %d CPUs for %d s: %lu task rounds, %llu IRQ and %llu NMI requests",
		n, ncpu, seconds, stress_rounds, (unsigned long long)s.irq_requests,
		(unsigned long long)s.nmi_requests);
	ut_diag("requests %llu callbacks %llu missing %llu duplicates %llu unrequested %llu",
		(unsigned long long)s.requests, (unsigned long long)s.callbacks,
		(unsigned long long)s.missing, (unsigned long long)s.duplicates,
		(unsigned long long)s.unrequested);
	ut_diag("churn: %llu init/cancel cycles, %llu late callbacks; %llu events dropped",
		(unsigned long long)s.cycles, (unsigned long long)s.late,
		(unsigned long long)s.dropped);
	ut_check(s.requests > 0 && s.callbacks > 0, "nothing happened");
	ut_check(s.irq_requests > 0, "no IRQ requests");
	ut_check(s.nmi_requests > 0, "no NMI requests");
	ut_check(s.missing == 0, "requested entries without callback");
	ut_check(s.duplicates == 0, "entries with more than one callback per work");
	ut_check(s.unrequested == 0, "callbacks nobody asked for");
	ut_check(s.cycles > 0, "churn did not run");
	ut_check(s.late == 0, "callback after cancel");
	ut_check(s.dropped == 0, "event log overflow");
	return ut_result();
}

/*
 * Leaves a stress run and a busy kernel thread running and exits: what
 * unwind_test.ko's exit must stop (t_sec_test_module_exit_stops_work).
 * Prints the busy thread's pid.
 */
static int t_leave_running(void)
{
	struct ut_stress s = { 0 };
	struct ut_deferred d = { .op = UT_OP_STRESS, .arg = 0, .ptr = (uintptr_t)&s };

	do_op(&d);
	d = (struct ut_deferred){ .op = UT_OP_BUSY_KTHREAD, .arg = 3000 };
	do_op(&d);
	printf("%lld\n", (long long)d.ret);
	return UT_PASS;
}

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : "";
	int n = argc > 2 ? atoi(argv[2]) : 0;

	/* Victims outlive unwind_test.ko: they must not hold its file. */
	if (!strcmp(t, "victims") && argc == 4)
		return t_victims(n, argv[3]);
	fd = ut_open();
	if (!strcmp(t, "task"))
		return t_task();
	if (!strcmp(t, "nmi"))
		return t_nmi();
	if (!strcmp(t, "irq"))
		return t_irq();
	if (!strcmp(t, "cookie_same"))
		return t_cookie_same();
	if (!strcmp(t, "cookie_new"))
		return t_cookie_new();
	if (!strcmp(t, "cookie_cpus"))
		return t_cookie_cpus();
	if (!strcmp(t, "cookies"))
		return t_cookies(n);
	if (!strcmp(t, "cache"))
		return t_cache();
	if (!strcmp(t, "mask"))
		return t_mask();
	if (!strcmp(t, "errors"))
		return t_errors();
	if (!strcmp(t, "cancel_pending"))
		return cancel_case(300, 0, 0);
	if (!strcmp(t, "cancel_running"))
		return cancel_case(0, 300, 1);
	if (!strcmp(t, "exit"))
		return t_exit();
	if (!strcmp(t, "exec"))
		return t_exec();
	if (!strcmp(t, "signal"))
		return t_signal();
	if (!strcmp(t, "stress"))
		return t_stress(n ? n : 5);
	if (!strcmp(t, "leave_running"))
		return t_leave_running();
	fprintf(stderr, "unknown test '%s'\n", t);
	return UT_FAIL;
}
