// SPDX-License-Identifier: GPL-2.0
/*
 * A bounded perf_event_open() fuzzer for the attributes of deferred user
 * callchains, defer_callchain and defer_output (kernel patch 0005), which
 * trinity never sets.  Each round opens a group of one to four software
 * events with random sample types, read formats, exclusions, inherit,
 * frequency, sample_max_stack and side-band bits, on a child (per task) or
 * on a CPU, and 400 more opened and closed again on the waiting
 * child; the child forks, execs, signals itself, starts threads and
 * exits under the group; then every record in the ring buffers is checked
 * (header size, PERF_RECORD_CALLCHAIN_DEFERRED's length) and the counters
 * are read.  Reproducible: the seed is printed and is an argument.
 *
 *   perf_fuzz SEED EVENTS     at least EVENTS events opened
 *   perf_fuzz child N         a workload (the exec target)
 *
 * Exits 1 on a malformed record, or if no event took the new attributes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Not in the build machine's headers yet (patch 0005, upstream 6.19). */
#define ATTR_DEFER_CALLCHAIN	(1ULL << 38)
#define ATTR_DEFER_OUTPUT	(1ULL << 39)
#define RECORD_CALLCHAIN_DEFERRED 22

#define MAX_GROUP 4

static uint64_t rng;

static uint64_t next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static unsigned int below(unsigned int n)
{
	return (unsigned int)(next() % n);
}

static int chance(unsigned int percent)
{
	return below(100) < percent;
}

static struct {
	unsigned long opened, rejected, records, deferred, lost, children, bad;
	unsigned long with_defer, read_errors;
} st;

static void nothing(int sig)
{
	(void)sig;
}

static void *thread_fn(void *arg)
{
	volatile unsigned long i, n = (unsigned long)arg;

	for (i = 0; i < n; i++)
		;
	return NULL;
}

/*
 * The child's work: spins, syscalls, a signal, a thread, a fork; an exec
 * of this program in one round of eight (@kind's bits choose).
 */
static void workload(const char *self, unsigned int kind, int depth)
{
	volatile unsigned long spin;
	pthread_t t;
	pid_t p;

	signal(SIGUSR1, nothing);
	for (spin = 0; spin < 100000; spin++)
		;
	for (spin = 0; spin < 100; spin++)
		syscall(SYS_getppid);
	if (kind & 1)
		raise(SIGUSR1);
	if ((kind & 2) && !pthread_create(&t, NULL, thread_fn, (void *)50000UL))
		pthread_join(t, NULL);
	if (kind & 4) {
		p = fork();
		if (p == 0)
			_exit(0);
		if (p > 0)
			waitpid(p, NULL, 0);
	}
	if (depth == 0 && (kind >> 3) % 8 == 0) {
		char arg[16];

		snprintf(arg, sizeof(arg), "%u", kind & 7);
		execl(self, self, "child", arg, (char *)NULL);
	}
}

static const uint64_t sw_events[] = {
	PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS,
	PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS, PERF_COUNT_SW_DUMMY,
};

static const uint64_t sample_bits[] = {
	PERF_SAMPLE_IP, PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ADDR,
	PERF_SAMPLE_READ, PERF_SAMPLE_CALLCHAIN, PERF_SAMPLE_ID, PERF_SAMPLE_CPU,
	PERF_SAMPLE_PERIOD, PERF_SAMPLE_STREAM_ID, PERF_SAMPLE_REGS_USER,
	PERF_SAMPLE_STACK_USER, PERF_SAMPLE_WEIGHT, PERF_SAMPLE_DATA_SRC,
	PERF_SAMPLE_IDENTIFIER, PERF_SAMPLE_TRANSACTION, PERF_SAMPLE_REGS_INTR,
	PERF_SAMPLE_PHYS_ADDR,
};

/* The bitfield word after read_format. */
static uint64_t *attr_flags(struct perf_event_attr *a)
{
	return (uint64_t *)((char *)a + offsetof(struct perf_event_attr, read_format) + 8);
}

static void random_attr(struct perf_event_attr *a, int leader)
{
	uint64_t *f = attr_flags(a);
	unsigned int i;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = sw_events[below(sizeof(sw_events) / sizeof(sw_events[0]))];
	for (i = 0; i < sizeof(sample_bits) / sizeof(sample_bits[0]); i++)
		if (chance(sample_bits[i] == PERF_SAMPLE_CALLCHAIN ? 85 : 25))
			a->sample_type |= sample_bits[i];
	if (a->sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_REGS_INTR)) {
		a->sample_regs_user = next() & 0xff;
		a->sample_regs_intr = next() & 0xff;
	}
	if (a->sample_type & PERF_SAMPLE_STACK_USER)
		a->sample_stack_user = 8 * below(1024);
	a->read_format = next() & 0x1f;
	if (chance(30)) {
		a->freq = 1;
		a->sample_freq = 100 + below(4000);
	} else {
		a->sample_period = a->config <= PERF_COUNT_SW_TASK_CLOCK ?
			20000 + below(500000) : 1 + below(8);
	}
	a->sample_max_stack = chance(50) ? below(300) : 0;
	a->wakeup_events = below(4);
	a->disabled = leader;
	a->inherit = chance(50);
	a->exclude_user = chance(15);
	a->exclude_kernel = chance(40);
	a->exclude_hv = chance(50);
	a->exclude_idle = chance(20);
	a->mmap = chance(40);
	a->comm = chance(40);
	a->task = chance(40);
	a->sample_id_all = chance(60);
	a->exclude_callchain_kernel = chance(20);
	a->exclude_callchain_user = chance(10);
	a->comm_exec = chance(30);
	a->context_switch = chance(20);
	a->inherit_thread = a->inherit && chance(30);
	a->remove_on_exec = chance(10);
	if (chance(75))
		*f |= ATTR_DEFER_CALLCHAIN;
	if (chance(75))
		*f |= ATTR_DEFER_OUTPUT;
}

/* Reads and checks every record in a ring buffer of @pages data pages. */
static void drain(void *base, unsigned int pages)
{
	struct perf_event_mmap_page *m = base;
	uint64_t size = (uint64_t)pages * 4096, head, tail;
	unsigned char *data = (unsigned char *)base + 4096;

	head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	tail = m->data_tail;
	while (tail < head) {
		struct perf_event_header h;
		unsigned char rec[64];
		uint64_t off = tail % size, i;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(off + i) % size];
		if (h.size < sizeof(h) || h.size % 8 || h.size > size || tail + h.size > head) {
			printf("# FAIL: record of type %u, size %u at %llu (head %llu)\n", h.type,
			       h.size, (unsigned long long)tail, (unsigned long long)head);
			st.bad++;
			break;
		}
		st.records++;
		if (h.type == PERF_RECORD_LOST)
			st.lost++;
		if (h.type == RECORD_CALLCHAIN_DEFERRED) {
			uint64_t nr;

			for (i = 0; i < sizeof(rec) && i < h.size; i++)
				rec[i] = data[(off + i) % size];
			/* header, cookie, nr, then nr ips (and the sample_id). */
			memcpy(&nr, rec + 16, sizeof(nr));
			if (h.size < 24 || nr > (uint64_t)(h.size - 24) / 8) {
				printf("# FAIL: deferred callchain of %llu ips in %u bytes\n",
				       (unsigned long long)nr, h.size);
				st.bad++;
			}
			st.deferred++;
		}
		tail += h.size;
	}
	__atomic_store_n(&m->data_tail, head, __ATOMIC_RELEASE);
}

/*
 * Events opened on the waiting child and closed again, a ring buffer
 * mapped on some, some enabled: the attribute checks and the teardown
 * paths, at volume (a child costs much more than an event).
 */
static void quick_events(pid_t child, int count)
{
	struct perf_event_attr a;
	int i, fd, per_cpu;
	void *m;

	for (i = 0; i < count; i++) {
		per_cpu = chance(25);
		random_attr(&a, 1);
		fd = syscall(SYS_perf_event_open, &a, per_cpu ? -1 : child,
			     per_cpu ? (int)below(2) : -1, -1, 0);
		if (fd < 0) {
			st.rejected++;
			continue;
		}
		st.opened++;
		if (*attr_flags(&a) & (ATTR_DEFER_CALLCHAIN | ATTR_DEFER_OUTPUT))
			st.with_defer++;
		if (chance(20)) {
			m = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m != MAP_FAILED) {
				ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
				drain(m, 1);
				munmap(m, 2 * 4096);
			}
		}
		close(fd);
	}
}

static void round_once(const char *self, int quick)
{
	struct perf_event_attr a;
	int fds[MAX_GROUP], n = 0, i, tries, go[2], per_cpu = chance(25);
	unsigned int pages = 1u << below(4), kind = below(64);
	void *maps[MAX_GROUP] = { 0 };
	unsigned long long buf[64];
	pid_t child;
	char c = 0;

	if (pipe(go))
		return;
	child = fork();
	if (child < 0)
		return;
	if (child == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) < 0)
			_exit(1);
		workload(self, kind, 0);
		_exit(0);
	}
	close(go[0]);
	st.children++;
	quick_events(child, quick);
	for (i = 0, tries = 0; i < 1 + (int)below(MAX_GROUP); i++) {
		random_attr(&a, i == 0);
		fds[n] = syscall(SYS_perf_event_open, &a, per_cpu ? -1 : child,
				 per_cpu ? (int)below(2) : -1, n ? fds[0] : -1, 0);
		if (fds[n] < 0) {
			st.rejected++;
			/* A child costs more than an attribute: retry a leader. */
			if (n == 0 && ++tries < 16)
				i--;
			else if (n == 0)
				break;
			continue;
		}
		st.opened++;
		if (*attr_flags(&a) & (ATTR_DEFER_CALLCHAIN | ATTR_DEFER_OUTPUT))
			st.with_defer++;
		if (n == 0 || chance(50)) {
			maps[n] = mmap(NULL, (pages + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED,
				       fds[n], 0);
			if (maps[n] == MAP_FAILED)
				maps[n] = NULL;
		}
		if (!maps[n] && n && maps[0])
			ioctl(fds[n], PERF_EVENT_IOC_SET_OUTPUT, fds[0]);
		n++;
	}
	if (n)
		ioctl(fds[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	if (write(go[1], &c, 1) < 0)
		kill(child, SIGKILL);
	close(go[1]);
	for (i = 0; i < n; i++)
		if (maps[i])
			drain(maps[i], pages);
	waitpid(child, NULL, 0);
	for (i = 0; i < n; i++) {
		/* Any read_format: only that it answers matters. */
		if (read(fds[i], buf, sizeof(buf)) < 0)
			st.read_errors++;
		if (maps[i]) {
			drain(maps[i], pages);
			munmap(maps[i], (pages + 1) * 4096);
		}
		close(fds[i]);
	}
}

int main(int argc, char **argv)
{
	unsigned long events;
	uint64_t seed;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "child")) {
		workload(argv[0], (unsigned int)atoi(argv[2]), 1);
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: perf_fuzz SEED EVENTS | child N\n");
		return 2;
	}
	seed = strtoull(argv[1], NULL, 0);
	events = strtoul(argv[2], NULL, 0);
	rng = seed ? seed : 1;
	printf("# seed %llu\n", (unsigned long long)seed);
	while (st.opened < events && !st.bad)
		round_once(argv[0], 400);
	printf("# %lu events opened (%lu with a defer bit), %lu rejected, %lu children; "
	       "%lu records, %lu deferred callchains, %lu lost, %lu failed reads\n",
	       st.opened, st.with_defer, st.rejected, st.children, st.records, st.deferred,
	       st.lost, st.read_errors);
	return st.bad || !st.with_defer ? 1 : 0;
}
