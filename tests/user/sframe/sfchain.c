// SPDX-License-Identifier: GPL-2.0
/*
 * The sframe_* tests' program, built with -O2 -fomit-frame-pointer
 * -Wa,--gsframe by Debian trixie's gcc (SFrame v2) and forky's (v3),
 * static, static-pie and dynamic (SF_DYN: with libsflink.so, and dlopen).
 *
 *   sfchain chain DEPTH MODE [loose|control]
 *	a chain of DEPTH levels in this program; the trace unwind_test.ko
 *	returns (UT_IOC_UNWIND, ut_mode MODE) must equal the return
 *	addresses recorded at every depth.  loose: only check that the
 *	walk works and starts at the leaf (hostile copies of the program);
 *	control: the trace must NOT be exact (SFrame turned off).
 *   sfchain repeat DEPTH MODE N [remap]
 *	N exact chains in one process (the walks' mappings memo); remap:
 *	map and unmap a page between them (every walk sees changed mappings)
 *   sfchain mixed DEPTH MODE	levels alternate SFrame and frame-pointer code
 *   sfchain lib DEPTH MODE	the chain is in libsflink.so (SF_DYN)
 *   sfchain dlopen DEPTH MODE LIB [LIB2]
 *	the chain is in LIB, dlopen'd; with LIB2: dlclose LIB, dlopen LIB2
 *	(other code, usually at the same address) and check again
 *   sfchain deferred DEPTH OP
 *	the leaf asks for a deferred unwind (UT_IOC_DEFERRED, ut_op OP:
 *	UT_OP_REQUEST or UT_OP_REQUEST_NMI, from a real NMI); the trace the
 *	callback got before the return to user space must be exact.
 *   sfchain spin DEPTH LOOPS
 *	the leaf loops LOOPS times, no syscall: a CPU-bound workload with a
 *	known stack (leaf, DEPTH x chain, run, main) for perf record.
 *   sfchain edges MODE
 *	requests from the entry, the body and the epilogue of an assembly
 *	function without frame pointer: each trace must be exact.
 */
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#ifdef SF_DYN
#include <dlfcn.h>
#endif

#include "sfchain.h"

static uint64_t frames[4096];
static uint64_t *got = frames;	/* the trace to check */

extern char sf_leaf_ip[];

static volatile unsigned long spin_sink;

static __attribute__((noinline, noclone)) void leaf(struct sf_chain *c)
{
	long ret, i;

	if (c->spin > 0) {
		for (i = 0; i < c->spin; i++)
			spin_sink += i;
		c->ra[0] = (unsigned long)__builtin_return_address(0);
		return;
	}
	asm volatile("syscall\n"
		     ".globl sf_leaf_ip\n"
		     "sf_leaf_ip:"
		     : "=a"(ret)
		     : "a"(16L /* SYS_ioctl */), "D"((long)c->fd),
		       "S"((long)c->cmd), "d"(c->arg)
		     : "rcx", "r11", "memory");
	c->ret = ret;
	c->leaf_ip = (unsigned long)sf_leaf_ip;
	c->ra[0] = (unsigned long)__builtin_return_address(0);
}

static __attribute__((noinline, noclone)) void chain(int depth, struct sf_chain *c)
{
	if (depth == 0)
		leaf(c);
	else
		chain(depth - 1, c);
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");	/* no tail call */
}

__attribute__((noinline)) void sf_mixed(int depth, struct sf_chain *c)
{
	if (depth == 0)
		leaf(c);
	else
		sffp_level(depth - 1, c);
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

enum { RUN_CHAIN, RUN_MIXED, RUN_LIB };

static __attribute__((noinline, noclone)) void run(struct sf_chain *c, int kind,
						    int depth, void *lib_chain)
{
	switch (kind) {
	case RUN_CHAIN:
		chain(depth - 1, c);
		break;
	case RUN_MIXED:
		if ((depth - 1) % 2)
			sffp_level(depth - 1, c);
		else
			sf_mixed(depth - 1, c);
		break;
	case RUN_LIB:
		((void (*)(int, struct sf_chain *, sf_leaf_fn))lib_chain)(depth - 1, c, leaf);
		break;
	}
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

/* Frames 0..depth + 2: the leaf's IP, its RA, one RA per level, run()'s. */
static int check(struct sf_chain *c, int depth, int mode, const char *how)
{
	unsigned int want = depth + 3, i, bad = want;

	ut_check(c->ret == 0, "ioctl: %ld", c->ret);
	ut_check(c->req.ret == 0, "API returned %d", c->req.ret);
	for (i = 0; i < want && i < c->req.nr; i++) {
		unsigned long exp = i == 0 ? c->leaf_ip : c->ra[i - 1];

		if (got[i] != exp) {
			bad = i;
			break;
		}
	}
	if (c->req.nr < want && bad == want)
		bad = c->req.nr;
	ut_diag("depth %d mode %d: %u frames, first mismatch at %u of %u",
		depth, mode, c->req.nr, bad, want);
	if (!strcmp(how, "control")) {
		ut_check(bad < want, "exact without SFrame?");
		return ut_result();
	}
	if (!strcmp(how, "loose")) {
		ut_check(c->req.nr >= 1 && got[0] == c->leaf_ip, "frame 0 is not the leaf");
		return ut_result();
	}
	if (bad < want) {
		for (i = bad > 2 ? bad - 2 : 0; i < bad + 3 && i < want; i++)
			ut_diag("frame %u: got %#llx want %#lx", i,
				(unsigned long long)got[i],
				i == 0 ? c->leaf_ip : c->ra[i - 1]);
		ut_failed = 1;
	}
	return ut_result();
}

static int run_walk(int kind, int depth, int mode, void *lib_chain, const char *how)
{
	static struct sf_chain c;

	memset(&c, 0, sizeof(c));
	memset(frames, 0, sizeof(frames));
	c.fd = ut_open();
	c.req.max = sizeof(frames) / sizeof(frames[0]);
	c.req.mode = mode;
	c.req.entries = (uintptr_t)frames;
	c.cmd = UT_IOC_UNWIND;
	c.arg = &c.req;
	run(&c, kind, depth, lib_chain);
	close(c.fd);
	return check(&c, depth, mode, how);
}

/*
 * Twice: the second walk of the same chain in the same task finds its
 * rows in the task's memo, and steps those frames in C
 * (unwind_rs_memo_run()), not from the table as the first did.
 */
static int run_one(int kind, int depth, int mode, void *lib_chain, const char *how)
{
	int r;

	if (depth < 1 || depth > SF_MAX_DEPTH) {
		ut_diag("bad depth");
		return UT_FAIL;
	}
	r = run_walk(kind, depth, mode, lib_chain, how);

	if (r != UT_PASS)
		return r;
	ut_diag("again, from the memo:");
	return run_walk(kind, depth, mode, lib_chain, how);
}

/* The callback's trace of a deferred request made by the leaf. */
static int run_deferred(int depth, int op)
{
	static struct sf_chain c;
	static struct ut_deferred d;
	static struct ut_result res;

	if (depth < 1 || depth + 3 > UT_TRACE_MAX) {
		ut_diag("bad depth");
		return UT_FAIL;
	}
	memset(&c, 0, sizeof(c));
	c.fd = ut_open();
	memset(&d, 0, sizeof(d));
	d.op = UT_OP_RESET;
	ut_check(!ioctl(c.fd, UT_IOC_DEFERRED, &d), "reset");
	memset(&d, 0, sizeof(d));
	d.op = op;
	d.works = 1;
	d.count = 1;
	c.cmd = UT_IOC_DEFERRED;
	c.arg = &d;
	run(&c, RUN_CHAIN, depth, NULL);
	ut_check(d.ret == 0, "request returned %d", d.ret);
	memset(&d, 0, sizeof(d));
	d.op = UT_OP_RESULT;
	d.arg = 0;
	d.ptr = (uintptr_t)&res;
	ut_check(!ioctl(c.fd, UT_IOC_DEFERRED, &d), "result");
	close(c.fd);
	ut_check(res.callbacks == 1, "%llu callbacks", (unsigned long long)res.callbacks);
	ut_check(res.matches_direct, "differs from unwind_user() in the same entry");
	ut_diag("op %d: cookie %#llx", op, (unsigned long long)res.cookie);
	c.req.nr = res.nr;
	got = (uint64_t *)res.entries;
	return check(&c, depth, op, "exact");
}

/*
 * sf_edges(reqs, fd, ra): three UT_IOC_UNWIND requests (reqs[0..2], 32
 * bytes each) from the entry (CFA = rsp + 8), the body (rsp + 48) and
 * after the epilogue's stack adjustment (rsp + 8); ra[0] gets its own
 * return address.  Frame pointers cannot walk any of them (RBP is the
 * caller's); the topmost frame's exact-IP row can.  syscall keeps
 * r8-r10.
 */
#define SF_IOC_UNWIND 0xc0207501u
_Static_assert(UT_IOC_UNWIND == SF_IOC_UNWIND, "asm below");
_Static_assert(sizeof(struct ut_unwind) == 32, "asm below");
void sf_edges(struct ut_unwind *reqs, int fd, unsigned long *ra);
extern char sf_edge_ip0[], sf_edge_ip1[], sf_edge_ip2[];
asm(".text\n"
    ".globl sf_edges\n"
    ".type sf_edges, @function\n"
    "sf_edges:\n"
    ".cfi_startproc\n"
    "	mov %rdi, %r8\n"
    "	mov %esi, %r9d\n"
    "	mov %rdx, %r10\n"
    "	mov (%rsp), %rax\n"
    "	mov %rax, (%r10)\n"
    "	mov %r9d, %edi\n"
    "	mov $0xc0207501, %esi\n"
    "	mov %r8, %rdx\n"
    "	mov $16, %eax\n"
    "	syscall\n"
    ".globl sf_edge_ip0\n"
    "sf_edge_ip0:\n"
    "	sub $40, %rsp\n"
    ".cfi_adjust_cfa_offset 40\n"
    "	mov %r9d, %edi\n"
    "	mov $0xc0207501, %esi\n"
    "	lea 32(%r8), %rdx\n"
    "	mov $16, %eax\n"
    "	syscall\n"
    ".globl sf_edge_ip1\n"
    "sf_edge_ip1:\n"
    "	add $40, %rsp\n"
    ".cfi_adjust_cfa_offset -40\n"
    "	mov %r9d, %edi\n"
    "	mov $0xc0207501, %esi\n"
    "	lea 64(%r8), %rdx\n"
    "	mov $16, %eax\n"
    "	syscall\n"
    ".globl sf_edge_ip2\n"
    "sf_edge_ip2:\n"
    "	ret\n"
    ".cfi_endproc\n"
    ".size sf_edges, .-sf_edges\n");

static unsigned long edge_ra[2];

static __attribute__((noinline, noclone)) void edges_caller(struct ut_unwind *reqs, int fd)
{
	sf_edges(reqs, fd, edge_ra);
	edge_ra[1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

static int test_edges(int mode)
{
	static uint64_t f[3][64];
	struct ut_unwind reqs[3];
	char *ips[3] = { sf_edge_ip0, sf_edge_ip1, sf_edge_ip2 };
	int fd = ut_open(), i;

	memset(reqs, 0, sizeof(reqs));
	for (i = 0; i < 3; i++) {
		reqs[i].max = 64;
		reqs[i].mode = mode;
		reqs[i].entries = (uintptr_t)f[i];
	}
	edges_caller(reqs, fd);
	for (i = 0; i < 3; i++) {
		ut_diag("request %d: ret %d, %u frames: %#llx %#llx %#llx", i, reqs[i].ret,
			reqs[i].nr, (unsigned long long)f[i][0], (unsigned long long)f[i][1],
			(unsigned long long)f[i][2]);
		ut_check(reqs[i].ret == 0 && reqs[i].nr >= 3, "request %d failed", i);
		ut_check(f[i][0] == (unsigned long)ips[i], "request %d: IP", i);
		ut_check(f[i][1] == edge_ra[0], "request %d: sf_edges' return address", i);
		ut_check(f[i][2] == edge_ra[1], "request %d: its caller's", i);
	}
	close(fd);
	return ut_result();
}

int main(int argc, char **argv)
{
	const char *how = argc > 4 ? argv[4] : "exact";

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "edges"))
		return test_edges(atoi(argv[2]));
	if (argc < 4) {
		ut_diag("usage: sfchain chain|hold|mixed|lib|dlopen DEPTH MODE [...] | edges MODE");
		return UT_FAIL;
	}
	if (!strcmp(argv[1], "chain"))
		return run_one(RUN_CHAIN, atoi(argv[2]), atoi(argv[3]), NULL, how);
	if (!strcmp(argv[1], "spin")) {
		static struct sf_chain c;

		c.spin = atol(argv[3]);
		run(&c, RUN_CHAIN, atoi(argv[2]), NULL);
		return UT_PASS;
	}
	if (!strcmp(argv[1], "deferred"))
		return run_deferred(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(argv[1], "repeat") && argc >= 5) {
		int remap = argc > 5 && !strcmp(argv[5], "remap");
		long n = atol(argv[4]), i;

		for (i = 0; i < n; i++) {
			if (remap) {
				void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

				if (p == MAP_FAILED || munmap(p, 4096)) {
					ut_diag("mmap");
					return UT_FAIL;
				}
			}
			if (run_one(RUN_CHAIN, atoi(argv[2]), atoi(argv[3]), NULL, "exact"))
				return UT_FAIL;
		}
		return UT_PASS;
	}
	if (!strcmp(argv[1], "hold")) {
		/* Walked, then asleep until stdin's EOF, then walked again. */
		char buf[16];

		if (run_one(RUN_CHAIN, atoi(argv[2]), atoi(argv[3]), NULL, how))
			return UT_FAIL;
		printf("held\n");
		while (read(0, buf, sizeof(buf)) > 0)
			;
		return run_one(RUN_CHAIN, atoi(argv[2]), atoi(argv[3]), NULL, how);
	}
	if (!strcmp(argv[1], "mixed"))
		return run_one(RUN_MIXED, atoi(argv[2]), atoi(argv[3]), NULL, how);
#ifdef SF_DYN
	if (!strcmp(argv[1], "lib"))
		return run_one(RUN_LIB, atoi(argv[2]), atoi(argv[3]), (void *)sflib_chain, how);
	if (!strcmp(argv[1], "dlopen") && argc >= 5) {
		int r = UT_PASS, i;

		for (i = 4; i < argc; i++) {
			void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
			void *f = h ? dlsym(h, "sflib_chain") : NULL;

			if (!f) {
				ut_diag("dlopen %s: %s", argv[i], dlerror());
				return UT_FAIL;
			}
			ut_diag("%s: sflib_chain at %p", argv[i], f);
			if (run_one(RUN_LIB, atoi(argv[2]), atoi(argv[3]), f, "exact"))
				r = UT_FAIL;
			dlclose(h);
		}
		return r;
	}
#endif
	ut_diag("unknown command %s", argv[1]);
	return UT_FAIL;
}
