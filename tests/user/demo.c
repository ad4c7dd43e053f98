// SPDX-License-Identifier: GPL-2.0
/*
 * The README's main job: a small "server" with a recognizable call
 * chain.  Each of its syscalls is an event that unwind_ftrace.ko samples;
 * the deferred user stack arrives with the same cookie before the
 * syscall returns.  scripts/demo symbolizes the frames from this ELF.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static __attribute__((noinline)) uint64_t compute_checksum(const char *s)
{
	uint64_t sum = 0;
	char line[64];
	int n;

	while (*s)
		sum = sum * 31 + *s++;
	n = snprintf(line, sizeof(line), "checksum %016llx\n", (unsigned long long)sum);
	if (write(STDOUT_FILENO, line, n) != n)
		return 0;
	return sum;
}

static __attribute__((noinline)) uint64_t handle_request(const char *path)
{
	uint64_t r = compute_checksum(path);

	asm volatile("" ::: "memory");
	return r;
}

static __attribute__((noinline)) uint64_t serve_one_client(int id)
{
	uint64_t r = handle_request(id & 1 ? "/index.html" : "/about.html");

	asm volatile("" ::: "memory");
	return r;
}

int main(void)
{
	int i;

	for (i = 0; i < 2; i++)
		serve_one_client(i);
	return 0;
}
