// SPDX-License-Identifier: GPL-2.0
/*
 * User side of scripts/bench.  Prints "BENCH <key> <value>" lines; the
 * host takes medians over rounds and the ratios.
 *   bench walk DEPTH | walkcold DEPTH | walkprof DEPTH [ROUNDS] | irq DEPTH
 *   bench walklib DEPTH LIB [first|next]	(BENCH_DLOPEN) the first walk
 *	through LIB's ehlib_chain (tests/user/ehframe), dlopen'd, against
 *	the next; first|next: that walk between two reads of the CPU clock | cache N M DEPTH
 *   bench walkfn FILE	(BENCH_DLOPEN) the first walk through one frame of
 *	a shared object FILE never walked, against the next (walk_fn())
 *   bench workload none|perf|deferred
 *   bench time NAME CMD...
 *   bench getpid N
 *   bench anchor DEPTH user|sys UNITS
 *	scripts/bench --anchor's workload, run under Debian's perf: UNITS
 *	rounds of work at the bottom of DEPTH frames (user: arithmetic,
 *	sys: getppid() calls made from the leaf); prints the thread's CPU
 *	time, which counts the sampling interrupts and the task work that
 *	the sampling costs this thread, and not the perf tool's own work.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef BENCH_DLOPEN
#include <dlfcn.h>
#include <elf.h>
#endif

#include "unwind_bench_uapi.h"

static int fd;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static unsigned long long stat_of(const char *name)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/unwind_deferred/%s", name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &v) != 1)
		die(path);
	fclose(f);
	return v;
}

/* Runs fn at the bottom of a chain of `depth` frames. */
static __attribute__((noinline)) void at_depth(int depth, void (*fn)(void *), void *arg)
{
	if (depth <= 1)
		fn(arg);
	else
		at_depth(depth - 1, fn, arg);
	asm volatile("" ::: "memory");
}

static void do_walk(void *arg)
{
	struct ub_walk *w = arg;
#ifdef BENCH_RAW_SYSCALL
	/*
	 * The SFrame build (scripts/build-sframe-progs): Debian's libc has
	 * neither SFrame nor frame pointers, so the syscall is made here,
	 * in code the walk can step through, not in libc's ioctl().
	 */
	long ret;

	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"((long)SYS_ioctl), "D"((long)fd), "S"((long)UB_IOC_WALK), "d"(w)
		     : "rcx", "r11", "memory");
	if (ret)
		die("walk");
#else
	if (ioctl(fd, UB_IOC_WALK, w))
		die("walk");
#endif
}

static void do_irq(void *arg)
{
	struct ub_irq *q = arg;
	volatile unsigned long i;
	double end;

	if (ioctl(fd, UB_IOC_IRQ, q))
		die("irq start");
	end = now() + 0.2;
	while (now() < end)
		for (i = 0; i < 1000; i++)
			;
	q->period_us = 0;
	if (ioctl(fd, UB_IOC_IRQ, q))
		die("irq stop");
}

static void do_cache(void *arg)
{
	if (ioctl(fd, UB_IOC_CACHE, arg))
		die("cache");
}

/* Counts the sample records in perf's ring and marks them consumed. */
static long perf_drain(struct perf_event_mmap_page *meta, const char *data, size_t size)
{
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;
	long n = 0;

	while (tail < head) {
		struct perf_event_header h;
		size_t i;

		for (i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = data[(tail + i) % size];
		if (!h.size)
			break;
		n += h.type == PERF_RECORD_SAMPLE;
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

/* A CPU-bound recursion: deep stacks while it works. */
static __attribute__((noinline)) uint64_t work(int depth, uint64_t x)
{
	volatile unsigned long i;

	if (depth > 0)
		return work(depth - 1, x * 6364136223846793005ull + 1) ^ depth;
	for (i = 0; i < 20000; i++)
		x = x * 31 + i;
	return x;
}

static void workload(const char *mode)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.size = sizeof(attr),
		.sample_period = 100000,	/* 100 us: 10 kHz */
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN,
		.sample_max_stack = 512,
	};
	struct perf_event_mmap_page *meta = NULL;
	uint64_t sink = 0;
	long samples = 0;
	double t0, t1;
	int pfd = -1, i;

	if (!strcmp(mode, "perf")) {
		pfd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		if (pfd < 0)
			die("perf_event_open");
		meta = mmap(NULL, 257 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, pfd, 0);
		if (meta == MAP_FAILED)
			die("mmap");
	} else if (!strcmp(mode, "deferred")) {
		int c = open("/sys/kernel/debug/unwind_perf/comm", O_WRONLY);
		int p = open("/sys/kernel/debug/unwind_perf/period_us", O_WRONLY);
		int e = open("/sys/kernel/debug/unwind_perf/enable", O_WRONLY);

		/* The same 100 us cpu-clock period as the perf event above. */
		if (c < 0 || p < 0 || e < 0 || write(c, "bench64", 7) != 7 ||
		    write(p, "100", 3) != 3 || write(e, "1", 1) != 1)
			die("unwind_perf");
		close(c);
		close(p);
		close(e);
	}
	t0 = now();
	for (i = 0; i < 200; i++)
		sink += work(64, i);
	t1 = now();
	/* 1 MiB holds every sample of the run: count them afterwards. */
	if (meta)
		samples = perf_drain(meta, (char *)meta + 4096, 256 * 4096);
	if (!strcmp(mode, "deferred")) {
		int e = open("/sys/kernel/debug/unwind_perf/enable", O_WRONLY);
		FILE *f = fopen("/sys/kernel/debug/unwind_perf/samples", "r");

		if (e < 0 || write(e, "0", 1) != 1 || !f ||
		    fscanf(f, "# samples %ld", &samples) != 1)
			die("unwind_perf disable");
		close(e);
		fclose(f);
	}
	if (pfd >= 0)
		close(pfd);
	printf("BENCH workload_%s_s %.6f\n", mode, t1 - t0);
	if (samples)
		printf("BENCH workload_%s_samples %ld\n", mode, samples);
	if (sink == 42)
		puts("");
}

static volatile unsigned long anchor_sink;

/* One unit of the anchor workload: about 100,000 instructions. */
static __attribute__((noinline)) void anchor_leaf(void *arg)
{
	unsigned long i;

	if (*(int *)arg) {
		for (i = 0; i < 400; i++) {
			long r = SYS_getppid;

#ifdef __x86_64__
			asm volatile("syscall" : "+a"(r) :: "rcx", "r11", "memory");
#else
			asm volatile("int $0x80" : "+a"(r) :: "memory");
#endif
			anchor_sink += r;
		}
	} else {
		for (i = 0; i < 25000; i++)
			anchor_sink += i;
	}
}

static void anchor(int depth, const char *kind, long units)
{
	int sys = !strcmp(kind, "sys");
	struct timespec a, b;
	long i;

	if (depth < 1 || units < 1 || (!sys && strcmp(kind, "user")))
		die("usage: bench anchor DEPTH user|sys UNITS");
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (i = 0; i < units; i++)
		at_depth(depth, anchor_leaf, &sys);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	printf("ANCHOR cpu_ns %.0f\n", (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec));
}

#ifdef BENCH_DLOPEN
static struct ub_walk lib_walk;

static __attribute__((noinline)) void lib_leaf(void *c)
{
	(void)c;
	do_walk(&lib_walk);
}

/*
 * The first walk through DEPTH levels of a library never walked: this
 * program, libc and ld.so are walked first through the same leaf, so
 * that the first timed walk finds only LIB new (its file and the
 * functions walked in it), the second nothing.
 */
static int walk_lib(int depth, const char *lib, const char *prof)
{
	/* prof "first" or "next": that walk alone between two reads of the
	 * thread's CPU clock, for scripts/insn-profile's QEMU plugin. */
	int gate = prof ? (!strcmp(prof, "first") ? 1 : 2) : 0;
	struct timespec ga, gb;
	/* ehchain.h's struct eh_chain: the levels record return addresses. */
	static unsigned long chain_buf[1 << 14];
	void (*chain)(int, void *, void (*)(void *));
	double t0, t1, t2;
	void *h;

	lib_walk = (struct ub_walk){ .rounds = 1, .max = 1024 };
	at_depth(1, lib_leaf, NULL);
	h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	chain = h ? (void (*)(int, void *, void (*)(void *)))dlsym(h, "ehlib_chain") : NULL;
	if (!chain || depth < 1 || depth > 1000) {
		fprintf(stderr, "bench: %s: %s\n", lib, h ? "bad depth" : dlerror());
		return 1;
	}
	if (gate == 1)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ga);
	t0 = now();
	chain(depth - 1, chain_buf, lib_leaf);
	t1 = now();
	if (gate)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, gate == 1 ? &gb : &ga);
	chain(depth - 1, chain_buf, lib_leaf);
	t2 = now();
	if (gate == 2)
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &gb);
	if (gate)
		printf("WALKPROF walks 2 frames %u perf_frames 0\n", lib_walk.ours_frames);
	printf("BENCH walklib%d_first_ns %.0f\n", depth, (t1 - t0) * 1e9);
	printf("BENCH walklib%d_second_ns %.0f\n", depth, (t2 - t1) * 1e9);
	printf("BENCH walklib%d_frames %u\n", depth, lib_walk.ours_frames);
	return 0;
}
#endif

#ifdef BENCH_DLOPEN
/*
 * bench_via(fn, ra) calls fn with `ra` pushed just above fn's return
 * address.  Its CFI says nothing of the push (CFA = SP + 8 throughout),
 * so a walk from fn takes `ra` for bench_via's caller.  With `ra` a
 * function's first instruction plus one, the row there (the CIE's: CFA =
 * SP + 8, the return address at SP) takes the walk on to bench_via's
 * real caller: one frame of that function, in whatever file holds it.
 */
void bench_via(void (*fn)(void), unsigned long ra);
asm(".pushsection .text\n"
	".globl bench_via\n"
	".type bench_via, @function\n"
	"bench_via:\n"
	"	.cfi_startproc\n"
	"	push %rsi\n"
	"	call *%rdi\n"
	"	add $8, %rsp\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size bench_via, .-bench_via\n"
	".popsection\n");

static __attribute__((noinline)) void via_leaf(void)
{
	do_walk(&lib_walk);
	asm volatile("" ::: "memory");
}

/*
 * Maps the PT_LOAD segments of the shared object `path` as ld.so does,
 * without relocating it (none of its code runs), and returns the first
 * instruction of the function in the middle of its .eh_frame_hdr table
 * (the encodings every GNU and LLVM linker writes), or 0.
 */
static unsigned long map_fn(const char *path, unsigned int *fdes)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[32];
	unsigned long hi = 0, hdr = 0, base;
	const unsigned char *h;
	unsigned int n;
	int f, i, ok = 1, loc;
	void *p;

	f = open(path, O_RDONLY);
	if (f < 0 || pread(f, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_type != ET_DYN || eh.e_phnum > 32 ||
	    pread(f, ph, eh.e_phnum * sizeof(*ph), eh.e_phoff) != (long)(eh.e_phnum * sizeof(*ph)))
		return 0;
	for (i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_GNU_EH_FRAME)
			hdr = ph[i].p_vaddr;
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > hi)
			hi = ph[i].p_vaddr + ph[i].p_memsz;
	}
	p = mmap(NULL, hi, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!hdr || p == MAP_FAILED)
		return 0;
	base = (unsigned long)p;
	for (i = 0; i < eh.e_phnum; i++) {
		unsigned long pg = ph[i].p_vaddr & 4095;
		int prot = (ph[i].p_flags & PF_R ? PROT_READ : 0) |
			   (ph[i].p_flags & PF_W ? PROT_WRITE : 0) |
			   (ph[i].p_flags & PF_X ? PROT_EXEC : 0);

		if (ph[i].p_type != PT_LOAD || !ph[i].p_filesz)
			continue;
		if (mmap((void *)(base + ph[i].p_vaddr - pg), ph[i].p_filesz + pg, prot,
			 MAP_PRIVATE | MAP_FIXED, f, ph[i].p_offset - pg) == MAP_FAILED)
			ok = 0;
	}
	close(f);
	h = (const unsigned char *)(base + hdr);
	/* Version 1; eh_frame_ptr pcrel sdata4, fde_count udata4, the table datarel sdata4. */
	if (!ok || h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return 0;
	memcpy(&n, h + 8, 4);
	if (!n)
		return 0;
	memcpy(&loc, h + 12 + (unsigned long)(n / 2) * 8, 4);
	*fdes = n;
	return base + hdr + loc;
}

/*
 * The first walk through a function never seen, in a file never seen:
 * one frame of the middle function of `path`'s sorted index (bench_via),
 * mapped as ld.so maps it, after this program, libc and ld.so were walked
 * through the same leaf; against the next walk, the same.  The walk must
 * take that frame: two more frames than the leaf called directly.
 */
static int walk_fn(const char *path)
{
	unsigned int fdes = 0, base_frames;
	unsigned long fn;
	double t0, t1, t2;

	lib_walk = (struct ub_walk){ .rounds = 1, .max = 1024 };
	via_leaf();
	via_leaf();
	base_frames = lib_walk.ours_frames;
	fn = map_fn(path, &fdes);
	if (!fn) {
		fprintf(stderr, "bench: %s: no shared object with an .eh_frame_hdr index\n", path);
		return 1;
	}
	t0 = now();
	bench_via(via_leaf, fn + 1);
	t1 = now();
	bench_via(via_leaf, fn + 1);
	t2 = now();
	printf("BENCH walkfn_first_ns %.0f\n", (t1 - t0) * 1e9);
	printf("BENCH walkfn_second_ns %.0f\n", (t2 - t1) * 1e9);
	printf("BENCH walkfn_fdes %u\n", fdes);
	if (lib_walk.ours_frames != base_frames + 2) {
		fprintf(stderr, "bench: %s: %u frames through the function, %u without it\n",
			path, lib_walk.ours_frames, base_frames);
		return 1;
	}
	return 0;
}
#endif

int main(int argc, char **argv)
{
	const char *t = argc > 1 ? argv[1] : "";
	int depth = argc > 2 ? atoi(argv[2]) : 8;

	if (!strcmp(t, "getpid")) {
		long n = depth, i;
		double t0 = now();

		for (i = 0; i < n; i++)
			syscall(SYS_getpid);
		printf("BENCH getpid_ns %.1f\n", (now() - t0) * 1e9 / n);
		return 0;
	}
	if (!strcmp(t, "anchor") && argc > 4) {
		anchor(depth, argv[3], atol(argv[4]));
		return 0;
	}
	if (!strcmp(t, "workload")) {
		workload(argc > 2 ? argv[2] : "none");
		return 0;
	}
	/* bench time NAME CMD...: CMD's run time as "BENCH NAME_ns". */
	if (!strcmp(t, "time") && argc > 3) {
		double t0 = now();
		pid_t pid = fork();
		int st;

		if (pid < 0)
			die("fork");
		if (pid == 0) {
			execvp(argv[3], argv + 3);
			_exit(127);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			die(argv[3]);
		printf("BENCH %s_ns %.0f\n", argv[2], (now() - t0) * 1e9);
		return 0;
	}
	fd = open("/sys/kernel/debug/unwind_bench/ctl", O_RDWR);
	if (fd < 0)
		die("open ctl");
#ifdef BENCH_DLOPEN
	if (!strcmp(t, "walklib") && argc > 3)
		return walk_lib(depth, argv[3], argc > 4 ? argv[4] : NULL);
	if (!strcmp(t, "walkfn") && argc > 2)
		return walk_fn(argv[2]);
#endif
	if (!strcmp(t, "walkcold")) {
		/*
		 * The first lookup of a file never walked: the same one-walk
		 * ioctl twice from this process (the module warms up with an
		 * untimed walk, so the difference shows in the syscall's time).
		 */
		struct ub_walk w = { .rounds = 1, .max = 1024 };
		double t0, t1, t2;

		t0 = now();
		at_depth(depth, do_walk, &w);
		t1 = now();
		at_depth(depth, do_walk, &w);
		t2 = now();
		printf("BENCH walkcold%d_first_ns %.0f\n", depth, (t1 - t0) * 1e9);
		printf("BENCH walkcold%d_second_ns %.0f\n", depth, (t2 - t1) * 1e9);
		printf("BENCH walkcold%d_frames %u\n", depth, w.ours_frames);
	} else if (!strcmp(t, "walk")) {
		struct ub_walk w = { .rounds = 200, .max = 1024 };

		at_depth(depth, do_walk, &w);
		printf("BENCH walk%d_frames %u %u\n", depth, w.perf_frames, w.ours_frames);
		printf("BENCH walk%d_perf_ns_per_frame %.2f\n", depth,
		       (double)w.perf_ns / w.rounds / w.perf_frames);
		printf("BENCH walk%d_ours_ns_per_frame %.2f\n", depth,
		       (double)w.ours_ns / w.rounds / w.ours_frames);
	} else if (!strcmp(t, "walkprof")) {
		/*
		 * scripts/insn-profile's walk: the walks of one ioctl (the
		 * module's first, untimed walk included) between two reads of
		 * this thread's CPU clock, which the QEMU plugin counts between.
		 * An optional third argument sets the rounds (1: a first walk
		 * of files never walked, and one more).
		 */
		struct ub_walk w = { .rounds = argc > 3 ? atoi(argv[3]) : 200, .max = 1024 };
		struct timespec a, b;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
		at_depth(depth, do_walk, &w);
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
		printf("WALKPROF walks %u frames %u perf_frames %u\n", w.rounds + 1,
		       w.ours_frames, w.perf_frames);
	} else if (!strcmp(t, "irq")) {
		struct ub_irq q = { .period_us = 200, .max = 1024 };

		at_depth(depth, do_irq, &q);
		printf("BENCH irq%d_ticks %llu %llu\n", depth, (unsigned long long)q.ticks,
		       (unsigned long long)q.nmi_ticks);
		if (!q.ticks || !q.nmi_ticks) {
			fprintf(stderr, "bench: no samples\n");
			return 1;
		}
		printf("BENCH irq%d_perf_ns %.1f\n", depth, (double)q.perf_ns / q.ticks);
		printf("BENCH irq%d_request_ns %.1f\n", depth, (double)q.request_ns / q.ticks);
		printf("BENCH nmi%d_perf_ns %.1f\n", depth, (double)q.nmi_perf_ns / q.nmi_ticks);
		printf("BENCH nmi%d_request_ns %.1f\n", depth,
		       (double)q.nmi_request_ns / q.nmi_ticks);
	} else if (!strcmp(t, "cache")) {
		struct ub_cache c = { .callers = atoi(argv[2]), .samples = atoi(argv[3]) };
		unsigned long long w0 = stat_of("walks");

		at_depth(atoi(argv[4]), do_cache, &c);
		printf("BENCH cache_walks %llu\n", stat_of("walks") - w0);
		printf("BENCH cache_deferred_ns %llu\n", (unsigned long long)c.deferred_ns);
		printf("BENCH cache_sync_ns %llu\n", (unsigned long long)c.sync_ns);
	} else {
		fprintf(stderr, "bench: unknown '%s'\n", t);
		return 1;
	}
	return 0;
}
