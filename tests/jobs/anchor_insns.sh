# SPDX-License-Identifier: GPL-2.0
# scripts/insn-profile, inside the guest: one anchor workload pinned to
# CPU 1, sampled by Debian's perf (pinned to CPU 0) in one mode, while the
# QEMU plugin counts the instructions CPU 1 executes per translation
# block.  PROFILE is MODE:DEPTH:KIND:UNITS (ut.profile=), or
# walk:DEPTH:fp|sframe|eh|ehcold|ehlibc|ehlibcfn|bigfirst|bignext:0 for the walk alone (unwind_bench's ioctl of
# 201 walks, perf's walks of the same stack too).  Prints the
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
	# ut.anchor_fp (UNWIND_RS_INSN_ARGS): frame pointers only, as in
	# anchor.sh.
	if grep -q ut.anchor_fp /proc/cmdline; then
		echo 0 >/sys/module/unwind_deferred/parameters/table_cache_kb
	fi
fi
grep '\[unwind_deferred\]' /proc/kallsyms | sed 's/^/INSN-KSYM /'
# Let boot's work on CPU 1 settle, then mark where the run starts.
sleep 1
case $mode in
walk)
	# One ioctl of unwind_bench's walks (bench walkprof) in the program
	# KIND names: "per sample" is then per frame of our walk.
	case $kind in
	fp) bin=$B ;;
	sframe) bin=/sframe/v2/bench-sframe ;;
	eh) bin=/sframe/v2/bench-ehframe ;;
	ehcold | ehlibc | ehlibcfn)
		# Copies of trixie's libc and a PIE, their .eh_frame looked
		# up by function (table_compile_kb=0) or compiled whole
		# (ehlibc).  ehcold: no warm-up, one walk of files never
		# walked and one more.
		d=/tmp/cold
		mkdir -p $d
		cp /sframe/v2/ld-linux-x86-64.so.2 /sframe/v2/libc.so.6 /sframe/v2/bench-ehframe-dyn $d/
		ck=0
		[ $kind = ehlibc ] && ck=1048576
		echo $ck >/sys/module/unwind_deferred/parameters/table_compile_kb
		bin="$d/ld-linux-x86-64.so.2 --library-path $d $d/bench-ehframe-dyn"
		;;
	bigfirst | bignext)
		# DEPTH levels of a fresh copy of libehbig.so (16.8 MiB of
		# .eh_frame), dlopen'd (bench walklib): its first walk (the
		# module's ioctl walks twice: cold, then warm) or the next.
		cp /ehframe/libehbig.so /tmp/newbig.so
		bin=/sframe/v2/bench-ehframe-dyn
		;;
	*) echo "BENCH-FAILED walk kind $kind"; bin=false ;;
	esac
	tkb=$(cat /sys/module/unwind_deferred/parameters/table_cache_kb)
	# bench64's frames are the frame-pointer walk's (bench.sh).
	[ $kind = fp ] && echo 0 >/sys/module/unwind_deferred/parameters/table_cache_kb
	insmod $MODDIR/unwind_bench.ko || echo "BENCH-FAILED insmod"
	# The file's tables compiled first, on the other CPU.
	rounds=200
	case $kind in
	ehcold) rounds=1 ;;
	big*) ;;
	*) taskset -c 0 $bin walk $depth >/dev/null || echo "BENCH-FAILED warm-up" ;;
	esac
	case $kind in
	big*) taskset -c 1 $bin walklib $depth /tmp/newbig.so ${kind#big} >/tmp/w.out ;;
	*) taskset -c 1 $bin walkprof $depth $rounds >/tmp/w.out ;;
	esac || echo "BENCH-FAILED walkprof"
	echo $tkb >/sys/module/unwind_deferred/parameters/table_cache_kb
	cat /tmp/w.out
	set -- $(cat /tmp/w.out)
	[ "${1:-}" = WALKPROF ] && echo "INSN-RUN sample $(($3 * $5))"
	;;
none)
	taskset -c 1 $B anchor $depth $kind $units >/tmp/a.out ;;
*)
	taskset -c 0 $PERF record -q -B -N -m 4M -o /tmp/a.data -e cpu-clock \
		-c 100000 --call-graph $mode -- taskset -c 1 $B anchor $depth $kind $units \
		>/tmp/a.out 2>/tmp/a.err || { sed 's/^/# /' /tmp/a.err; echo "BENCH-FAILED record"; }
	;;
esac
[ -f /tmp/a.out ] && echo "INSN-RUN cpu_ns $(sed -n 's/^ANCHOR cpu_ns //p' /tmp/a.out)"
[ -f /tmp/a.data ] && $PERF report -i /tmp/a.data --stats 2>/dev/null | awk '
	$2 == "events:" && ($1 == "SAMPLE" || $1 == "CALLCHAIN_DEFERRED") && !seen[$1]++ {
		print "INSN-RUN", tolower($1), $3
	}'
