# SPDX-License-Identifier: GPL-2.0
# scripts/bench, inside the guest: every measurement, ROUNDS times.
. /jobs/lib.sh
B=/bin/bench64
SFB=/sframe/v2/bench-sframe
EHB=/sframe/v2/bench-ehframe
EHD=/ehframe
ROUNDS=${BENCH_ROUNDS:-5}
echo 1024 >/proc/sys/kernel/perf_event_max_stack
grep -h hres_active /proc/timer_list | head -1 | sed 's/^ */BENCH-INFO /'
load_mods() {
	load_core && insmod $MODDIR/unwind_bench.ko && insmod $MODDIR/unwind_perf.ko
}
unload_mods() {
	rmmod unwind_perf && rmmod unwind_bench && unload_core
}
# The same first walk by the file's size, made the same way for any
# shared object (bench walkfn): a fresh copy mapped as ld.so maps it (none
# of its code runs) and one frame of it, the first instruction of the
# middle function of its .eh_frame_hdr index.  libc (150 KiB of
# .eh_frame), libehbig.so (16.8 MiB) and, where scripts/bench put it in
# the initramfs, Debian 13's libLLVM.so.19.1 (6 MiB).
first_walks_by_file() {
	if [ -x $EHB-dyn ]; then
		for f in libc:/sframe/v2/libc.so.6 big:$EHD/libehbig.so llvm:/llvm/libLLVM.so.19.1; do
			[ -f ${f#*:} ] || continue
			cp ${f#*:} /tmp/fn$r.so
			if $EHB-dyn walkfn /tmp/fn$r.so >/tmp/fn.out; then
				sed "s/^BENCH walkfn/BENCH fn${f%%:*}/" /tmp/fn.out
			else
				echo "BENCH-FAILED walkfn ${f%%:*}"
			fi
			rm -f /tmp/fn$r.so /tmp/fn.out
		done
	fi
}

load_mods || { echo "BENCH-FAILED load"; exit 1; }
TP=/sys/module/unwind_deferred/parameters/table_cache_kb
TKB=$(cat $TP)
# ut.only=walkfn: only the first walks by the file's size, ROUNDS times.
if [ "${ONLY:-}" = walkfn ]; then
	r=1
	while [ $r -le $ROUNDS ]; do
		echo "BENCH-ROUND $r"
		first_walks_by_file
		r=$((r + 1))
	done
	unload_mods
	exit 0
fi
r=1
while [ $r -le $ROUNDS ]; do
	echo "BENCH-ROUND $r"
	# bench64 has frame pointers and .eh_frame: its rows are the
	# frame-pointer walk's, so the tables are off for them (on only for
	# the SFrame, .eh_frame and xz rows).
	echo 0 >$TP
	for d in 8 64 256; do
		$B walk $d || echo "BENCH-FAILED walk $d"
		$B irq $d || echo "BENCH-FAILED irq $d"
	done
	echo $TKB >$TP
	# The same walks in bench.c built without frame pointers, with
	# SFrame v2 (scripts/build-sframe-progs), and the first walk of a
	# copy never walked: discovery, read and validation of its section.
	if [ -x $SFB ]; then
		for d in 8 64 256; do
			$SFB walk $d | sed 's/^BENCH walk/BENCH sfwalk/' || echo "BENCH-FAILED sfwalk $d"
		done
		cp $SFB /tmp/sfb$r
		/tmp/sfb$r walkcold 64 | sed 's/^BENCH walk/BENCH sfwalk/' || echo "BENCH-FAILED sfcold"
		rm -f /tmp/sfb$r
	fi
	# The same with .eh_frame only: the walk, and the first walk of a
	# copy (read and compile its .eh_frame, about 40 KiB in a static
	# glibc program).
	if [ -x $EHB ]; then
		for d in 8 64 256; do
			$EHB walk $d | sed 's/^BENCH walk/BENCH ehwalk/' || echo "BENCH-FAILED ehwalk $d"
		done
		cp $EHB /tmp/ehb$r
		/tmp/ehb$r walkcold 64 | sed 's/^BENCH walk/BENCH ehwalk/' || echo "BENCH-FAILED ehcold"
		rm -f /tmp/ehb$r
		# The first walk through copies of libc (trixie's, 150 KiB of
		# .eh_frame) and a small PIE: both read and compiled whole.
		CK=/sys/module/unwind_deferred/parameters/table_compile_kb
		CKB=$(cat $CK)
		echo 1048576 >$CK
		d=/tmp/lc$r
		mkdir -p $d
		cp /sframe/v2/ld-linux-x86-64.so.2 /sframe/v2/libc.so.6 $EHB-dyn $d/
		$d/ld-linux-x86-64.so.2 --library-path $d $d/bench-ehframe-dyn walkcold 64 |
			sed 's/^BENCH walk/BENCH ehlibc/' || echo "BENCH-FAILED ehlibc"
		rm -rf $d
		# The same with every .eh_frame looked up by function
		# (table_compile_kb=0, the default): the first walk reads only
		# the functions it meets.
		echo 0 >$CK
		mkdir -p $d
		cp /sframe/v2/ld-linux-x86-64.so.2 /sframe/v2/libc.so.6 $EHB-dyn $d/
		$d/ld-linux-x86-64.so.2 --library-path $d $d/bench-ehframe-dyn walkcold 64 |
			sed 's/^BENCH walk/BENCH ehlibcfn/' || echo "BENCH-FAILED ehlibcfn"
		rm -rf $d
		echo $CKB >$CK
	fi
	# The first walk through functions never seen, in a file never seen,
	# by the file's size: fresh copies of libehlink.so (1 KiB of
	# .eh_frame), libehsmall.so (2 KiB: 16 of libehbig's functions) and
	# libehbig.so (16.8 MiB), dlopen'd by the dynamic bench after it
	# walked itself, libc and ld.so; the walk's syscall the first time
	# less the next (depth 1 and 64 in the library).
	if [ -f $EHD/libehbig.so ] && [ -x $EHB-dyn ]; then
		for f in link small big; do
			for d in 1 64; do
				cp $EHD/libeh$f.so /tmp/new$r.so
				$EHB-dyn walklib $d /tmp/new$r.so |
					sed "s/^BENCH walklib/BENCH lib${f}/" || echo "BENCH-FAILED walklib $f $d"
				rm -f /tmp/new$r.so
			done
		done
	fi
	first_walks_by_file
	# Debian's xz under Debian's perf: the whole cost of a sample with
	# fp,defer (the module's .eh_frame walk) against dwarf (8 KiB of
	# stack copied into every sample), per sample, from xz's run time.
	if [ -x /usr/bin/xz ] && [ -x /usr/bin/perf ]; then
		cat /usr/bin/perf /usr/bin/perl | head -c 3000000 >/tmp/xzin
		$B time xz_none /usr/bin/xz -6 -T1 -k -f /tmp/xzin
		for m in fp,defer dwarf; do
			k=$(echo $m | tr -d ,)
			$B time xz_$k /usr/bin/perf record -o /tmp/xz.data -e cpu-clock -F 2000 \
				--call-graph $m -- /usr/bin/xz -6 -T1 -k -f /tmp/xzin 2>/tmp/xz.err
			n=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' /tmp/xz.err)
			echo "BENCH xz_${k}_samples ${n:-0}"
			echo "BENCH xz_${k}_bytes $(wc -c </tmp/xz.data)"
		done
		rm -f /tmp/xzin /tmp/xzin.xz /tmp/xz.data /tmp/xz.err
	fi
	echo 0 >$TP
	$B cache 4 16 64 || echo "BENCH-FAILED cache"
	for m in none perf deferred; do
		$B workload $m || echo "BENCH-FAILED workload $m"
	done
	$B getpid 100000 | sed 's/getpid_ns/getpid_loaded_ns/'
	unload_mods || echo "BENCH-FAILED unload"
	$B getpid 100000 | sed 's/getpid_ns/getpid_unloaded_ns/'
	load_mods || echo "BENCH-FAILED reload"
	r=$((r + 1))
done
unload_mods
