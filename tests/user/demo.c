// SPDX-License-Identifier: GPL-2.0
/*
 * The README's main job: a small "server" with a recognizable call
 * chain.  Each of its syscalls is an event that unwind_ftrace.ko samples;
 * the deferred user stack arrives with the same cookie before the
 * syscall returns.  scripts/demo symbolizes the frames from this ELF.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static __attribute__((noinline)) uint64_t compute_checksum(const char *s)
{
	uint64_t sum = 0;
	long ret = 1;	/* write(2) on x86-64 */
	char line[64];
	int n;

	while (*s)
		sum = sum * 31 + *s++;
	n = snprintf(line, sizeof(line), "checksum %016llx\n", (unsigned long long)sum);
	/*
	 * The syscall right here, not in libc's write(): libc is built
	 * without frame pointers, and its leaf would hide this frame.
	 */
#ifdef __x86_64__
	asm volatile("syscall" : "+a"(ret) : "D"(STDOUT_FILENO), "S"(line), "d"((long)n)
		     : "rcx", "r11", "memory");
#else
	asm volatile("int $0x80" : "+a"(ret) : "b"(STDOUT_FILENO), "c"(line), "d"(n)
		     : "memory");
#endif
	return ret == n ? sum : 0;
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
