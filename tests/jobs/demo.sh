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

# Debian's own perf 7.3 and trace-cmd 3.3, unmodified, on this kernel.
# Every perf script stack below goes through cut_stacks (lib.sh): a stack
# longer than 40 frames shows its first 8 and how many more.
out() {
	sed 's/^/UT-OUT /'
}
if [ -x /usr/bin/perf ]; then
	echo "UT-SECTION Debian's perf: perf record --call-graph fp,defer"
	echo '$ perf record -e cpu-clock -c 500000 --call-graph fp,defer -- perf_work64 6 sys 300' | out
	perf record -q -B -N -o /tmp/demo.data -e cpu-clock -c 500000 \
		--call-graph fp,defer -- /bin/perf_work64 6 sys 300 2>&1 | out
	perf script -i /tmp/demo.data --no-merge-callchains --no-inline -F comm,tid,time,ip,sym,dso \
		2>/dev/null >/tmp/demo.raw
	echo '$ perf script --no-merge-callchains    # a sample in the kernel, its user part deferred:' | out
	awk 'BEGIN { RS = ""; ORS = "\n\n" } /\(cookie\)/ && /sys_getppid/ { print; exit }' \
		/tmp/demo.raw >/tmp/demo.one
	cut_stacks </tmp/demo.one | out
	cookie=$(awk '/\(cookie\)/ { print $1; exit }' /tmp/demo.one)
	echo '# ... and the record with its user stack, written before the return to user space:' | out
	awk -v c="[cookie: $cookie]" 'BEGIN { RS = ""; ORS = "\n\n" } index($0, c) { print; exit }' \
		/tmp/demo.raw | cut_stacks | out
	echo '$ perf script                          # perf merges them by cookie:' | out
	perf script -i /tmp/demo.data --no-inline -F comm,tid,time,ip,sym,dso 2>/dev/null |
		awk 'BEGIN { RS = ""; ORS = "\n\n" } /sys_getppid/ && /leaf/ { print; exit }' | cut_stacks | out
	echo '$ perf report --stdio -g --no-children' | out
	perf report -i /tmp/demo.data --stdio -g --no-children --no-inline --comms perf_work64 \
		2>/dev/null | grep -v '^#' | grep -v '^$' | head -24 | out
	echo "# $(grep -c 'DEFERRED CALLCHAIN' /tmp/demo.raw) deferred records for" \
		"$(grep -c '(cookie)' /tmp/demo.raw) deferred samples" | out
	rm -f /tmp/demo.data /tmp/demo.raw /tmp/demo.one
fi
# A program built without frame pointers, with SFrame (trixie's gcc):
# perf's synchronous walk loses the callers, the deferred one (SFrame, read
# from the program's file by the module) has them all.
SFP=/sframe/v2/sfchain-static
if [ -x /usr/bin/perf ] && [ -x $SFP ]; then
	echo "UT-SECTION SFrame: perf on a program without frame pointers, fp against fp,defer"
	for cg in fp fp,defer; do
		echo "\$ perf record -e cpu-clock -c 500000 --call-graph $cg -- sfchain-static spin 6 20000000" | out
		perf record -q -B -N -o /tmp/sf.data -e cpu-clock -c 500000 --call-graph $cg \
			-- $SFP spin 6 20000000 >/dev/null 2>&1
		echo '$ perf script    # a sample in the leaf:' | out
		perf script -i /tmp/sf.data --no-inline -F comm,tid,ip,sym 2>/dev/null |
			awk 'BEGIN { RS = ""; ORS = "\n\n" } / leaf/ { print; exit }' | cut_stacks | out
		rm -f /tmp/sf.data
	done
fi
# A stock Debian program, unmodified (trixie's perl: no frame pointers,
# no SFrame, only .eh_frame): perf's own walk (fp) loses the callers;
# the module's (fp,defer: .eh_frame read from the mapped files) and
# perf's copy of 8 KiB of stack per sample (dwarf) have them, at very
# different costs per sample.
PL='sub fib { my $n = shift; $n < 2 ? $n : fib($n - 1) + fib($n - 2) } fib(18);
my @a = map { ($_ * 7919) % 100003 } 1 .. 20000; @a = sort { $a <=> $b } @a;'
if [ -x /usr/bin/perf ] && [ -x /usr/bin/perl ]; then
	echo "UT-SECTION .eh_frame: Debian's perl under --call-graph fp, fp,defer and dwarf"
	for cg in fp fp,defer dwarf; do
		echo "\$ perf record -e cpu-clock -c 500000 --call-graph $cg -- perl -e 'fib(18); sort { \$a <=> \$b } ...'" | out
		perf record -q -B -N -o /tmp/eh.data -e cpu-clock -c 500000 --call-graph $cg \
			-- /usr/bin/perl -e "$PL" >/dev/null 2>&1
		n=$(perf script -i /tmp/eh.data -F comm 2>/dev/null | grep -c perl)
		echo "# $n samples, $(( $(wc -c </tmp/eh.data) / (n ? n : 1) )) bytes of perf.data per sample" | out
		echo '$ perf script    # the sample with the most user frames (most of perl is [unknown]: stripped):' | out
		perf script -i /tmp/eh.data --no-inline -F comm,tid,ip,sym,dso 2>/dev/null |
			awk 'BEGIN { RS = ""; ORS = "\n\n"; FS = "\n" }
			{ u = 0; for (i = 2; i <= NF; i++) if ($i !~ /^[ \t]*ffff/) u++ }
			u > best { best = u; s = $0 } END { print s }' | cut_stacks | out
		rm -f /tmp/eh.data
	done
fi
if [ -x /usr/bin/trace-cmd ]; then
	echo "UT-SECTION Debian's trace-cmd reads the consumer's events"
	echo demo64 >/sys/kernel/debug/unwind_ftrace/comm
	echo '$ trace-cmd record -e unwind_ftrace demo64 && trace-cmd report' | out
	trace-cmd record -q -o /tmp/demo.dat -e unwind_ftrace /bin/demo64 >/dev/null 2>&1
	trace-cmd report -i /tmp/demo.dat 2>/dev/null >/tmp/demo.txt
	# The program's own write(2): the request, then its stack by cookie.
	awk '/unwind_request:.*syscall=1 / { for (i = 1; i <= NF; i++) if ($i ~ /^cookie=/) c = $i; print; exit }' \
		/tmp/demo.txt | cut -c1-160 | out
	c=$(awk '/unwind_request:.*syscall=1 / { for (i = 1; i <= NF; i++) if ($i ~ /^cookie=/) { print $i; exit } }' /tmp/demo.txt)
	# Its frames are addresses; the host symbolizes them (symbolize.py).
	echo "UT-DEMO-BIN demo64"
	grep "unwind_stack: *$c " /tmp/demo.txt | head -1 | out
	rm -f /tmp/demo.txt
	rm -f /tmp/demo.dat
fi
rmmod unwind_ftrace && unload_core
