// SPDX-License-Identifier: GPL-2.0
/*
 * The ehframe_* tests' C program, built with -O2 -fomit-frame-pointer
 * -fasynchronous-unwind-tables and no --gsframe by Debian trixie's gcc:
 * static, static-pie, dynamic (EH_DYN: with libehlink.so, and dlopen) and
 * mixed3 (EH_SF: one level's object has SFrame).  See ehchain.h.
 *
 *   ehchain chain DEPTH MODE [loose|control]
 *	a chain of DEPTH levels; the trace unwind_test.ko returns
 *	(UT_IOC_UNWIND, ut_mode MODE) must equal the recorded return
 *	addresses and, past them, libgcc's walk down to _start.
 *   ehchain mixed DEPTH MODE	levels alternate .eh_frame code and
 *	frame-pointer code without CFI (recorded addresses only)
 *   ehchain mixed3 DEPTH MODE	(EH_SF) .eh_frame, SFrame, frame pointers
 *   ehchain lib DEPTH MODE	the chain is in libehlink.so (EH_DYN)
 *   ehchain dlopen DEPTH MODE LIB...	the chain in each LIB, dlopen'd
 *	in turn (each dlclose'd before the next)
 *   ehchain threads N DEPTH MODE LIB	N threads released at once walk the
 *	same chain in LIB (recorded addresses only: a thread's stack does
 *	not end in _start)
 *   ehchain deferred DEPTH OP	the leaf asks for a deferred unwind
 *	(UT_OP_REQUEST or UT_OP_REQUEST_NMI); the callback's trace is checked
 *   ehchain spin DEPTH LOOPS	CPU-bound, known stack, for perf record
 *   ehchain wide DEPTH MS	the same for MS ms of CPU time, in loops of 128
 *	adds and jumps with one row
 *   ehchain edges MODE	requests in a function's prologue, body,
 *	restore_state path and epilogue
 *   ehchain nocfi MODE	requests in code without an FDE: at its entry,
 *	then with words at SP that are no return address
 */
#include <stdint.h>
#ifdef EH_DYN
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#endif

#include "ehchain.h"

__attribute__((noinline)) void eh_mixed(int depth, struct eh_chain *c)
{
	eh_descend(depth, c);
}

static __attribute__((noinline, noclone)) void chain(int depth, struct eh_chain *c)
{
	if (depth == 0)
		eh_leaf(c);
	else
		chain(depth - 1, c);
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");	/* no tail call */
}

enum { RUN_CHAIN, RUN_MIXED, RUN_LIB };
static int kind;
static void *lib_chain;

static __attribute__((noinline, noclone)) void run(struct eh_chain *c, int depth)
{
	switch (kind) {
	case RUN_CHAIN:
		chain(depth - 1, c);
		break;
	case RUN_MIXED:
		c->level[(depth - 1) % c->kinds](depth - 1, c);
		break;
	case RUN_LIB:
		((void (*)(int, struct eh_chain *, eh_leaf_fn))lib_chain)(depth - 1, c, eh_leaf);
		break;
	}
	c->ra[depth + 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

static int run_walk(int depth, int mode, const char *how, int kinds)
{
	static struct eh_chain c;

	eh_setup(&c, mode);
	c.kinds = kinds;
	c.level[0] = eh_mixed;
	c.level[1] = ehfp_level;
#ifdef EH_SF
	if (kinds == 3) {
		c.level[1] = ehsf_level;
		c.level[2] = ehfp_level;
	}
#endif
	/* libgcc cannot walk code without CFI, nor should it read a
	 * hostile copy's .eh_frame: recorded addresses only. */
	c.no_oracle = kind == RUN_MIXED || !strcmp(how, "loose");
	run(&c, depth);
	close(c.fd);
	ut_diag("depth %d mode %d:", depth, mode);
	return eh_check(&c, eh_frames, depth + 2, how);
}

/*
 * Twice (or $EHCHAIN_WALKS times): the second walk of the same chain in
 * the same task finds its rows in the task's memo, and steps those frames
 * in C (unwind_rs_memo_run()), not from the table as the first did.
 */
static int run_one(int depth, int mode, const char *how, int kinds)
{
	int r, i, n = getenv("EHCHAIN_WALKS") ? atoi(getenv("EHCHAIN_WALKS")) : 2;

	if (depth < 1 || depth > EH_MAX_DEPTH || n < 1 || n > 1000) {
		ut_diag("bad depth or EHCHAIN_WALKS");
		return UT_FAIL;
	}
	/* One call site: every walk after the first meets the same PCs. */
	for (r = UT_PASS, i = 0; r == UT_PASS && i < n; i++) {
		if (i)
			ut_diag("again, from the memo:");
		r = run_walk(depth, mode, how, kinds);
	}
	return r;
}

static void deferred_start(struct eh_chain *c, int depth)
{
	run(c, depth);
}

#ifdef EH_DYN
struct eh_thread {
	pthread_t t;
	struct eh_chain c;
	unsigned long long frames[EH_MAX_FRAMES];
	int depth, r;
};

static pthread_barrier_t start_line;

static void *thread_walk(void *arg)
{
	struct eh_thread *t = arg;

	pthread_barrier_wait(&start_line);
	run(&t->c, t->depth);
	return NULL;
}

/* N threads, set up one by one, then released together into the chain. */
static int run_threads(int n, int depth, int mode, const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	struct eh_thread *t;
	int i, r = UT_PASS;

	lib_chain = h ? dlsym(h, "ehlib_chain") : NULL;
	if (!lib_chain || n < 1 || n > 64 || depth < 1 || depth > EH_MAX_DEPTH) {
		ut_diag("threads: bad arguments or dlopen %s: %s", lib, h ? "" : dlerror());
		return UT_FAIL;
	}
	kind = RUN_LIB;
	t = calloc(n, sizeof(*t));
	if (!t || pthread_barrier_init(&start_line, NULL, n)) {
		ut_diag("threads: no memory");
		return UT_FAIL;
	}
	for (i = 0; i < n; i++) {
		eh_setup(&t[i].c, mode);
		t[i].c.req.entries = (uintptr_t)t[i].frames;
		t[i].c.kinds = 1;
		t[i].c.no_oracle = 1;
		t[i].depth = depth;
		if (pthread_create(&t[i].t, NULL, thread_walk, &t[i])) {
			ut_diag("pthread_create");
			return UT_FAIL;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(t[i].t, NULL);
	for (i = 0; i < n; i++) {
		close(t[i].c.fd);
		ut_diag("thread %d, depth %d mode %d:", i, depth, mode);
		if (eh_check(&t[i].c, t[i].frames, depth + 2, "exact"))
			r = UT_FAIL;
	}
	free(t);
	return r;
}
#endif

int main(int argc, char **argv)
{
	const char *how = argc > 4 ? argv[4] : "exact";
	int depth, mode;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc == 3 && !strcmp(argv[1], "edges"))
		return eh_edges(atoi(argv[2]));
	if (argc == 3 && !strcmp(argv[1], "nocfi"))
		return eh_nocfi(atoi(argv[2]));
	if (argc < 4) {
		ut_diag("usage: ehchain chain|mixed|mixed3|lib|dlopen|deferred DEPTH MODE ... | spin DEPTH LOOPS | wide DEPTH MS | edges|nocfi MODE");
		return UT_FAIL;
	}
	depth = atoi(argv[2]);
	mode = atoi(argv[3]);
	if (!strcmp(argv[1], "chain"))
		return run_one(depth, mode, how, 1);
	if (!strcmp(argv[1], "spin") || !strcmp(argv[1], "wide")) {
		static struct eh_chain c;

		c.spin = atol(argv[3]);
		c.wide = !strcmp(argv[1], "wide");
		run(&c, depth);
		return UT_PASS;
	}
	if (!strcmp(argv[1], "deferred")) {
		static struct eh_chain c;

		return eh_deferred(&c, deferred_start, depth, mode, depth + 2);
	}
	if (!strcmp(argv[1], "mixed")) {
		kind = RUN_MIXED;
		return run_one(depth, mode, how, 2);
	}
#ifdef EH_SF
	if (!strcmp(argv[1], "mixed3")) {
		kind = RUN_MIXED;
		return run_one(depth, mode, how, 3);
	}
#endif
#ifdef EH_DYN
	if (!strcmp(argv[1], "lib")) {
		kind = RUN_LIB;
		lib_chain = (void *)ehlib_chain;
		return run_one(depth, mode, how, 1);
	}
	if (!strcmp(argv[1], "threads") && argc == 6)
		return run_threads(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]), argv[5]);
	if (!strcmp(argv[1], "dlopen") && argc >= 5) {
		int r = UT_PASS, i;

		kind = RUN_LIB;
		for (i = 4; i < argc; i++) {
			void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);

			lib_chain = h ? dlsym(h, "ehlib_chain") : NULL;
			if (!lib_chain) {
				ut_diag("dlopen %s: %s", argv[i], dlerror());
				return UT_FAIL;
			}
			ut_diag("%s: ehlib_chain at %p", argv[i], lib_chain);
			/* A test's command between the load and the walks. */
			if (getenv("EHCHAIN_LOADED") && system(getenv("EHCHAIN_LOADED"))) {
				ut_diag("EHCHAIN_LOADED failed");
				return UT_FAIL;
			}
			if (run_one(depth, mode, "exact", 1))
				r = UT_FAIL;
			dlclose(h);
		}
		return r;
	}
#endif
	ut_diag("unknown command %s", argv[1]);
	return UT_FAIL;
}
