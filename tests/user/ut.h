/* SPDX-License-Identifier: GPL-2.0 */
/* Helpers shared by the user test programs (64-bit and -m32). */
#ifndef _UT_USER_H
#define _UT_USER_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../modules/unwind_test_uapi.h"

#define UT_CTL "/sys/kernel/debug/unwind_test/ctl"

/* Exit codes understood by tests/guest/run-tests. */
#define UT_PASS 0
#define UT_FAIL 1
#define UT_SKIP 4

static int ut_failed;

static inline void ut_diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

#define ut_check(cond, ...) do {				\
	if (!(cond)) {						\
		ut_diag("FAIL %s:%d: %s", __FILE__, __LINE__, #cond); \
		ut_diag(__VA_ARGS__);				\
		ut_failed = 1;					\
	}							\
} while (0)

static inline int ut_open(void)
{
	int fd = open(UT_CTL, O_RDWR);

	if (fd < 0) {
		ut_diag("cannot open %s: %s", UT_CTL, strerror(errno));
		exit(UT_FAIL);
	}
	return fd;
}

/* A debugfs counter of unwind_deferred.ko. */
static inline unsigned long long ut_stat(const char *name)
{
	char path[128];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/unwind_deferred/%s", name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &v) != 1) {
		ut_diag("cannot read %s", path);
		exit(UT_FAIL);
	}
	fclose(f);
	return v;
}

static inline int ut_result(void)
{
	return ut_failed ? UT_FAIL : UT_PASS;
}

/* xorshift64*: reproducible from the printed seed. */
static unsigned long long ut_rng_state = 88172645463325252ull;

static inline unsigned long long ut_rand(void)
{
	ut_rng_state ^= ut_rng_state >> 12;
	ut_rng_state ^= ut_rng_state << 25;
	ut_rng_state ^= ut_rng_state >> 27;
	return ut_rng_state * 2685821657736338717ull;
}

#endif /* _UT_USER_H */
