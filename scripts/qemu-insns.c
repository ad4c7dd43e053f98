// SPDX-License-Identifier: GPL-2.0
/*
 * A QEMU TCG plugin (QEMU 7.2's plugin API, version 1) for
 * scripts/insn-profile: counts the guest instructions each translation
 * block executes on one vCPU and writes "vaddr insns executions" lines at
 * exit, for scripts/insn-report.py to map to symbols.  Under -icount an
 * instruction is the guest's nanosecond, so this is an exact profile,
 * interrupts-off code included.  Arguments: vcpu=N (default 1),
 * out=PATH, gate=ADDR (count only between odd and even runs of the block
 * at ADDR: the workload's two reads of its CPU clock).
 *
 * Only the few declarations this needs, from QEMU's documented plugin ABI.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef void (*tb_trans_cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*vcpu_udata_cb)(unsigned int vcpu_index, void *userdata);
typedef void (*udata_cb)(qemu_plugin_id_t id, void *userdata);
enum { QEMU_PLUGIN_CB_NO_REGS };

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, tb_trans_cb cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, vcpu_udata_cb cb,
					  int flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, udata_cb cb, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;
	struct block *next;
};

static struct block *blocks;
static unsigned int target_vcpu = 1;
static const char *out_path = "insns.txt";
static uint64_t gate;
static int counting = 1;

/* icount runs every vCPU in one thread: no locking. */
static void on_exec(unsigned int vcpu, void *udata)
{
	struct block *b = udata;

	if (vcpu != target_vcpu)
		return;
	if (gate && b->vaddr == gate)
		counting = !counting;
	if (counting)
		b->execs++;
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	struct block *b = calloc(1, sizeof(*b));

	if (!b)
		abort();
	b->vaddr = qemu_plugin_tb_vaddr(tb);
	b->insns = qemu_plugin_tb_n_insns(tb);
	b->next = blocks;
	blocks = b;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_exec, QEMU_PLUGIN_CB_NO_REGS, b);
}

static void on_atexit(qemu_plugin_id_t id, void *udata)
{
	FILE *f = fopen(out_path, "w");
	struct block *b;

	if (!f)
		return;
	for (b = blocks; b; b = b->next)
		if (b->execs)
			fprintf(f, "%llx %llu %llu\n", (unsigned long long)b->vaddr,
				(unsigned long long)b->insns, (unsigned long long)b->execs);
	fclose(f);
}

__attribute__((visibility("default")))
int qemu_plugin_install(qemu_plugin_id_t id, const void *info, int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "vcpu=", 5))
			target_vcpu = atoi(argv[i] + 5);
		else if (!strncmp(argv[i], "gate=", 5))
			gate = strtoull(argv[i] + 5, NULL, 16), counting = 0;
		else if (!strncmp(argv[i], "out=", 4))
			out_path = strdup(argv[i] + 4);
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	qemu_plugin_register_atexit_cb(id, on_atexit, NULL);
	return 0;
}
