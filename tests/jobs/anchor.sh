# SPDX-License-Identifier: GPL-2.0
# scripts/bench --anchor, inside the guest, on our production kernel or on
# upstream 7.3's: Debian's perf samples the anchor workloads (bench.c's
# "anchor") with synchronous (fp) and deferred (fp,defer) user callchains
# at one period, and they also run unsampled.  On ours the module is
# loaded ("none": loaded and idle; "bare": not loaded), and the in-kernel
# micro-benchmarks (bench.sh) follow.  Prints "ANCHOR WORKLOAD MODE KEY
# VALUE" lines for scripts/anchor-report.py.
. /jobs/lib.sh
PERF=/usr/bin/perf
B=/bin/bench64
ROUNDS=${BENCH_ROUNDS:-3}
PERIOD=100000
# NAME:DEPTH:KIND:UNITS, each about 0.5 s of guest time unsampled.
WORKLOADS="d8:8:user:5000 d64:64:user:5000 d256:256:user:5000 sys64:64:sys:5000"
# Whole chains at depth 256 in every mode (upstream's deferred record
# ignores the limit; perf's default of 127 would cut only the others).
echo 1024 >/proc/sys/kernel/perf_event_max_stack
echo "ANCHOR-INFO kernel $(uname -r)"
grep -h hres_active /proc/timer_list | head -1 | sed 's/^ */ANCHOR-INFO /'
ours=0
[ -f $MODDIR/unwind_deferred.ko ] && case $(uname -r) in 6.12.*) ours=1 ;; esac
# ut.anchor_fp: ours walks with frame pointers only (table_cache_kb 0),
# as upstream does: bench64 has .eh_frame too, which ours otherwise uses.
fp_only=0
grep -q ut.anchor_fp /proc/cmdline && fp_only=1
# The table cache goes with the module: a first walk reads and compiles
# bench64's .eh_frame (about 7 ms, once per file while loaded), here
# before the measurement, whose 0.75 s it would add 0.9 us a sample to.
load_ours() {
	load_core || return 1
	[ $fp_only = 0 ] || echo 0 >/sys/module/unwind_deferred/parameters/table_cache_kb
	$PERF record -q -o /tmp/warm.data -e cpu-clock -c $PERIOD --call-graph fp,defer \
		-- $B anchor 8 user 100 >/dev/null 2>&1
	rm -f /tmp/warm.data
}
if [ $ours = 1 ]; then
	load_ours || { echo "BENCH-FAILED load"; exit 1; }
	echo "ANCHOR-INFO tables $(cat /sys/module/unwind_deferred/parameters/table_cache_kb) KiB"
fi

# one NAME MODE DEPTH KIND UNITS
one() {
	case $2 in
	none|bare)
		$B anchor $3 $4 $5 >/tmp/a.out || return 1
		;;
	*)
		$PERF record -q -B -N -m 4M -o /tmp/a.data -e cpu-clock -c $PERIOD \
			--call-graph $2 -- $B anchor $3 $4 $5 >/tmp/a.out 2>/tmp/a.err ||
			{ sed 's/^/# /' /tmp/a.err; return 1; }
		;;
	esac
	echo "ANCHOR $1 $2 cpu_ns $(sed -n 's/^ANCHOR cpu_ns //p' /tmp/a.out)"
	[ -f /tmp/a.data ] || return 0
	$PERF report -i /tmp/a.data --stats 2>/dev/null | awk -v w=$1 -v m=$2 '
		$2 == "events:" && ($1 == "SAMPLE" || $1 == "CALLCHAIN_DEFERRED" || $1 == "LOST") && !seen[$1]++ {
			print "ANCHOR", w, m, tolower($1), $3
		}'
	rm -f /tmp/a.data
}

r=1
while [ $r -le $ROUNDS ]; do
	echo "ANCHOR-ROUND $r"
	for w in $WORKLOADS; do
		set -- $(echo $w | tr : ' ')
		name=$1 depth=$2 kind=$3 units=$4
		for m in none fp fp,defer; do
			one $name $m $depth $kind $units || echo "BENCH-FAILED $name $m"
		done
		if [ $ours = 1 ]; then
			unload_core || echo "BENCH-FAILED unload"
			one $name bare $depth $kind $units || echo "BENCH-FAILED $name bare"
			load_ours || echo "BENCH-FAILED reload"
		fi
	done
	r=$((r + 1))
done
if [ $ours = 1 ]; then
	unload_core || echo "BENCH-FAILED unload"
	echo "ANCHOR-MICRO"
	. /jobs/bench.sh
fi
