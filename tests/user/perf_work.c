// SPDX-License-Identifier: GPL-2.0
/*
 * A workload with a known user stack, for perf and trace-cmd in the guest.
 *
 *   perf_work DEPTH MODE MS [THREADS]
 *
 * main -> outer -> probed -> recurse (DEPTH times) -> leaf, and leaf works
 * for MS milliseconds: MODE "user" spins in user space, "sys" makes
 * syscalls, "mixed" does both.  With THREADS, that many threads run the
 * chain one after another, each exiting right after its work.
 *
 *   perf_work offset SYMBOL
 *
 * prints the file offset of outer or probed in this binary (for a
 * uretprobe: r:NAME /bin/perf_work64:OFFSET).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

static int depth, mode_user, mode_sys;
static long work_ms;
static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The syscall instruction inside leaf(): glibc's syscall() has no frame. */
static inline __attribute__((always_inline)) long raw_getppid(void)
{
	long r;
#ifdef __x86_64__
	asm volatile("syscall" : "=a"(r) : "a"((long)SYS_getppid) : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80" : "=a"(r) : "a"((long)SYS_getppid) : "memory");
#endif
	return r;
}

static __attribute__((noinline)) void leaf(void)
{
	double end = now_ms() + work_ms;
	unsigned long i;

	while (now_ms() < end) {
		if (mode_user)
			for (i = 0; i < 20000; i++)
				sink += i;
		if (mode_sys)
			for (i = 0; i < 20; i++)
				sink += raw_getppid();
	}
	asm volatile("" ::: "memory");
}

static __attribute__((noinline)) void recurse(int n)
{
	if (n > 0)
		recurse(n - 1);
	else
		leaf();
	asm volatile("" ::: "memory");	/* no tail call */
}

__attribute__((noinline)) void probed(void)
{
	recurse(depth);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) void outer(void)
{
	probed();
	asm volatile("" ::: "memory");
}

static void *thread(void *arg)
{
	(void)arg;
	outer();
	return NULL;
}

/* The file offset of code address a, from /proc/self/maps. */
static long file_offset(unsigned long a)
{
	unsigned long start, end, off;
	char line[512], perm[8];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s %lx", &start, &end, perm, &off) == 4 &&
		    a >= start && a < end) {
			fclose(f);
			return (long)(a - start + off);
		}
	}
	fclose(f);
	return -1;
}

int main(int argc, char **argv)
{
	int threads = 0, i;

	if (argc == 3 && !strcmp(argv[1], "offset")) {
		unsigned long a = !strcmp(argv[2], "probed") ? (unsigned long)probed :
				  (unsigned long)outer;

		printf("%#lx\n", file_offset(a));
		return 0;
	}
	if (argc < 4) {
		fprintf(stderr, "usage: %s DEPTH user|sys|mixed MS [THREADS]\n", argv[0]);
		return 2;
	}
	depth = atoi(argv[1]);
	mode_user = !strcmp(argv[2], "user") || !strcmp(argv[2], "mixed");
	mode_sys = !strcmp(argv[2], "sys") || !strcmp(argv[2], "mixed");
	work_ms = atol(argv[3]);
	if (argc > 4)
		threads = atoi(argv[4]);
	if (depth < 0 || depth > 10000 || (!mode_user && !mode_sys)) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	if (!threads) {
		outer();
		return 0;
	}
	for (i = 0; i < threads; i++) {
		pthread_t t;

		if (pthread_create(&t, NULL, thread, NULL) || pthread_join(t, NULL)) {
			fprintf(stderr, "pthread failed\n");
			return 1;
		}
	}
	return 0;
}
