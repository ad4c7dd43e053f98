// SPDX-License-Identifier: GPL-2.0
/*
 * Consumer tests: the ftrace-style and perf-style consumer modules, and
 * perf's own (synchronous) callchains for normal samples and kernel
 * threads.  One subcommand per test; see tests/jobs/tests.sh.
 */
#define _GNU_SOURCE
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include "ut.h"
#include "chain.h"

typedef unsigned long word;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void write_file(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(val, f) < 0 || fclose(f)) {
		ut_diag("cannot write %s: %s", path, strerror(errno));
		exit(UT_FAIL);
	}
}

/* --- a known call chain: chain_a -> chain_b -> chain_leaf ---------------- */

static volatile double spin_until;
static volatile int do_syscalls;

static __attribute__((noinline)) void chain_leaf(void)
{
	volatile unsigned long i;
	int n;

	chain_ra[0] = (word)__builtin_return_address(0);
	if (do_syscalls) {
		for (n = 0; n < do_syscalls; n++) {
#ifdef __x86_64__
			long r = SYS_getppid;

			asm volatile("syscall" : "+a"(r) :: "rcx", "r11", "memory");
#else
			long r = SYS_getppid;

			asm volatile("int $0x80" : "+a"(r) :: "memory");
#endif
		}
		return;
	}
	/*
	 * Mostly in this loop, rarely in clock_gettime(), where libc keeps no
	 * frame pointer and a sample's chain skips chain_leaf (about 10% of
	 * the samples with 50,000 rounds under TCG: too close to the 90%
	 * that t_perf_callchain() asks for).  With 500,000 rounds a 32-bit
	 * run on the KASAN kernel under host load still had 12 to 18% of its
	 * user samples there (its clock_gettime() is a slow syscall, whose
	 * return a pending timer sample lands on): call it 8 times less.
	 */
	while (now() < spin_until)
		for (i = 0; i < 4000000; i++)
			;
}

/* frames[first..first+2] are the chain's return addresses */
static int has_chain(const uint64_t *f, unsigned int nr, unsigned int first)
{
	return nr >= first + 3 && f[first] == chain_ra[0] && f[first + 1] == chain_ra[1] &&
	       f[first + 2] == chain_ra[2];
}

/*
 * The same for a timer sample: the chain starts at f[first] if the sample
 * hit chain_leaf, one or two frames later if it hit clock_gettime() or
 * the vDSO below it.
 */
static int has_chain_near(const uint64_t *f, unsigned int nr, unsigned int first)
{
	unsigned int j;

	for (j = first; j < first + 3; j++)
		if (has_chain(f, nr, j))
			return 1;
	return 0;
}

/* --- ftrace consumer ------------------------------------------------------ */

#define MAXEV 4096
struct ev {
	uint64_t cookie;
	unsigned int nr;
	uint64_t frames[8];
};

static int parse_frames(const char *p, uint64_t *out, unsigned int max)
{
	unsigned int n = 0;

	p = strchr(p, '{');
	if (!p)
		return 0;
	p++;
	while (*p && *p != '}' && n < max) {
		out[n++] = strtoull(p, (char **)&p, 16);
		if (*p == ',')
			p++;
	}
	return n;
}

static int t_ftrace(void)
{
	static struct ev req[MAXEV], stk[MAXEV];
	unsigned int nreq = 0, nstk = 0, i, j, chained = 0, unmatched = 0;
	char line[4096];
	FILE *f;

	prctl(PR_SET_NAME, "ut_ftrace");
	do_syscalls = 3;
	chain_a();
	prctl(PR_SET_NAME, "consumer");

	f = fopen("/sys/kernel/tracing/trace", "r");
	if (!f) {
		ut_diag("no trace file");
		return UT_FAIL;
	}
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if ((p = strstr(line, "unwind_request: cookie=")) && nreq < MAXEV) {
			req[nreq].cookie = strtoull(p + 23, NULL, 16);
			nreq++;
		} else if ((p = strstr(line, "unwind_stack: cookie=")) && nstk < MAXEV) {
			stk[nstk].cookie = strtoull(p + 21, &p, 16);
			p = strstr(p, "nr=");
			stk[nstk].nr = p ? strtoul(p + 3, NULL, 10) : 0;
			parse_frames(p ? p : "", stk[nstk].frames, 8);
			nstk++;
		}
	}
	fclose(f);
	for (i = 0; i < nreq; i++) {
		for (j = 0; j < nstk && stk[j].cookie != req[i].cookie; j++)
			;
		if (j == nstk)
			unmatched++;
	}
	for (j = 0; j < nstk; j++)
		if (has_chain(stk[j].frames, stk[j].nr < 8 ? stk[j].nr : 8, 1))
			chained++;
	ut_diag("%u request events, %u stack events, %u requests without a stack, %u stacks with the chain",
		nreq, nstk, unmatched, chained);
	ut_check(nreq >= 3, "too few request events");
	ut_check(unmatched == 0, "request events without a matching stack event");
	ut_check(chained >= 3, "the getppid() stacks must show chain_leaf/chain_b/chain_a");
	return ut_result();
}

/* --- perf consumer ------------------------------------------------------ */

static int t_perf_consumer(void)
{
	unsigned int samples = 0, user = 0, good = 0, ipmatch = 0, pending = 0, hw = 0;
	char line[4096];
	FILE *f;

	prctl(PR_SET_NAME, "ut_perf");
	write_file("/sys/kernel/debug/unwind_perf/comm", "ut_perf");
	write_file("/sys/kernel/debug/unwind_perf/enable", "1");
	spin_until = now() + 0.4;
	do_syscalls = 0;
	chain_a();
	write_file("/sys/kernel/debug/unwind_perf/enable", "0");

	f = fopen("/sys/kernel/debug/unwind_perf/samples", "r");
	if (!f)
		return UT_FAIL;
	while (fgets(line, sizeof(line), f)) {
		uint64_t fr[8], ip;
		char *p;
		int n;

		if (sscanf(line, "# samples %*d lost %*d hw %d", (int *)&hw) == 1)
			continue;
		if (strncmp(line, "sample ", 7))
			continue;
		samples++;
		if (strstr(line, "user=pending")) {
			pending++;
			continue;
		}
		if (!strstr(line, " user ip=") && !strstr(line, " user hw ip="))
			continue;
		user++;
		p = strstr(line, " ip=");
		ip = strtoull(p + 4, NULL, 16);
		p = strstr(line, "user=");
		n = 0;
		for (p += 5; *p && *p != '\n' && n < 8; ) {
			fr[n++] = strtoull(p, &p, 16);
			if (*p == ',')
				p++;
		}
		if (n && fr[0] == ip)
			ipmatch++;
		if (has_chain_near(fr, n, 1))
			good++;
	}
	fclose(f);
	ut_diag("%u samples (hardware counter: %s), %u pending, %u in user mode: %u with ip == frame 0, %u in chain_leaf<-chain_b<-chain_a",
		samples, hw ? "yes" : "none, cpu-clock only", pending, user, ipmatch, good);
	ut_check(samples >= 10, "too few samples");
	ut_check(pending == 0, "samples whose user stack never came");
	ut_check(user >= 5, "too few user-mode samples");
	ut_check(ipmatch == user, "the user stack must start at the sampled IP");
	ut_check(good * 10 >= user * 9, "samples must map to chain_leaf/chain_b/chain_a");
	return ut_result();
}

/* --- perf's own callchains ---------------------------------------------- */

struct perf_ring {
	int fd;
	struct perf_event_mmap_page *meta;
	char *data;
	size_t size;
};

static int perf_open(struct perf_ring *r, pid_t pid, int cpu, uint64_t period_ns)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = period_ns,
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.disabled = 1,
	};
	void *m;

	r->fd = syscall(SYS_perf_event_open, &attr, pid, cpu, -1, 0);
	if (r->fd < 0) {
		ut_diag("perf_event_open: %s", strerror(errno));
		return -1;
	}
	r->size = 64 * 4096;
	m = mmap(NULL, r->size + 4096, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED) {
		ut_diag("perf mmap: %s", strerror(errno));
		return -1;
	}
	r->meta = m;
	r->data = (char *)m + 4096;
	return 0;
}

/* Calls fn(pid, tid, ips, nr) for each sample in the ring. */
static void perf_samples(struct perf_ring *r,
			 void (*fn)(uint32_t pid, uint32_t tid, const uint64_t *ips, uint64_t nr))
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	static char buf[65536];

	while (tail < head) {
		struct perf_event_header h;
		size_t off = tail % r->size, i;

		for (i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = r->data[(off + i) % r->size];
		if (!h.size)
			break;
		for (i = 0; i < h.size; i++)
			buf[i] = r->data[(off + i) % r->size];
		if (h.type == PERF_RECORD_SAMPLE) {
			uint32_t *pt = (uint32_t *)(buf + sizeof(h));
			uint64_t *nr = (uint64_t *)(buf + sizeof(h) + 8);

			fn(pt[0], pt[1], nr + 1, *nr);
		}
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static unsigned int cc_samples, cc_user, cc_good, cc_kthread, cc_kthread_user;
static uint32_t cc_tid;

/* The first user chains without the call chain, for the log. */
#define CC_BAD_MAX 4
#define CC_BAD_FRAMES 6
static uint64_t cc_bad[CC_BAD_MAX][CC_BAD_FRAMES];
static unsigned int cc_bad_nr[CC_BAD_MAX], cc_bad_kept;

static void cc_keep_bad(const uint64_t *f, uint64_t nr)
{
	unsigned int j;

	if (cc_bad_kept == CC_BAD_MAX)
		return;
	for (j = 0; j < nr && j < CC_BAD_FRAMES; j++)
		cc_bad[cc_bad_kept][j] = f[j];
	cc_bad_nr[cc_bad_kept++] = j;
}

/*
 * Where the incomplete chains were: their first frames beside the chain's
 * return addresses, chain_leaf(), now() and the vDSO (a 32-bit
 * clock_gettime() under TCG is a system call whose return a pending timer
 * sample lands on).
 */
static void cc_show_bad(void)
{
	char line[256];
	unsigned long lo = 0, hi = 0;
	unsigned int i, j;
	int n;
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			break;
	if (f)
		fclose(f);
	ut_diag("chain_ra %lx %lx %lx, chain_leaf %lx, now %lx, vdso [%lx, %lx)",
		(unsigned long)chain_ra[0], (unsigned long)chain_ra[1],
		(unsigned long)chain_ra[2], (unsigned long)(word)chain_leaf,
		(unsigned long)(word)now, lo, hi);
	for (i = 0; i < cc_bad_kept; i++) {
		n = 0;
		line[0] = 0;
		for (j = 0; j < cc_bad_nr[i] && n >= 0 && n < (int)sizeof(line) - 20; j++)
			n += snprintf(line + n, sizeof(line) - n, " %llx",
				      (unsigned long long)cc_bad[i][j]);
		ut_diag("incomplete %u:%s", i + 1, line);
	}
}

static void cc_user_sample(uint32_t pid, uint32_t tid, const uint64_t *ips, uint64_t nr)
{
	uint64_t i;

	(void)pid;
	(void)tid;
	cc_samples++;
	for (i = 0; i < nr; i++) {
		if (ips[i] == PERF_CONTEXT_USER) {
			cc_user++;
			/* ips[i + 1] is the user IP; then the return addresses. */
			if (has_chain_near(ips + i + 1, nr - i - 1, 1))
				cc_good++;
			else
				cc_keep_bad(ips + i + 1, nr - i - 1);
			break;
		}
	}
}

static int t_perf_callchain(void)
{
	struct perf_ring r;

	if (perf_open(&r, 0, -1, 100000))
		return UT_FAIL;
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	spin_until = now() + 0.3;
	do_syscalls = 0;
	chain_a();
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	perf_samples(&r, cc_user_sample);
	ut_diag("%u samples, %u with a user chain, %u through chain_leaf<-chain_b<-chain_a",
		cc_samples, cc_user, cc_good);
	ut_check(cc_samples >= 10, "too few samples");
	ut_check(cc_user == cc_samples, "every sample of a user task has a user chain");
	ut_check(cc_good * 10 >= cc_user * 9, "user chains must show the call chain");
	if (cc_good * 10 < cc_user * 9)
		cc_show_bad();
	return ut_result();
}

static void cc_kthread_sample(uint32_t pid, uint32_t tid, const uint64_t *ips, uint64_t nr)
{
	uint64_t i;

	(void)pid;
	if (tid != cc_tid)
		return;
	cc_kthread++;
	for (i = 0; i < nr; i++)
		if (ips[i] == PERF_CONTEXT_USER)
			cc_kthread_user++;
}

static int t_perf_kthread(void)
{
	struct ut_deferred d = { .op = UT_OP_BUSY_KTHREAD, .arg = 400 };
	struct perf_ring r;
	cpu_set_t set;
	int fd = ut_open();

	/* Stay off CPU 0, where the kernel thread spins. */
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (perf_open(&r, -1, 0, 100000))
		return UT_FAIL;
	ioctl(r.fd, PERF_EVENT_IOC_ENABLE, 0);
	if (ioctl(fd, UT_IOC_DEFERRED, &d) || d.ret <= 0) {
		ut_diag("no kthread: %d", d.ret);
		return UT_FAIL;
	}
	cc_tid = d.ret;
	usleep(600000);
	ioctl(r.fd, PERF_EVENT_IOC_DISABLE, 0);
	perf_samples(&r, cc_kthread_sample);
	ut_diag("kthread %u: %u samples, %u with a user chain", cc_tid, cc_kthread,
		cc_kthread_user);
	ut_check(cc_kthread >= 5, "too few samples of the kernel thread");
	ut_check(cc_kthread_user == 0, "a kernel thread must not get a user chain");
	return ut_result();
}

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : "";

	if (!strcmp(t, "ftrace"))
		return t_ftrace();
	if (!strcmp(t, "ftrace_run")) {
		/* The workload of t_ftrace() alone, for trace-cmd to record. */
		prctl(PR_SET_NAME, "ut_ftrace");
		do_syscalls = 3;
		chain_a();
		return 0;
	}
	if (!strcmp(t, "perf_consumer"))
		return t_perf_consumer();
	if (!strcmp(t, "perf_callchain"))
		return t_perf_callchain();
	if (!strcmp(t, "perf_kthread"))
		return t_perf_kthread();
	fprintf(stderr, "unknown test '%s'\n", t);
	return UT_FAIL;
}
