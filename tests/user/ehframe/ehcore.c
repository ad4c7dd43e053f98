// SPDX-License-Identifier: GPL-2.0
/*
 * The leaf, the oracle and the checks of the ehframe_* programs (C and
 * C++): see ehchain.h.
 */
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unwind.h>

#include "ehchain.h"

unsigned long long eh_frames[EH_MAX_FRAMES];

extern char _start[];
extern char eh_leaf_ip[];

static _Unwind_Reason_Code oracle_step(struct _Unwind_Context *ctx, void *arg)
{
	struct eh_chain *c = arg;
	unsigned long ip = _Unwind_GetIP(ctx);

	/* After _start (RA undefined) libgcc reports one more context, IP 0. */
	if (ip && c->oracle_nr < EH_MAX_FRAMES)
		c->oracle[c->oracle_nr++] = ip;
	return _URC_NO_REASON;
}

static volatile unsigned long spin_sink;

__attribute__((noinline, noclone)) void eh_leaf(struct eh_chain *c)
{
	long ret, i;

	if (c->spin > 0 && c->wide) {
		/*
		 * For c->spin ms of CPU time, 128 adds with one row, each
		 * ending in a jump: TCG takes an interrupt only where a block
		 * of translated code starts, and a jump ends one, so that the
		 * sampled IPs spread over 128 addresses, more than the row
		 * memo's slots, under TCG as on hardware.  The clock is read
		 * every 2^19 adds, rarely the topmost frame.
		 */
		struct timespec t;
		long end, x = 0;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		end = t.tv_sec * 1000L + t.tv_nsec / 1000000 + c->spin;
		do {
			for (i = 0; i < 4096; i++)
				asm volatile(".rept 128\n\taddq $1, %0\n\tjmp 1f\n1:\n\t.endr"
					     : "+r"(x));
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		} while (t.tv_sec * 1000L + t.tv_nsec / 1000000 < end);
		spin_sink = x;
		c->ra[0] = (unsigned long)__builtin_return_address(0);
		return;
	}
	if (c->spin > 0) {
		for (i = 0; i < c->spin; i++)
			spin_sink += i;
		c->ra[0] = (unsigned long)__builtin_return_address(0);
		return;
	}
	c->oracle_nr = 0;
#ifndef EH_NO_ORACLE
	if (!c->no_oracle)
		_Unwind_Backtrace(oracle_step, c);
#endif
	asm volatile("syscall\n"
		     ".globl eh_leaf_ip\n"
		     "eh_leaf_ip:"
		     : "=a"(ret)
		     : "a"(16L /* SYS_ioctl */), "D"((long)c->fd),
		       "S"((long)c->cmd), "d"(c->arg)
		     : "rcx", "r11", "memory");
	c->ret = ret;
	c->leaf_ip = (unsigned long)eh_leaf_ip;
	c->ra[0] = (unsigned long)__builtin_return_address(0);
}

void eh_setup(struct eh_chain *c, int mode)
{
	memset(c, 0, sizeof(*c));
	memset(eh_frames, 0, sizeof(eh_frames));
	c->fd = ut_open();
	c->req.max = EH_MAX_FRAMES;
	c->req.mode = mode;
	c->req.entries = (uintptr_t)eh_frames;
	c->cmd = UT_IOC_UNWIND;
	c->arg = &c->req;
}

static unsigned long want_at(struct eh_chain *c, unsigned int i, unsigned int nra)
{
	if (i == 0)
		return c->leaf_ip;
	if (i <= nra)
		return c->ra[i - 1];
	return i < c->oracle_nr ? c->oracle[i] : 0;
}

int eh_check(struct eh_chain *c, const unsigned long long *got, unsigned int nra,
	     const char *how)
{
	unsigned int want = c->no_oracle ? nra + 1 : c->oracle_nr, i, bad = want;
	unsigned long last = c->oracle_nr ? c->oracle[c->oracle_nr - 1] : 0;

	ut_check(c->ret == 0, "ioctl: %ld", c->ret);
	ut_check(c->req.ret == 0, "API returned %d", c->req.ret);
	if (!c->no_oracle) {
		/* The oracle itself: it agrees with the recorded return
		 * addresses and ends in _start. */
		ut_check(c->oracle_nr > nra + 1, "oracle: %u frames", c->oracle_nr);
		for (i = 1; i <= nra && i < c->oracle_nr; i++)
			ut_check(c->oracle[i] == c->ra[i - 1], "oracle frame %u", i);
		ut_check(last > (unsigned long)_start && last < (unsigned long)_start + 64,
			 "oracle ends at %#lx, not in _start (%p)", last, (void *)_start);
	}
	for (i = 0; i < want && i < c->req.nr; i++) {
		if (got[i] != want_at(c, i, nra)) {
			bad = i;
			break;
		}
	}
	if (c->req.nr < want && bad == want)
		bad = c->req.nr;
	/* Past the oracle's _start: the walk must have ended there. */
	if (!c->no_oracle && bad == want && c->req.nr > want)
		bad = want;
	ut_diag("%u frames, first mismatch at %u of %u (%u recorded return addresses)",
		c->req.nr, bad, want, nra);
	if (!strcmp(how, "control")) {
		ut_check(bad < want, "exact in the control?");
		return ut_result();
	}
	if (!strcmp(how, "loose")) {
		ut_check(c->req.nr >= 1 && got[0] == c->leaf_ip, "frame 0 is not the leaf");
		return ut_result();
	}
	/* Without the oracle the walk goes on past the recorded part. */
	if (bad < want || (c->no_oracle ? c->req.nr < want : c->req.nr != want)) {
		for (i = bad > 2 ? bad - 2 : 0; i < bad + 3 && i < (want > c->req.nr ? want : c->req.nr); i++)
			ut_diag("frame %u: got %#llx want %#lx", i,
				i < c->req.nr ? got[i] : 0ull, i < want ? want_at(c, i, nra) : 0ul);
		ut_failed = 1;
	}
	return ut_result();
}

/* The callback's trace of a deferred request made by the leaf. */
int eh_deferred(struct eh_chain *c, void (*start)(struct eh_chain *, int), int depth,
		int op, unsigned int nra)
{
	static struct ut_deferred d;
	static struct ut_result res;
	unsigned int full;
	int fd;

	eh_setup(c, 0);
	fd = c->fd;
	memset(&d, 0, sizeof(d));
	d.op = UT_OP_RESET;
	ut_check(!ioctl(fd, UT_IOC_DEFERRED, &d), "reset");
	memset(&d, 0, sizeof(d));
	d.op = op;
	d.works = 1;
	d.count = 1;
	c->cmd = UT_IOC_DEFERRED;
	c->arg = &d;
	start(c, depth);
	ut_check(d.ret == 0, "request returned %d", d.ret);
	memset(&d, 0, sizeof(d));
	d.op = UT_OP_RESULT;
	d.ptr = (uintptr_t)&res;
	ut_check(!ioctl(fd, UT_IOC_DEFERRED, &d), "result");
	close(fd);
	ut_check(res.callbacks == 1, "%llu callbacks", (unsigned long long)res.callbacks);
	ut_check(res.matches_direct, "differs from unwind_user() in the same entry");
	ut_diag("op %d: cookie %#llx", op, (unsigned long long)res.cookie);
	/* The callback keeps UT_TRACE_MAX frames (and reports the trace's
	 * whole length): compare that much. */
	full = c->oracle_nr;
	if (c->oracle_nr > UT_TRACE_MAX)
		c->oracle_nr = UT_TRACE_MAX;
	if (nra + 1 > UT_TRACE_MAX)
		nra = UT_TRACE_MAX - 1;
	c->req.nr = res.nr;
	c->req.ret = 0;
	c->ret = 0;
	/* A truncated oracle does not end in _start: check the prefix only. */
	if (c->oracle_nr == UT_TRACE_MAX) {
		unsigned int i;

		for (i = 0; i < UT_TRACE_MAX; i++)
			if (res.entries[i] != want_at(c, i, nra))
				break;
		ut_diag("%u frames, first mismatch at %u of %u", res.nr, i, UT_TRACE_MAX);
		ut_check(i == UT_TRACE_MAX && res.nr == full, "deferred trace differs (%u frames, want %u)",
			 res.nr, full);
		return ut_result();
	}
	return eh_check(c, (const unsigned long long *)res.entries, nra, "exact");
}

/*
 * eh_edge_fn(reqs, fd, ra): four UT_IOC_UNWIND requests (reqs[0..3], 32
 * bytes each): at the entry (CFA = rsp + 8), in the body (rsp + 48), on a
 * path whose row comes from DW_CFA_restore_state (rsp + 48) and after the
 * epilogue's stack adjustment (rsp + 8); ra[0] gets its own return
 * address.  Frame pointers cannot walk any of them (RBP is the caller's);
 * the topmost frame's exact-IP row can.  syscall keeps r8-r10.
 */
#define EH_IOC_UNWIND 0xc0207501u
_Static_assert(UT_IOC_UNWIND == EH_IOC_UNWIND, "asm below");
_Static_assert(sizeof(struct ut_unwind) == 32, "asm below");
void eh_edge_fn(struct ut_unwind *reqs, int fd, unsigned long *ra);
extern char eh_edge_ip0[], eh_edge_ip1[], eh_edge_ip2[], eh_edge_ip3[];
/* Request n (reqs in r8, fd in r9d), then the global label name##n. */
#define EH_REQ(name, n) \
	"	mov %r9d, %edi\n" \
	"	mov $0xc0207501, %esi\n" \
	"	lea " #n "*32(%r8), %rdx\n" \
	"	mov $16, %eax\n" \
	"	syscall\n" \
	".globl " #name #n "\n" \
	#name #n ":\n"
#define REQ(n) EH_REQ(eh_edge_ip, n)
asm(".text\n"
    ".globl eh_edge_fn\n"
    ".type eh_edge_fn, @function\n"
    "eh_edge_fn:\n"
    ".cfi_startproc\n"
    "	mov %rdi, %r8\n"
    "	mov %esi, %r9d\n"
    "	mov %rdx, %r10\n"
    "	mov (%rsp), %rax\n"
    "	mov %rax, (%r10)\n"
    REQ(0)
    "	sub $40, %rsp\n"
    ".cfi_adjust_cfa_offset 40\n"
    REQ(1)
    "	jmp 2f\n"
    ".cfi_remember_state\n"
    "1:	add $40, %rsp\n"
    ".cfi_adjust_cfa_offset -40\n"
    REQ(3)
    "	ret\n"
    ".cfi_restore_state\n"
    "2:\n"
    REQ(2)
    "	jmp 1b\n"
    ".cfi_endproc\n"
    ".size eh_edge_fn, .-eh_edge_fn\n");

/* An assembly function making four UT_IOC_UNWIND requests (reqs[0..3]
 * on fd); ra[0] gets its return address. */
typedef void (*eh_req_fn)(struct ut_unwind *reqs, int fd, unsigned long *ra);

static unsigned long req_ra[2];
static uint64_t req_frames[4][EH_MAX_FRAMES / 4];
static struct eh_chain req_chain;

/* fn's requests, with the oracle's walk from here; req_ra[1] gets this
 * function's return address. */
static __attribute__((noinline, noclone)) void req_caller(eh_req_fn fn, struct ut_unwind *reqs,
							   int fd, struct eh_chain *c)
{
	c->oracle_nr = 0;
	_Unwind_Backtrace(oracle_step, c);
	fn(reqs, fd, req_ra);
	req_ra[1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

/* Runs fn's requests in mode: each must succeed and start at ips[i]. */
static void req_run(eh_req_fn fn, int mode, char *const ips[4], struct ut_unwind reqs[4])
{
	int fd = ut_open(), i;

	memset(reqs, 0, 4 * sizeof(*reqs));
	for (i = 0; i < 4; i++) {
		reqs[i].max = EH_MAX_FRAMES / 4;
		reqs[i].mode = mode;
		reqs[i].entries = (uintptr_t)req_frames[i];
	}
	req_caller(fn, reqs, fd, &req_chain);
	for (i = 0; i < 4; i++) {
		ut_diag("request %d: ret %d, %u frames (oracle %u): %#llx %#llx %#llx", i,
			reqs[i].ret, reqs[i].nr, req_chain.oracle_nr,
			(unsigned long long)req_frames[i][0], (unsigned long long)req_frames[i][1],
			(unsigned long long)req_frames[i][2]);
		ut_check(reqs[i].ret == 0 && reqs[i].nr >= 1, "request %d failed", i);
		ut_check(req_frames[i][0] == (unsigned long)ips[i], "request %d: IP", i);
	}
	close(fd);
}

/* Request i is exact: its IP, fn's return address, then req_caller's
 * frame on (the oracle from req_caller, [1] onwards), down to _start. */
static void req_exact(int i, const struct ut_unwind *req)
{
	const uint64_t *f = req_frames[i];
	const struct eh_chain *c = &req_chain;
	unsigned int j;

	ut_check(req->nr >= 3 && f[1] == req_ra[0] && f[2] == req_ra[1],
		 "request %d: the return addresses", i);
	ut_check(req->nr == c->oracle_nr + 1, "request %d: %u frames, want %u", i, req->nr,
		 c->oracle_nr + 1);
	for (j = 1; j < c->oracle_nr && j + 1 < req->nr; j++)
		if (f[j + 1] != c->oracle[j]) {
			ut_diag("request %d: frame %u: got %#llx want %#lx", i, j + 1,
				(unsigned long long)f[j + 1], c->oracle[j]);
			ut_failed = 1;
			break;
		}
}

int eh_edges(int mode)
{
	char *const ips[4] = { eh_edge_ip0, eh_edge_ip1, eh_edge_ip2, eh_edge_ip3 };
	struct ut_unwind reqs[4];
	int i;

	req_run(eh_edge_fn, mode, ips, reqs);
	for (i = 0; i < 4; i++)
		req_exact(i, &reqs[i]);
	return ut_result();
}

/*
 * eh_nocfi_fn(reqs, fd, ra): code no FDE covers (no CFI directives), as
 * crti's .init of Debian's libraries, with RBP 0 (frame pointers cannot
 * walk it): four UT_IOC_UNWIND requests with different words at SP.
 * 0: its return address (the function's entry): the walk steps to its
 * caller with it, and on with the caller's rows.  Then words the walk
 * must not take for a return address, so that it ends after the IP:
 * 1: a small number; 2: an address inside eh_edge_fn (a row covers it)
 * after a syscall, no call; 3: an address after a call, in this
 * function (no row covers it).  ra[0] gets its return address.
 */
void eh_nocfi_fn(struct ut_unwind *reqs, int fd, unsigned long *ra);
extern char eh_nocfi_ip0[], eh_nocfi_ip1[], eh_nocfi_ip2[], eh_nocfi_ip3[];
#define NOCFI_REQ(n) EH_REQ(eh_nocfi_ip, n)
asm(".text\n"
    ".globl eh_nocfi_fn\n"
    ".type eh_nocfi_fn, @function\n"
    "eh_nocfi_fn:\n"
    "	mov %rdi, %r8\n"
    "	mov %esi, %r9d\n"
    "	mov (%rsp), %rax\n"
    "	mov %rax, (%rdx)\n"
    "	mov %rbp, %r10\n"
    "	xor %ebp, %ebp\n"
    NOCFI_REQ(0)
    "	push $0x1234\n"
    NOCFI_REQ(1)
    "	lea eh_edge_ip0(%rip), %rax\n"
    "	mov %rax, (%rsp)\n"
    NOCFI_REQ(2)
    "	lea 1f(%rip), %rax\n"
    "	mov %rax, (%rsp)\n"
    NOCFI_REQ(3)
    "	add $8, %rsp\n"
    "	mov %r10, %rbp\n"
    "	ret\n"
    "	call eh_nocfi_fn\n"
    "1:	ud2\n"
    ".size eh_nocfi_fn, .-eh_nocfi_fn\n");

int eh_nocfi(int mode)
{
	char *const ips[4] = { eh_nocfi_ip0, eh_nocfi_ip1, eh_nocfi_ip2, eh_nocfi_ip3 };
	struct ut_unwind reqs[4];
	int i;

	req_run(eh_nocfi_fn, mode, ips, reqs);
	req_exact(0, &reqs[0]);
	for (i = 1; i < 4; i++)
		ut_check(reqs[i].nr == 1, "request %d: %u frames, want the IP alone", i, reqs[i].nr);
	return ut_result();
}
