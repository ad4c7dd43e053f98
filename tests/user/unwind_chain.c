// SPDX-License-Identifier: GPL-2.0
/*
 * Unwinder tests, built twice: 64-bit and -m32 (IA32 emulation).
 *
 *   unwind_chain chain DEPTH MAX MODE [thread]
 *	a chain of DEPTH noinline calls asks unwind_test.ko to unwind it and
 *	compares the frames with the return addresses it recorded itself.
 *   unwind_chain hostile CASE
 *	runs the syscall on a crafted stack and compares the frames with a
 *	user-space model of the walk.
 *   unwind_chain fuzz N SEED
 *	N walks over random crafted stacks, each checked against the model.
 *   unwind_chain errors
 *	the API's argument checks.
 *   unwind_chain ldt | ldt_race SECONDS | segment_bad	(32-bit only)
 *	LDT segment bases; a sibling replacing the LDT; bad selectors.
 *   unwind_chain abi
 *	prints lp64 or ilp32.
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "ut.h"

#define MAX_DEPTH	2048
#define MAX_FRAMES	4096
#define CACHE_ENTRIES	((4096 - 24) / 8)	/* the module cache: 509 */

typedef unsigned long word;	/* one stack slot: 8 or 4 bytes */
#define WS ((word)sizeof(word))

static int ctl_fd;
static uint64_t frames[MAX_FRAMES];

/* ioctl(ctl_fd, UT_IOC_UNWIND, req) with the syscall right here. */
static inline __attribute__((always_inline)) long sys_unwind(struct ut_unwind *req)
{
	long ret;
#ifdef __x86_64__
	asm volatile("syscall"
		     : "=a"(ret)
		     : "a"((long)SYS_ioctl), "D"((long)ctl_fd),
		       "S"((long)UT_IOC_UNWIND), "d"(req)
		     : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80"
		     : "=a"(ret)
		     : "a"((long)SYS_ioctl), "b"(ctl_fd),
		       "c"((long)UT_IOC_UNWIND), "d"(req)
		     : "memory");
#endif
	return ret;
}

/* --- known call chains ------------------------------------------------ */

struct chain {
	int depth;
	struct ut_unwind req;
	word leaf_ip;			/* the syscall's return address */
	word ra[MAX_DEPTH + 2];		/* ra[0]: leaf's, ra[k + 1]: chain(k)'s */
	long ret;
};

extern char ut_leaf_ip[];

static __attribute__((noinline, noclone)) void leaf(struct chain *c)
{
	long ret;
#ifdef __x86_64__
	asm volatile("syscall\n"
		     ".globl ut_leaf_ip\n"
		     "ut_leaf_ip:"
		     : "=a"(ret)
		     : "a"((long)SYS_ioctl), "D"((long)ctl_fd),
		       "S"((long)UT_IOC_UNWIND), "d"(&c->req)
		     : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80\n"
		     ".globl ut_leaf_ip\n"
		     "ut_leaf_ip:"
		     : "=a"(ret)
		     : "a"((long)SYS_ioctl), "b"(ctl_fd),
		       "c"((long)UT_IOC_UNWIND), "d"(&c->req)
		     : "memory");
#endif
	c->ret = ret;
	c->leaf_ip = (word)ut_leaf_ip;
	c->ra[0] = (word)__builtin_return_address(0);
}

static __attribute__((noinline)) void chain(int depth, struct chain *c)
{
	if (depth == 0)
		leaf(c);
	else
		chain(depth - 1, c);
	c->ra[depth + 1] = (word)__builtin_return_address(0);
	asm volatile("" ::: "memory");	/* no tail call */
}

static void *run_chain(void *arg)
{
	struct chain *c = arg;

	chain(c->depth - 1, c);
	return NULL;
}

static int test_chain(int depth, unsigned int max, int mode, int thread)
{
	static struct chain c;
	unsigned int want, i;

	if (depth < 1 || depth > MAX_DEPTH || max > MAX_FRAMES) {
		ut_diag("bad arguments");
		return UT_FAIL;
	}
	c.depth = depth;
	c.req.max = max;
	c.req.mode = mode;
	c.req.entries = (uintptr_t)frames;
	memset(frames, 0, sizeof(frames));
	if (thread) {
		pthread_t t;

		if (pthread_create(&t, NULL, run_chain, &c) || pthread_join(t, NULL)) {
			ut_diag("pthread failed");
			return UT_FAIL;
		}
	} else {
		run_chain(&c);
	}
	ut_check(c.ret == 0, "ioctl: %ld", c.ret);
	ut_check(c.req.ret == 0, "API returned %d", c.req.ret);

	/* leaf's IP, leaf's RA, then one RA per chain() level. */
	want = depth + 2;
	if (mode == UT_MODE_FAULTABLE && want > CACHE_ENTRIES)
		want = CACHE_ENTRIES;
	if (want > max)
		want = max;
	ut_diag("depth %d max %u mode %d thread %d: %u frames, want >= %u",
		depth, max, mode, thread, c.req.nr, want);
	ut_check(c.req.nr >= want, "too few frames");
	ut_check(c.req.nr <= max, "more frames than max");
	if (want > max || c.req.nr < want)
		return UT_FAIL;
	if (want > 0)
		ut_check(frames[0] == c.leaf_ip, "frame 0 %#llx != leaf ip %#lx",
			 (unsigned long long)frames[0], c.leaf_ip);
	for (i = 1; i < want; i++)
		ut_check(frames[i] == c.ra[i - 1], "frame %u %#llx != %#lx", i,
			 (unsigned long long)frames[i], c.ra[i - 1]);
	return ut_result();
}

/* --- crafted stacks ------------------------------------------------- */

/*
 * Layout: [stack: 64 KiB RW][guard: PROT_NONE][hole: unmapped].  The
 * syscall runs with sp at the bottom of the RW part and fp where the
 * test wants it.  Any address outside RW that a test uses is one that
 * cannot be read, so the model below is exact.
 */
#define STACK_SIZE	(64 * 1024)
#define PAGE		4096

static char *stk;
static word sp0;

static word guard_addr(void) { return (word)(stk + STACK_SIZE); }
static word hole_addr(void)  { return (word)(stk + STACK_SIZE + PAGE); }

static void setup_stack(void)
{
	stk = mmap(NULL, STACK_SIZE + 2 * PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stk == MAP_FAILED ||
	    mprotect(stk + STACK_SIZE, PAGE, PROT_NONE) ||
	    munmap(stk + STACK_SIZE + PAGE, PAGE)) {
		ut_diag("mmap: %s", strerror(errno));
		exit(UT_FAIL);
	}
	sp0 = (word)stk + 256;
}

/*
 * The process's other readable mappings, taken once after setup_stack():
 * a crafted slot can hold a value from outside the crafted stack (one
 * pointing into the real stack was seen), which the kernel then reads.
 * [vvar] is left out: its absent pages fault even for the kernel.
 */
#define MAX_MAPS 64
static struct { word start, end; } maps[MAX_MAPS];
static unsigned int nr_maps;

static void load_maps(void)
{
	unsigned long long start, end;
	char line[256], perm[8];
	FILE *f = fopen("/proc/self/maps", "r");

	nr_maps = 0;
	while (f && fgets(line, sizeof(line), f) && nr_maps < MAX_MAPS) {
		if (sscanf(line, "%llx-%llx %7s", &start, &end, perm) != 3 ||
		    perm[0] != 'r' || strstr(line, "[vvar") ||
		    start == (word)stk || end > ~(word)0)
			continue;
		maps[nr_maps].start = (word)start;
		maps[nr_maps].end = (word)end;
		nr_maps++;
	}
	if (f)
		fclose(f);
}

static int readable(word addr, word len)
{
	unsigned int i;

	if (addr + len < addr)
		return 0;
	if (addr >= (word)stk && addr + len <= (word)stk + STACK_SIZE)
		return 1;
	for (i = 0; i < nr_maps; i++)
		if (addr >= maps[i].start && addr + len <= maps[i].end)
			return 1;
	return 0;
}

/* The walk as documented: what the kernel must return. */
static unsigned int model(word ip, word sp, word fp, unsigned int max, uint64_t *out)
{
	unsigned int nr = 0;

	if (!max)
		return 0;
	for (;;) {
		word cfa, *slot;

		out[nr++] = ip;
		if (nr >= max)
			break;
		if (fp < sp)
			break;
		cfa = fp + 2 * WS;
		if (cfa < fp || cfa <= sp)
			break;
		if (fp & (WS - 1))
			break;
		if (!readable(fp, 2 * WS))
			break;
		slot = (word *)fp;
		ip = slot[1];
		fp = slot[0];
		sp = cfa;
	}
	return nr;
}

extern char ut_crafted_ip[];

#ifndef __x86_64__
/*
 * 32-bit: all six free registers carry the syscall and the crafted sp/fp,
 * so this is plain assembly.  cdecl: req, sp, fp, fd, cmd on the stack.
 */
long crafted_call32(struct ut_unwind *req, word sp, word fp, int fd,
		    unsigned long cmd);
word ut_saved_sp;
asm(".text\n"
    ".globl crafted_call32\n"
    "crafted_call32:\n\t"
    "push %ebp\n\t"
    "push %ebx\n\t"
    "push %esi\n\t"
    "push %edi\n\t"
    "mov 20(%esp), %edx\n\t"
    "mov 24(%esp), %esi\n\t"
    "mov 28(%esp), %edi\n\t"
    "mov 32(%esp), %ebx\n\t"
    "mov 36(%esp), %ecx\n\t"
    "mov $54, %eax\n\t"		/* __NR_ioctl (i386) */
    "mov %esp, ut_saved_sp\n\t"
    "mov %esi, %esp\n\t"
    "mov %edi, %ebp\n\t"
    "int $0x80\n"
    ".globl ut_crafted_ip\n"
    "ut_crafted_ip:\n\t"
    "mov ut_saved_sp, %esp\n\t"
    "pop %edi\n\t"
    "pop %esi\n\t"
    "pop %ebx\n\t"
    "pop %ebp\n\t"
    "ret\n");
#endif

/* The unwind syscall with sp and fp switched to the crafted stack. */
static __attribute__((noinline, noclone)) long crafted_call(struct ut_unwind *req,
							   word sp, word fp)
{
	long ret;
#ifdef __x86_64__
	asm volatile("mov %%rsp, %%r12\n\t"
		     "mov %%rbp, %%r13\n\t"
		     "mov %[sp], %%rsp\n\t"
		     "mov %[fp], %%rbp\n\t"
		     "syscall\n"
		     ".globl ut_crafted_ip\n"
		     "ut_crafted_ip:\n\t"
		     "mov %%r13, %%rbp\n\t"
		     "mov %%r12, %%rsp"
		     : "=a"(ret)
		     : "a"((long)SYS_ioctl), "D"((long)ctl_fd),
		       "S"((long)UT_IOC_UNWIND), "d"(req), [sp] "r"(sp), [fp] "r"(fp)
		     : "rcx", "r11", "r12", "r13", "memory");
#else
	ret = crafted_call32(req, sp, fp, ctl_fd, UT_IOC_UNWIND);
#endif
	return ret;
}

static uint64_t expect[MAX_FRAMES];

/* One walk over the crafted stack, checked against the model. */
/* After a mismatch: both traces, the crafted stack's layout, the maps. */
static void crafted_dump(word fp, unsigned int nr, unsigned int want)
{
	char line[256];
	unsigned int i;
	FILE *f;

	for (i = 0; i < nr || i < want; i++)
		ut_diag("  #%u kernel %#llx model %#llx", i,
			i < nr ? (unsigned long long)frames[i] : 0ull,
			i < want ? (unsigned long long)expect[i] : 0ull);
	ut_diag("  stack %p-%#lx sp %#lx, guard %#lx, hole %#lx", (void *)stk,
		(word)stk + STACK_SIZE, sp0, guard_addr(), hole_addr());
	for (i = 0; i < 8 && fp; i++) {
		int ok = readable(fp, 2 * WS);

		ut_diag("  fp %#lx: %s", fp, ok ? "" : "not readable by the model");
		if (!ok)
			break;
		ut_diag("    [fp] %#lx [fp+ws] %#lx", ((word *)fp)[0], ((word *)fp)[1]);
		fp = ((word *)fp)[0];
	}
	f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		ut_diag("  %.*s", (int)strcspn(line, "\n"), line);
	if (f)
		fclose(f);
}

static int crafted_walk(word fp, unsigned int max, int mode, int verbose)
{
	struct ut_unwind req = {
		.max = max, .mode = mode, .entries = (uintptr_t)frames,
	};
	unsigned int want, i;
	long ret;

	want = model((word)ut_crafted_ip, sp0, fp, max, expect);
	ret = crafted_call(&req, sp0, fp);
	if (!ret && !req.ret && req.nr != want) {
		/*
		 * A random link may point into a mapping that appeared or grew
		 * since the model read the maps (the process stack grows down):
		 * read them again before calling it a mismatch.
		 */
		load_maps();
		want = model((word)ut_crafted_ip, sp0, fp, max, expect);
	}
	if (verbose)
		ut_diag("fp %#lx max %u: %u frames, model %u", fp, max, req.nr, want);
	if (ret || req.ret || req.nr != want || req.nr > max) {
		ut_diag("fp %#lx max %u mode %d: ioctl %ld ret %d nr %u, model %u",
			fp, max, mode, ret, req.ret, req.nr, want);
		crafted_dump(fp, req.nr, want);
		return -1;
	}
	for (i = 0; i < want; i++) {
		if (frames[i] != expect[i]) {
			ut_diag("frame %u: %#llx, model %#llx", i,
				(unsigned long long)frames[i],
				(unsigned long long)expect[i]);
			return -1;
		}
	}
	return 0;
}

static word *slot_at(unsigned int off)
{
	return (word *)(stk + off);
}

/* Frame at offset off: [off] = next fp, [off + WS] = return address. */
static word frame(unsigned int off, word next, word ra)
{
	slot_at(off)[0] = next;
	slot_at(off)[1] = ra;
	return (word)stk + off;
}

#ifdef __x86_64__
#define KERNEL_ADDR	0xffffffff81000000ul
#define KERNEL_ADDR2	0xffff888000000000ul
#else
/* Above a 32-bit task's address space: never mapped for it. */
#define KERNEL_ADDR	0xffffe000ul
#define KERNEL_ADDR2	0xfffffff0ul
#endif

static int test_hostile(const char *name)
{
	word a, b, c;
	unsigned int i;
	int n = 1, max = 64, bad = 0;

	memset(stk, 0, STACK_SIZE);
	if (!strcmp(name, "fp_zero")) {
		a = 0;
		n = 1;
	} else if (!strcmp(name, "self_loop")) {
		a = frame(1024, (word)stk + 1024, 0x1111);
		n = 2;
	} else if (!strcmp(name, "cycle2")) {
		b = (word)stk + 2048;
		a = frame(1024, b, 0x1111);
		frame(2048, a, 0x2222);
		n = 3;
	} else if (!strcmp(name, "misaligned_first")) {
		frame(1024, 0, 0x1111);
		a = (word)stk + 1024 + WS / 2;
		n = 1;
	} else if (!strcmp(name, "misaligned_next")) {
		a = frame(1024, (word)stk + 2048 + 1, 0x1111);
		frame(2048, 0, 0x2222);
		n = 2;
	} else if (!strcmp(name, "kernel_first")) {
		a = KERNEL_ADDR;
		n = 1;
	} else if (!strcmp(name, "kernel_next")) {
		a = frame(1024, KERNEL_ADDR2, 0x1111);
		n = 2;
	} else if (!strcmp(name, "unmapped")) {
		a = frame(1024, hole_addr(), 0x1111);
		n = 2;
	} else if (!strcmp(name, "prot_none")) {
		a = frame(1024, guard_addr(), 0x1111);
		n = 2;
	} else if (!strcmp(name, "straddle_guard")) {
		/* fp readable, return address in the PROT_NONE page */
		a = frame(1024, guard_addr() - WS, 0x1111);
		slot_at(STACK_SIZE - WS)[0] = 0;
		n = 2;
	} else if (!strcmp(name, "below_sp")) {
		a = frame(1024, sp0 - 2 * WS, 0x1111);
		n = 2;
	} else if (!strcmp(name, "deep")) {
		/* A valid chain longer than max: stops at max, exactly. */
		a = (word)stk + 512;
		for (i = 0; i < 1000; i++)
			frame(512 + i * 2 * WS, (word)stk + 512 + (i + 1) * 2 * WS,
			      0x100000 + i);
		max = 300;
		n = 300;
	} else if (!strcmp(name, "garbage")) {
		for (i = 0; i < STACK_SIZE / WS; i++)
			slot_at(i * WS)[0] = (word)ut_rand();
		a = (word)ut_rand();
		n = -1;
	} else if (!strcmp(name, "garbage_pointers")) {
		/* every slot points somewhere into the stack, any alignment */
		for (i = 0; i < STACK_SIZE / WS; i++)
			slot_at(i * WS)[0] = (word)stk + ut_rand() % STACK_SIZE;
		a = (word)stk + 1024;
		n = -1;
	} else {
		ut_diag("unknown case %s", name);
		return UT_FAIL;
	}
	(void)c;
	for (i = 0; i < 3; i++) {
		if (crafted_walk(a, max, i == 2 ? UT_MODE_ITERATE : UT_MODE_UNWIND_USER, 1))
			bad = 1;
	}
	if (n >= 0)
		ut_check(model((word)ut_crafted_ip, sp0, a, max, expect) == (unsigned int)n,
			 "model disagrees with the case's expectation %d", n);
	return bad ? UT_FAIL : ut_result();
}

/* Random chains mixing good links with every kind of bad one. */
static word random_link(word here)
{
	switch (ut_rand() % 12) {
	case 0:	return 0;
	case 1:	return here;					/* self loop */
	case 2:	return (word)stk + (ut_rand() % STACK_SIZE);	/* anywhere, any alignment */
	case 3:	return KERNEL_ADDR + (ut_rand() % 4096) * WS;
	case 4:	return guard_addr() + (ut_rand() % (PAGE / WS)) * WS;
	case 5:	return hole_addr();
	case 6:	return guard_addr() - WS;			/* straddles the guard */
	case 7:	return here - (ut_rand() % 64) * WS;		/* backwards */
	default: /* forwards, aligned: a good link */
		return here + (1 + ut_rand() % 32) * 2 * WS;
	}
}

static int test_fuzz(long n, unsigned long long seed)
{
	long i;
	unsigned int k;

	ut_rng_state = seed ? seed : 1;
	load_maps();
	ut_diag("fuzz: %ld walks, seed %llu", n, seed);
	for (i = 0; i < n; i++) {
		word fp = (word)stk + 512 + (ut_rand() % 64) * WS;
		unsigned int max = 1 + ut_rand() % 96;
		unsigned int words = STACK_SIZE / WS;

		/* Fresh random contents in the low part, then a random chain. */
		for (k = 0; k < 256; k++)
			slot_at((ut_rand() % words) * WS)[0] = random_link((word)stk);
		for (k = 0; k < 64; k++) {
			word here = fp;

			if (!readable(here, 2 * WS))
				break;
			((word *)here)[1] = 0x400000 + (ut_rand() & 0xfffff);
			((word *)here)[0] = random_link(here);
			fp = ((word *)here)[0];
			if (fp <= here)
				break;
		}
		fp = (word)stk + 512 + (i % 64) * WS;
		if (i % 16 == 0)
			fp = random_link(fp);
		if (crafted_walk(fp, max, i % 3 == 2 ? UT_MODE_ITERATE : UT_MODE_UNWIND_USER, 0)) {
			ut_diag("fuzz walk %ld failed (seed %llu)", i, seed);
			return UT_FAIL;
		}
	}
	ut_diag("fuzz: %ld walks matched the model", n);
	return UT_PASS;
}

/* --- segmented (LDT) stacks, 32-bit only ------------------------------ */

#ifndef __x86_64__
#include <asm/ldt.h>
#include <signal.h>
#include <stddef.h>
#include <time.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>

/*
 * Code and stack in LDT segments with different, non-zero bases: the
 * kernel must add CS base to every IP and SS base to every frame
 * pointer, and return linear addresses.
 */
#define LDT_CODE	0x100	/* offset of the code blob in CS */
#define LDT_SP		0x1000	/* stack pointer offset in SS */
#define LDT_FP		0x2000	/* first frame offset in SS */
#define LDT_SS_OFF	0x8000	/* SS base = CS base + this */

word ut_ldt_saved_sp, ut_ldt_saved_ss;
long ut_ldt_ret;
long ldt_call(struct ut_unwind *req, int fd, unsigned long cmd);
extern char ut_ldt_back[];
asm(".text\n"
    ".globl ldt_call\n"
    "ldt_call:\n\t"
    "push %ebp\n\t"
    "push %ebx\n\t"
    "push %esi\n\t"
    "push %edi\n\t"
    "mov 20(%esp), %edx\n\t"		/* req (a flat pointer) */
    "mov 24(%esp), %ebx\n\t"		/* fd */
    "mov 28(%esp), %ecx\n\t"		/* cmd */
    "mov %esp, ut_ldt_saved_sp\n\t"
    "xor %eax, %eax\n\t"
    "mov %ss, %ax\n\t"
    "mov %eax, ut_ldt_saved_ss\n\t"
    "mov $0xf, %eax\n\t"		/* LDT entry 1, RPL 3: the stack */
    "mov %ax, %ss\n\t"
    "mov $0x1000, %esp\n\t"
    "mov $0x2000, %ebp\n\t"
    "mov $54, %eax\n\t"		/* __NR_ioctl */
    /*
     * Far jumps both ways: QEMU's TCG performs a far call's stack pushes as
     * supervisor accesses, which SMAP refuses.
     */
    "ljmp $0x7, $0x100\n"		/* LDT entry 0: int $0x80; ljmp back */
    ".globl ut_ldt_back\n"
    "ut_ldt_back:\n\t"
    "mov %eax, ut_ldt_ret\n\t"
    "mov ut_ldt_saved_ss, %eax\n\t"
    "mov %ax, %ss\n\t"
    "mov ut_ldt_saved_sp, %esp\n\t"
    "pop %edi\n\t"
    "pop %esi\n\t"
    "pop %ebx\n\t"
    "pop %ebp\n\t"
    "mov ut_ldt_ret, %eax\n\t"
    "ret\n");

static int set_ldt_desc(int entry, unsigned long base, unsigned int limit,
			int code, int present)
{
	struct user_desc d = {
		.entry_number = entry,
		.base_addr = base,
		.limit = limit,
		.seg_32bit = 1,
		.contents = code ? MODIFY_LDT_CONTENTS_CODE : MODIFY_LDT_CONTENTS_DATA,
		.seg_not_present = !present,
		.useable = 1,
	};

	return syscall(SYS_modify_ldt, 1, &d, sizeof(d));
}

static int set_ldt(int entry, unsigned long base, unsigned int limit, int code)
{
	return set_ldt_desc(entry, base, limit, code, 1);
}

/* int $0x80; ljmp $__USER32_CS, $ut_ldt_back */
static unsigned char ldt_blob[] = { 0xcd, 0x80, 0xea, 0, 0, 0, 0, 0x23, 0 };

/*
 * Maps @len bytes; LDT entry 0 is code at their start, entry 1 the stack at
 * LDT_SS_OFF, holding two frames.  NULL (with a diagnostic) on failure.
 */
static unsigned char *ldt_setup(size_t len)
{
	unsigned char *r;
	word cs_base, *ss;

	r = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r == MAP_FAILED)
		return NULL;
	cs_base = (word)r;
	if (set_ldt(0, cs_base, 0xffff, 1) || set_ldt(1, cs_base + LDT_SS_OFF, 0x7fff, 0)) {
		ut_diag("modify_ldt: %s", strerror(errno));
		return NULL;
	}
	memset(r, 0, len);
	memcpy(ldt_blob + 3, &(word){ (word)ut_ldt_back }, 4);
	memcpy(r + LDT_CODE, ldt_blob, sizeof(ldt_blob));
	/* Frames in SS offsets, return addresses in CS offsets. */
	ss = (word *)(r + LDT_SS_OFF);
	ss[LDT_FP / 4] = LDT_FP + 0x100;
	ss[LDT_FP / 4 + 1] = 0x1234;
	ss[(LDT_FP + 0x100) / 4] = 0;
	ss[(LDT_FP + 0x100) / 4 + 1] = 0x2345;
	return r;
}

static int test_ldt(void)
{
	struct ut_unwind req = { .max = 16, .mode = UT_MODE_UNWIND_USER,
				 .entries = (uintptr_t)frames };
	unsigned char *r = ldt_setup(0x10000);
	word cs_base, ss_base;
	long ret;

	if (!r)
		return UT_FAIL;
	cs_base = (word)r;
	ss_base = cs_base + LDT_SS_OFF;
	ret = ldt_call(&req, ctl_fd, UT_IOC_UNWIND);
	ut_diag("CS base %#lx SS base %#lx: ioctl %ld, %u frames: %#llx %#llx %#llx",
		cs_base, ss_base, ret, req.nr, (unsigned long long)frames[0],
		(unsigned long long)frames[1], (unsigned long long)frames[2]);
	ut_check(ret == 0 && req.ret == 0, "ioctl");
	ut_check(req.nr == 3, "want the IP and two return addresses");
	ut_check(frames[0] == cs_base + LDT_CODE + 2, "IP must be CS base + offset");
	ut_check(frames[1] == cs_base + 0x1234, "frame 1 must be CS base + RA");
	ut_check(frames[2] == cs_base + 0x2345, "frame 2 must be CS base + RA");
	return ut_result();
}

static void deferred_op(struct ut_deferred *d)
{
	if (ioctl(ctl_fd, UT_IOC_DEFERRED, d)) {
		ut_diag("deferred op %u: %s", d->op, strerror(errno));
		exit(UT_FAIL);
	}
}

static struct ut_result deferred_result(void)
{
	struct ut_result r = { 0 };
	struct ut_deferred d = { .op = UT_OP_RESULT, .arg = 0, .ptr = (uintptr_t)&r };

	deferred_op(&d);
	return r;
}

/*
 * sec_ldt_race: deferred requests from LDT code while a sibling thread
 * replaces the LDT as fast as it can, moving the code segment between two
 * bases that both hold the code.  Each modify_ldt() frees the table it
 * replaces once every CPU took its flush IPI: a walk reading the table
 * with interrupts on reads freed memory (KASAN) and can deliver a garbage
 * base.  Every delivered trace must carry one of the two installed bases.
 */
#define LDT_ALT		0x4000	/* the code segment's other base: + this */

static volatile int ldt_stop;
static unsigned long ldt_swaps, ldt_swap_errors;
static word ldt_cs_base;

static void *ldt_sibling(void *arg)
{
	int alt = 0;

	(void)arg;
	while (!ldt_stop) {
		alt = !alt;
		if (set_ldt(0, ldt_cs_base + (alt ? LDT_ALT : 0), 0xffff, 1))
			ldt_swap_errors++;
		ldt_swaps++;
	}
	return NULL;
}

static int test_ldt_race(int seconds)
{
	struct ut_deferred reset = { .op = UT_OP_RESET };
	unsigned long calls = 0, bad = 0, failed = 0, seen[2] = { 0, 0 };
	unsigned char *r = ldt_setup(0x20000);
	pthread_t sib;
	time_t end;

	if (!r)
		return UT_FAIL;
	ldt_cs_base = (word)r;
	memcpy(r + LDT_ALT + LDT_CODE, ldt_blob, sizeof(ldt_blob));

	deferred_op(&reset);
	if (pthread_create(&sib, NULL, ldt_sibling, NULL))
		return UT_FAIL;
	end = time(NULL) + seconds;
	while (time(NULL) < end) {
		struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 1 };
		struct ut_result res;
		word base;
		int i;

		if (ldt_call((struct ut_unwind *)&d, ctl_fd, UT_IOC_DEFERRED) || d.ret) {
			failed++;
			continue;
		}
		calls++;
		res = deferred_result();
		base = res.entries[0] - LDT_CODE - 2;
		i = base == ldt_cs_base + LDT_ALT;
		if (res.callbacks != calls || res.nr != 3 || res.cookie != d.cookie ||
		    (base != ldt_cs_base && !i) ||
		    res.entries[1] != base + 0x1234 || res.entries[2] != base + 0x2345) {
			if (bad++ < 5)
				ut_diag("call %lu: callbacks %llu nr %u frames %#llx %#llx %#llx",
					calls, (unsigned long long)res.callbacks, res.nr,
					(unsigned long long)res.entries[0],
					(unsigned long long)res.entries[1],
					(unsigned long long)res.entries[2]);
			continue;
		}
		seen[i]++;
	}
	ldt_stop = 1;
	pthread_join(sib, NULL);
	ut_diag("%lu requests in %d s, %lu LDT replacements; traces with base A %lu, B %lu; %lu bad, %lu failed",
		calls, seconds, ldt_swaps, seen[0], seen[1], bad, failed);
	ut_check(!bad && !failed && !ldt_swap_errors, "bad traces or failed calls");
	ut_check(calls >= 100 && ldt_swaps >= 100, "too few rounds to race");
	return ut_result();
}

/*
 * sec_segment_bad_descriptor: ptrace can put any selector with RPL 3 into
 * a tracee's saved CS or SS, the TSS's or a not-present LDT entry's.  Such
 * a segment's base is not a user address: walks must use base 0.  The
 * tracer loads the selector at the ioctl's syscall-entry stop (task works
 * run before every ptrace stop, so later would be too late); the request's
 * direct and deferred walks then both see it, and the return to user
 * space faults.
 */
#define SEL_GDT_TSS	((8 << 3) | 3)		/* GDT_ENTRY_TSS, RPL 3 */
#define SEL_LDT_ABSENT	((3 << 3) | 4 | 3)	/* LDT entry 3, RPL 3 */

static int bad_selector(const char *what, size_t reg, unsigned short sel)
{
	struct ut_deferred reset = { .op = UT_OP_RESET };
	struct ut_result res;
	int status;
	long eip;
	pid_t pid;

	deferred_op(&reset);
	pid = fork();
	if (pid < 0)
		return UT_FAIL;
	if (!pid) {
		struct ut_deferred d = { .op = UT_OP_REQUEST, .works = 1 };

		ptrace(PTRACE_TRACEME, 0, 0, 0);
		syscall(SYS_kill, getpid(), SIGSTOP);
		ioctl(ctl_fd, UT_IOC_DEFERRED, &d);
		_exit(0);	/* not reached: the return to user space faults */
	}
	/* Stop at the ioctl's syscall-entry stop. */
	for (;;) {
		if (waitpid(pid, &status, 0) != pid || !WIFSTOPPED(status)) {
			ut_diag("%s: tracee gone before the ioctl: %#x", what, status);
			return UT_FAIL;
		}
		if (WSTOPSIG(status) == SIGTRAP &&
		    ptrace(PTRACE_PEEKUSER, pid,
			   offsetof(struct user_regs_struct, orig_eax), 0) == SYS_ioctl)
			break;
		ptrace(PTRACE_SYSCALL, pid, 0, 0);
	}
	eip = ptrace(PTRACE_PEEKUSER, pid, offsetof(struct user_regs_struct, eip), 0);
	ut_check(!ptrace(PTRACE_POKEUSER, pid, reg, sel), "%s: poke %#x: %s",
		 what, sel, strerror(errno));
	ptrace(PTRACE_CONT, pid, 0, 0);
	waitpid(pid, &status, 0);
	ut_diag("%s: tracee stopped by signal %d", what,
		WIFSTOPPED(status) ? WSTOPSIG(status) : -1);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) == pid && !WIFEXITED(status) && !WIFSIGNALED(status))
		ptrace(PTRACE_CONT, pid, 0, 0);
	res = deferred_result();
	ut_diag("%s: callbacks %llu pid %d/%d nr %u frames %#llx %#llx eip %#lx matches %u",
		what, (unsigned long long)res.callbacks, res.pid, pid, res.nr,
		(unsigned long long)res.entries[0], (unsigned long long)res.entries[1],
		eip, res.matches_direct);
	ut_check(res.callbacks == 1 && res.pid == pid, "%s: one callback for the tracee", what);
	ut_check(res.entries[0] == (unsigned long)eip, "%s: frame 0 must be eip (base 0)", what);
	/* The vDSO's frame, then the chain through libc (3 frames here). */
	ut_check(res.nr >= 3, "%s: the stack must be walked (base 0)", what);
	ut_check(res.matches_direct, "%s: trace differs from the direct unwind", what);
	return ut_result();
}

static int test_segment_bad(void)
{
	if (set_ldt_desc(3, 0x10000000, 0xfff, 0, 0)) {
		ut_diag("modify_ldt: %s", strerror(errno));
		return UT_FAIL;
	}
	bad_selector("CS = TSS", offsetof(struct user_regs_struct, xcs), SEL_GDT_TSS);
	bad_selector("SS = TSS", offsetof(struct user_regs_struct, xss), SEL_GDT_TSS);
	bad_selector("CS = absent LDT entry", offsetof(struct user_regs_struct, xcs),
		     SEL_LDT_ABSENT);
	return ut_result();
}
#endif

/* --- argument checks ------------------------------------------------ */

/*
 * unwind_user() where the caller may not sleep (@mode: in an RCU read
 * side, or with our mmap lock held): -EINVAL and no frame, since the
 * synchronous API may fault.
 */
static int test_refused(int mode)
{
	struct ut_unwind req = { .max = 16, .mode = mode, .entries = (uintptr_t)frames };
	long ret = ioctl(ctl_fd, UT_IOC_UNWIND, &req);

	ut_diag("mode %d: ioctl %ld, API %d, %u frames", mode, ret, req.ret, req.nr);
	ut_check(ret == 0, "ioctl: %s", strerror(errno));
	ut_check(req.ret == -EINVAL, "want -EINVAL");
	ut_check(req.nr == 0, "want no frame");
	return ut_result();
}

static int test_errors(void)
{
	struct ut_unwind req = { .entries = (uintptr_t)frames };

	/* unwind_user(NULL, 8) */
	req.mode = UT_MODE_UNWIND_USER;
	req.max = 8;
	req.null_trace = 1;
	ut_check(sys_unwind(&req) == 0 && req.ret == -EINVAL, "NULL trace: %d", req.ret);
	/* unwind_user(trace with NULL entries, 8) */
	req.null_trace = 2;
	ut_check(sys_unwind(&req) == 0 && req.ret == -EINVAL, "NULL entries: %d", req.ret);
	/* unwind_user(trace, 0) */
	req.null_trace = 0;
	req.max = 0;
	ut_check(sys_unwind(&req) == 0 && req.ret == -EINVAL && req.nr == 0,
		 "max 0: %d nr %u", req.ret, req.nr);
	/* unwind_user_start(NULL) / unwind_user_next(NULL) */
	req.mode = UT_MODE_ITERATE;
	req.null_trace = 1;
	ut_check(sys_unwind(&req) == 0 && req.ret == -EINVAL, "NULL state: %d", req.ret);
	/* unwind_user_next() on a state unwind_user_start() did not set up */
	req.null_trace = 2;
	ut_check(sys_unwind(&req) == 0 && req.ret == -EINVAL, "state not started: %d", req.ret);
	req.null_trace = 1;
	/* unwind_user_faultable(NULL) */
	req.mode = UT_MODE_FAULTABLE;
	ut_check(sys_unwind(&req) == 0 && req.ret == -EINVAL, "NULL faultable: %d", req.ret);
	/* An unknown mode is refused by the test driver, not an API. */
	req.mode = 99;
	req.null_trace = 0;
	req.max = 4;
	ut_check(sys_unwind(&req) == 0 && req.ret == -EOPNOTSUPP, "mode 99: %d", req.ret);
	return ut_result();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s chain|hostile|fuzz|errors ...\n", argv[0]);
		return UT_FAIL;
	}
	if (!strcmp(argv[1], "abi")) {
		puts(sizeof(long) == 8 ? "lp64" : "ilp32");
		return UT_PASS;
	}
	ctl_fd = ut_open();
	setup_stack();
	if (!strcmp(argv[1], "chain") && argc >= 5)
		return test_chain(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
				  argc > 5 && !strcmp(argv[5], "thread"));
	if (!strcmp(argv[1], "hostile") && argc == 3)
		return test_hostile(argv[2]);
	if (!strcmp(argv[1], "fuzz") && argc == 4)
		return test_fuzz(atol(argv[2]), strtoull(argv[3], NULL, 0));
	if (!strcmp(argv[1], "errors"))
		return test_errors();
	if (!strcmp(argv[1], "refused") && argc == 3)
		return test_refused(atoi(argv[2]));
#ifndef __x86_64__
	if (!strcmp(argv[1], "ldt"))
		return test_ldt();
	if (!strcmp(argv[1], "ldt_race") && argc == 3)
		return test_ldt_race(atoi(argv[2]));
	if (!strcmp(argv[1], "segment_bad"))
		return test_segment_bad();
#endif
	fprintf(stderr, "bad arguments\n");
	return UT_FAIL;
}
