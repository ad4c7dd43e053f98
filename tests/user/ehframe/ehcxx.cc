// SPDX-License-Identifier: GPL-2.0
/*
 * The ehframe_* tests' C++ program (trixie's g++ -O2 -fomit-frame-pointer,
 * no --gsframe, dynamic with Debian's libstdc++ and libgcc_s): a chain
 * through a recursive function template, virtual calls, a std::function
 * lambda and frames with exception-handling data (a destructor to run,
 * a try block: CIEs with personality and LSDA, augmentation "zPLR").
 * The explicit levels record their return addresses; the whole trace must
 * also equal libgcc's walk (the one C++ exceptions use) down to _start.
 *
 *   ehcxx chain DEPTH MODE	DEPTH virtual levels (and the fixed ones)
 *   ehcxx deferred DEPTH OP	the leaf asks for a deferred unwind
 *   ehcxx throw DEPTH MODE	throw through the chain first, then walk
 */
#include <functional>
#include <stdexcept>

#include "ehchain.h"

namespace {

struct Guard {			// a destructor to run on unwinding: an LSDA
	volatile int *p;
	explicit Guard(volatile int *q) : p(q) { ++*p; }
	~Guard() { --*p; }
};
volatile int guards;
int throw_at = -1;

/* Levels 0..3 of the explicit part, from the leaf up. */
__attribute__((noinline)) void with_eh(eh_chain *c)
{
	Guard g(&guards);
	try {
		if (throw_at == 0)
			throw std::runtime_error("leaf");
		eh_leaf(c);
	} catch (const std::logic_error &) {
		c->ret = -1;
	}
	c->ra[1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

struct Node {
	virtual ~Node() = default;
	virtual void visit(int depth, eh_chain *c) = 0;
};
Node *nodes[2];

struct Even : Node {
	void visit(int depth, eh_chain *c) override;
};
struct Odd : Node {
	void visit(int depth, eh_chain *c) override;
};

std::function<void(eh_chain *)> *bottom;

/* Virtual levels: nodes[] is filled at run time, no devirtualization. */
__attribute__((noinline)) void Even::visit(int depth, eh_chain *c)
{
	Guard g(&guards);
	if (depth == throw_at)
		throw std::runtime_error("even");
	if (depth == 0)
		(*bottom)(c);
	else
		nodes[depth % 2]->visit(depth - 1, c);
	c->ra[depth + 3] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

__attribute__((noinline)) void Odd::visit(int depth, eh_chain *c)
{
	if (depth == throw_at)
		throw std::runtime_error("odd");
	if (depth == 0)
		(*bottom)(c);
	else
		nodes[depth % 2]->visit(depth - 1, c);
	c->ra[depth + 3] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

/* A recursive template above the virtual part: 3 more levels. */
template <int N>
__attribute__((noinline)) void tlevel(int depth, eh_chain *c, unsigned int nra)
{
	if constexpr (N == 0)
		nodes[depth % 2]->visit(depth - 1, c);
	else
		tlevel<N - 1>(depth, c, nra);
	c->ra[nra - N - 1] = (unsigned long)__builtin_return_address(0);
	asm volatile("" ::: "memory");
}

}  // namespace

/*
 * ra[0]: the leaf's (into with_eh), ra[1]: with_eh's (into the lambda or
 * std::function's invoker: not recorded separately, the oracle covers
 * it), ra[2]: unused, ra[3 .. depth + 2]: the virtual levels,
 * ra[depth + 3 .. depth + 5]: tlevel<2>, <1>, <0>.  Only ra[0] and the
 * virtual and template levels are in the trace at known places, so the
 * explicit check is ra[0] and the oracle does the rest; the virtual and
 * template levels are checked against the oracle by address below.
 */
static int found_in_oracle(eh_chain *c, unsigned long ra)
{
	for (unsigned int i = 1; i < c->oracle_nr; i++)
		if (c->oracle[i] == ra)
			return 1;
	return 0;
}

static __attribute__((noinline)) void start(eh_chain *c, int depth)
{
	tlevel<2>(depth, c, depth + 6);
	asm volatile("" ::: "memory");
}

static int one(int depth, int mode, int op)
{
	static eh_chain c;
	int r;

	std::function<void(eh_chain *)> f = [](eh_chain *cc) { with_eh(cc); };
	bottom = &f;
	if (op) {
		r = eh_deferred(&c, start, depth, op, 1);
	} else {
		eh_setup(&c, mode);
		try {
			start(&c, depth);
		} catch (const std::runtime_error &e) {
			ut_diag("caught %s", e.what());
			close(c.fd);
			return UT_FAIL;
		}
		close(c.fd);
		ut_diag("depth %d mode %d:", depth, mode);
		r = eh_check(&c, eh_frames, 1, "exact");
	}
	for (int i = 3; i < depth + 6; i++)
		ut_check(found_in_oracle(&c, c.ra[i]), "level %d's return address %#lx not in the oracle",
			 i, c.ra[i]);
	ut_check(guards == 0, "%d guards left", guards);
	return r | ut_result();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	nodes[0] = new Even;
	nodes[1] = new Odd;
	if (argc < 4) {
		ut_diag("usage: ehcxx chain|deferred|throw DEPTH MODE");
		return UT_FAIL;
	}
	int depth = atoi(argv[2]), arg = atoi(argv[3]);

	if (depth < 1 || depth > EH_MAX_DEPTH - 8) {
		ut_diag("bad depth");
		return UT_FAIL;
	}
	if (!strcmp(argv[1], "chain"))
		return one(depth, arg, 0);
	if (!strcmp(argv[1], "deferred"))
		return one(depth, 0, arg);
	if (!strcmp(argv[1], "throw")) {
		/* An exception through the same frames first (libgcc's
		 * unwinder uses them), then the walk. */
		static eh_chain c;

		eh_setup(&c, arg);
		throw_at = depth > 2 ? depth - 2 : 1;
		try {
			start(&c, depth);
			ut_diag("no exception");
			return UT_FAIL;
		} catch (const std::runtime_error &e) {
			ut_diag("caught \"%s\" thrown at level %d", e.what(), throw_at);
		}
		close(c.fd);
		throw_at = -1;
		return one(depth, arg, 0);
	}
	ut_diag("unknown command %s", argv[1]);
	return UT_FAIL;
}
