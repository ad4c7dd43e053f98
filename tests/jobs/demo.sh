# SPDX-License-Identifier: GPL-2.0
# The main job, inside the guest: load the module and the ftrace-style
# consumer, trace a program's syscalls with their deferred user stacks.
. /jobs/lib.sh
TR=/sys/kernel/tracing
if ! load_core || ! insmod $MODDIR/unwind_ftrace.ko; then
	echo "UT-DEMO-FAILED"
	exit 1
fi
for abi in 64 32; do
	echo "UT-PROGRAM demo$abi"
	echo demo$abi >/sys/kernel/debug/unwind_ftrace/comm
	echo >$TR/trace
	echo 1 >$TR/events/unwind_ftrace/enable
	/bin/demo$abi
	echo 0 >$TR/events/unwind_ftrace/enable
	grep unwind_ $TR/trace | sed 's/^/UT-TRACE /'
done
echo "UT-COUNTERS walks=$(stat walks) callbacks=$(stat callbacks) queued=$(stat queued)"
rmmod unwind_ftrace && unload_core
