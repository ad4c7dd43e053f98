# SPDX-License-Identifier: GPL-2.0
# scripts/insn-profile, inside the guest: one anchor workload pinned to
# CPU 1, sampled by Debian's perf (pinned to CPU 0) in one mode, while the
# QEMU plugin counts the instructions CPU 1 executes per translation
# block.  PROFILE is MODE:DEPTH:KIND:UNITS (ut.profile=).  Prints the
# module's symbols and the run's sample counts for the host's report.
. /jobs/lib.sh
PERF=/usr/bin/perf
B=/bin/bench64
set -- $(echo "${PROFILE:-fp,defer:64:user:5000}" | tr : ' ')
mode=$1 depth=$2 kind=$3 units=$4
echo 1024 >/proc/sys/kernel/perf_event_max_stack
echo 0 >/proc/sys/kernel/kptr_restrict
echo "INSN-INFO kernel $(uname -r) mode $mode depth $depth kind $kind units $units"
if [ -f $MODDIR/unwind_deferred.ko ]; then
	case $(uname -r) in 6.12.*) load_core || echo "BENCH-FAILED load" ;; esac
fi
grep '\[unwind_deferred\]' /proc/kallsyms | sed 's/^/INSN-KSYM /'
# Let boot's work on CPU 1 settle, then mark where the run starts.
sleep 1
case $mode in
none)
	taskset -c 1 $B anchor $depth $kind $units >/tmp/a.out ;;
*)
	taskset -c 0 $PERF record -q -B -N -m 4M -o /tmp/a.data -e cpu-clock \
		-c 100000 --call-graph $mode -- taskset -c 1 $B anchor $depth $kind $units \
		>/tmp/a.out 2>/tmp/a.err || { sed 's/^/# /' /tmp/a.err; echo "BENCH-FAILED record"; }
	;;
esac
echo "INSN-RUN cpu_ns $(sed -n 's/^ANCHOR cpu_ns //p' /tmp/a.out)"
[ -f /tmp/a.data ] && $PERF report -i /tmp/a.data --stats 2>/dev/null | awk '
	$2 == "events:" && ($1 == "SAMPLE" || $1 == "CALLCHAIN_DEFERRED") && !seen[$1]++ {
		print "INSN-RUN", tolower($1), $3
	}'
