# SPDX-License-Identifier: GPL-2.0
# The kselftest-style suite, run inside the guest.  Each t_* function is
# one KTAP test: exit 0 passes, 4 skips, anything else fails.
. "${UNWIND_RS_JOBS:-/jobs}/lib.sh"

U64=$BIN/unwind_chain64
U32=$BIN/unwind_chain32

# --- foundation -----------------------------------------------------

t_module_load() {
	load_core || return 1
	dmesg | grep -q "unwind_deferred: deferred user unwinding ready" ||
		{ diag "no load message"; return 1; }
	[ -d $STATS ] || { diag "no $STATS"; return 1; }
}

t_module_reload_20x() {
	i=0
	while [ $i -lt 20 ]; do
		unload_core || { diag "rmmod failed at $i"; return 1; }
		grep -q '^unwind_deferred ' /proc/modules && { diag "still listed"; return 1; }
		load_core || { diag "insmod failed at $i"; return 1; }
		i=$((i + 1))
	done
}

t_hooks_static_key() {
	insmod $MODDIR/unwind_probe.ko || return 1
	k=/sys/kernel/debug/unwind_probe/hooks_enabled
	r=0
	expect_eq "loaded" "$(cat $k)" 1 || r=1
	expect_eq "registration checks" "$(cat /sys/kernel/debug/unwind_probe/register_checks)" \
		"null=-22 incomplete=-22 busy=-16" || r=1
	unload_core || r=1
	expect_eq "unloaded" "$(cat $k)" 0 || r=1
	load_core || r=1
	expect_eq "reloaded" "$(cat $k)" 1 || r=1
	rmmod unwind_probe || r=1
	return $r
}

# Debugfs errors do not stop the module (kernel policy): with its
# directory name taken it loads, without counters, and still unwinds.
t_module_load_without_debugfs() {
	r=0
	unload_core || return 1
	insmod $MODDIR/unwind_probe.ko squat=unwind_deferred || r=1
	if load_core; then
		[ -e $STATS/walks ] && { diag "counters in the taken directory"; r=1; }
		insmod $MODDIR/unwind_test.ko || r=1
		$U64 chain 8 64 2 >/dev/null || { diag "no unwinding"; r=1; }
		rmmod unwind_test || r=1
		unload_core || r=1
	else
		diag "the module refused to load"
		r=1
	fi
	rmmod unwind_probe || r=1
	load_core || r=1
	return $r
}

t_hooks_fork_exit_free() {
	f0=$(stat fork); e0=$(stat exit); x0=$(stat free)
	i=0
	while [ $i -lt 10 ]; do /bin/true; i=$((i + 1)); done
	# Task structs are freed after an RCU grace period: give it time.
	n=0
	while [ $(( $(stat free) - x0 )) -lt 10 ] && [ $n -lt 50 ]; do
		sleep 0.1; n=$((n + 1))
	done
	r=0
	expect_ge "forks" $(( $(stat fork) - f0 )) 10 || r=1
	expect_ge "exits" $(( $(stat exit) - e0 )) 10 || r=1
	expect_ge "frees" $(( $(stat free) - x0 )) 10 || r=1
	diag "fork +$(( $(stat fork) - f0 )) exit +$(( $(stat exit) - e0 )) free +$(( $(stat free) - x0 ))"
	return $r
}

t_hooks_exit_to_user() {
	insmod $MODDIR/unwind_test.ko || return 1
	x0=$(stat exit_to_user); w0=$(stat walks)
	r=0
	# A faultable unwind marks the entry used; its return to user resets it.
	$U64 chain 8 64 2 >/dev/null || { diag "chain failed"; r=1; }
	expect_eq "walks" $(( $(stat walks) - w0 )) 1 || r=1
	expect_ge "exit_to_user" $(( $(stat exit_to_user) - x0 )) 1 || r=1
	# A syscall that does not unwind does not reach the hook.
	x1=$(stat exit_to_user)
	/bin/true
	expect_eq "exit_to_user without unwind" $(( $(stat exit_to_user) - x1 )) 0 || r=1
	return $r
}

t_ia32_emulation() {
	out=$($U32 abi) || { diag "$out"; return 1; }
	expect_eq "abi" "$out" "ilp32" || return 1
	expect_eq "abi64" "$($U64 abi)" "lp64"
}

# --- unwinder -------------------------------------------------------

# chain DEPTH MAX MODE [thread]
for abi in 64 32; do
	[ $abi = 64 ] && p=fp64 || p=compat
	for d in 1 8 64 600; do
		eval "t_unwind_${p}_depth$d() { \$U$abi chain $d 1024 0; }"
		t_add t_unwind_${p}_depth$d
	done
	eval "t_unwind_${p}_max16() { \$U$abi chain 64 16 0; }"
	eval "t_unwind_${p}_over_max() { \$U$abi chain 1000 512 0; }"
	eval "t_unwind_${p}_thread() { \$U$abi chain 8 64 0 thread; }"
	eval "t_unwind_${p}_thread_depth64() { \$U$abi chain 64 128 0 thread; }"
	eval "t_unwind_${p}_iterate() { \$U$abi chain 64 128 1; }"
	eval "t_unwind_${p}_faultable() { \$U$abi chain 64 128 2; }"
	eval "t_unwind_${p}_faultable_over_cache() { \$U$abi chain 600 1024 2; }"
	eval "t_unwind_${p}_cache_twice() { \$U$abi chain 8 64 3; }"
	eval "t_unwind_${p}_errors() { \$U$abi errors; }"
	for t in max16 over_max thread thread_depth64 iterate faultable \
		 faultable_over_cache cache_twice errors; do
		t_add t_unwind_${p}_$t
	done
	for c in fp_zero self_loop cycle2 misaligned_first misaligned_next \
		 kernel_first kernel_next unmapped prot_none straddle_guard \
		 below_sp deep garbage garbage_pointers; do
		eval "t_unwind_hostile${abi}_$c() { \$U$abi hostile $c; }"
		t_add t_unwind_hostile${abi}_$c
	done
done

# Compat with LDT code and stack segments of different, non-zero bases.
t_unwind_compat_segment_bases() {
	$U32 ldt
}

# The fuzzer's model is the frame-pointer walk: its fake frames sit in a
# program that has .eh_frame rows, which the module would follow instead,
# so the 64-bit run has the tables off (the parameter's new name).
t_unwind_fuzz64() {
	seed=$(( $(date +%s) % 100000 + 1 ))
	p=/sys/module/unwind_deferred/parameters/table_cache_kb
	old=$(cat $p)
	echo 0 >$p
	r=0
	$U64 fuzz 100000 $seed || r=1
	echo $old >$p
	return $r
}

t_unwind_fuzz32() {
	seed=$(( $(date +%s) % 100000 + 7 ))
	$U32 fuzz 100000 $seed
}

# unwind_user() where the caller must not sleep (issue 23, item 4):
# inside a preemptible RCU read side, and with current's mmap lock held,
# it refuses (-EINVAL: the synchronous API may fault) without a table
# step or a mapping lookup (both could sleep, the second deadlock); the
# same call in task context walks with the tables (.eh_frame).
t_unwind_no_tables_where_no_sleep() {
	r=0
	# Whether current holds its mmap lock only lockdep knows (README,
	# "Limits"): without it (a distribution's configuration) mode 5 walks.
	modes="0 4 5"
	[ -e /proc/lockdep ] || { modes="0 4"; diag "no lockdep: mode 5 (mmap lock held) not checked"; }
	for mode in $modes; do
		f0=$(stat ehframe_frames)
		l0=$(stat map_lookups)
		case $mode in
		0) $U64 chain 8 64 0 >/dev/null || { diag "task context: not exact"; r=1; } ;;
		*) $U64 refused $mode || r=1 ;;
		esac
		set -- $(( $(stat ehframe_frames) - f0 )) $(( $(stat map_lookups) - l0 ))
		diag "mode $mode: ehframe_frames +$1, map_lookups +$2"
		case $mode in
		0) expect_ge "table steps in task context" $1 1 || r=1 ;;
		*) expect_eq "mode $mode: table steps" $1 0 || r=1
		   expect_eq "mode $mode: mapping lookups" $2 0 || r=1 ;;
		esac
	done
	return $r
}

t_unwind_walks_counted() {
	# Direct unwind_user() calls do not touch the cache or the counter.
	w0=$(stat walks)
	$U64 chain 8 64 0 >/dev/null || return 1
	expect_eq "walks" $(( $(stat walks) - w0 )) 0
}

# --- deferred -------------------------------------------------------

D64=$BIN/deferred64
D32=$BIN/deferred32

for t in task nmi irq cookie_same cookie_new cookie_cpus cache mask errors \
	 cancel_pending cancel_running exit; do
	eval "t_deferred_$t() { \$D64 $t; }"
	eval "t_deferred_compat_$t() { \$D32 $t; }"
	T_DEFERRED="$T_DEFERRED t_deferred_$t"
	T_DEFERRED_COMPAT="$T_DEFERRED_COMPAT t_deferred_compat_$t"
done

# Cookies never repeat across a reload of the core (issue 23, item 3):
# the per-CPU counters start from the clock, not from 1.  Leaves both
# modules loaded.
t_deferred_cookies_reload() {
	r=0
	for round in 1 2; do
		rmmod unwind_test && unload_core && load_core &&
			insmod $MODDIR/unwind_test.ko || return 1
		$D64 cookies 16 | grep '^[0-9]' >/tmp/cookies$round || r=1
	done
	set -- $(wc -l </tmp/cookies1) $(wc -l </tmp/cookies2) \
		$(sort -n /tmp/cookies1 | tail -1) $(sort -n /tmp/cookies2 | head -1) \
		$(sort /tmp/cookies1 /tmp/cookies2 | uniq -d | wc -l)
	diag "16 cookies on CPU 0 per load: the last before the reload $3, the first after $4"
	expect_eq "cookies before" $1 16 || r=1
	expect_eq "cookies after" $2 16 || r=1
	expect_eq "cookies seen in both loads" $5 0 || r=1
	[ "$4" -gt "$3" ] || { diag "FAIL: a cookie after the reload is below one before"; r=1; }
	rm -f /tmp/cookies1 /tmp/cookies2
	return $r
}

t_deferred_unload_refused() {
	# unwind_test holds registered works: the core must stay.
	rmmod unwind_deferred 2>/dev/null && { diag "core unloaded under a consumer"; return 1; }
	grep -q '^unwind_deferred ' /proc/modules
}

t_deferred_stress() {
	$D64 stress ${STRESS_SECONDS:-5}
}

pending_cancelled() {
	dmesg | sed -n 's/.*unloaded, \([0-9]*\) pending task works cancelled.*/\1/p' |
		awk '{ s += $1 } END { print s + 0 }'
}

# Load/unload cycles while victim tasks sleep in read() with a request
# pending (queued by unwind_test's sys_enter probe at the read() entry).
t_deferred_unload_1000() {
	rmmod unwind_test || return 1
	unload_core || return 1
	before=$(pending_cancelled)
	fifo=/tmp/victims
	rm -f $fifo && mkfifo $fifo || return 1
	$D64 victims 6 $fifo >/dev/null 2>&1
	# 1,000 cycles; 400 on the KASAN kernel, where a cycle takes twice as
	# long (0.45 s in CI beside the other guest and the builds): the
	# debug kernel's 1,000 keep the count of races tried, KASAN checks
	# every access of 400.
	n=${UNLOAD_CYCLES:-1000}
	if [ -z "${UNLOAD_CYCLES:-}" ] && on_kasan; then n=400; fi
	r=0
	# Expedited grace periods: the cycles wait on many (cancel, unregister).
	echo 1 >/sys/kernel/rcu_expedited
	$BIN/modcycle64 $n $MODDIR/unwind_deferred.ko $MODDIR/unwind_test.ko $fifo 6 || r=1
	echo 0 >/sys/kernel/rcu_expedited
	killall ut_victim 2>/dev/null
	pending=$(( $(pending_cancelled) - before ))
	diag "$n cycles, $pending pending task works cancelled at unload"
	expect_ge "pending works cancelled at unload" "$pending" "$n" || r=1
	load_core || r=1
	insmod $MODDIR/unwind_test.ko || r=1
	return $r
}

# --- consumers ------------------------------------------------------

C64=$BIN/consumer64
C32=$BIN/consumer32
TR=/sys/kernel/tracing

core_refs() {
	awk '$1 == "unwind_deferred" { print $3 }' /proc/modules
}

# unwind_ftrace.ko is C only, built against include/: it proves the ABI.
t_consumer_ftrace_pairs() {
	insmod $MODDIR/unwind_ftrace.ko || return 1
	r=0
	echo ut_ftrace >/sys/kernel/debug/unwind_ftrace/comm
	echo >$TR/trace
	echo 1 >$TR/events/unwind_ftrace/enable
	$C64 ftrace || r=1
	echo >$TR/trace
	$C32 ftrace || r=1
	echo 0 >$TR/events/unwind_ftrace/enable
	grep -m 2 unwind_ $TR/trace | sed 's/^/# /'
	return $r
}

t_consumer_perf_samples() {
	insmod $MODDIR/unwind_perf.ko || return 1
	r=0
	$C64 perf_consumer || r=1
	$C32 perf_consumer || r=1
	return $r
}

t_consumer_unload_orders() {
	r=0
	base=$(core_refs)
	rmmod unwind_ftrace && rmmod unwind_perf || r=1
	insmod $MODDIR/unwind_perf.ko && insmod $MODDIR/unwind_ftrace.ko || r=1
	expect_eq "core refs with both consumers" "$(core_refs)" "$base" || r=1
	rmmod unwind_perf && rmmod unwind_ftrace || r=1
	insmod $MODDIR/unwind_ftrace.ko && insmod $MODDIR/unwind_perf.ko || r=1
	rmmod unwind_test || r=1
	insmod $MODDIR/unwind_test.ko || r=1
	rmmod unwind_perf && rmmod unwind_ftrace || r=1
	diag "core refcount: $base with all consumers, $(core_refs) with unwind_test only"
	[ "$(core_refs)" -lt "$base" ] || { diag "refcount did not drop"; r=1; }
	return $r
}

t_consumer_perf_callchain_user() {
	$C64 perf_callchain && $C32 perf_callchain
}

t_consumer_perf_callchain_kthread() {
	$C64 perf_kthread
}

T_CONSUMERS="t_consumer_ftrace_pairs t_consumer_perf_samples \
	t_consumer_unload_orders t_consumer_perf_callchain_user \
	t_consumer_perf_callchain_kthread"

# --- forced races (injection build) ---------------------------------

# Swap in the injection build of unwind_deferred.ko and unwind_race.ko.
race_load() {
	rmmod unwind_test 2>/dev/null
	unload_core || return 1
	insmod $MODDIR/inject/unwind_deferred.ko || return 1
	insmod $MODDIR/unwind_race.ko
}

# Its own status variable: the callers' $r holds their test's result.
race_unload() {
	u=0
	rmmod unwind_race || u=1
	unload_core || u=1
	load_core || u=1
	insmod $MODDIR/unwind_test.ko || u=1
	return $u
}

# NMIs and IRQs fired at every step of request, process and the exit
# reset, alone and in pairs: no cookie-0 callback, exactly one callback
# per (work, cookie) with the trace of the entry the cookie belongs to.
race_protocol() {
	race_load || return 1
	r=0
	$BIN/race$1 || r=1
	race_unload || r=1
	return $r
}
t_race_protocol64() { race_protocol 64; }
t_race_protocol32() { race_protocol 32; }

# A request pending at execve() gets the old program's stack.
t_race_exec64() { $D64 exec; }
t_race_exec32() { $D32 exec; }
# A request pending at a signal's delivery gets the interrupted stack.
t_race_signal64() { $D64 signal; }
t_race_signal32() { $D32 signal; }

# A walk blocked in a userfaultfd fault does not block cancel or rmmod.
t_sec_userfaultfd() {
	r=0
	$BIN/uffd64 || r=1
	grep -q '^unwind_deferred ' /proc/modules || load_core || r=1
	grep -q '^unwind_test ' /proc/modules || insmod $MODDIR/unwind_test.ko || r=1
	return $r
}

# The exec hook's walk never faults (issue 23): an execve() whose frame
# pointer is in a userfaultfd page nobody serves finishes at once, and its
# pending request gets the frames before that page.
t_sec_exec_walk_nofault() { $BIN/uffd64 exec; }

# Compat walks read the LDT with interrupts off: a sibling replacing it
# for 10 s causes no use-after-free, and every trace has an installed base.
t_sec_ldt_race() { $U32 ldt_race 10; }
# Selectors ptrace can load that name no user segment get base 0.
t_sec_segment_bad_descriptor() { $U32 segment_bad; }

# The end of a case with unwind_stall.ko: the core and the test module
# loaded again (a failed reload may have left them out), the stall gone.
stall_case_end() {
	e=0
	grep -q '^unwind_deferred ' /proc/modules || load_core || e=1
	grep -q '^unwind_test ' /proc/modules || insmod $MODDIR/unwind_test.ko || e=1
	rmmod unwind_stall || e=1
	return $e
}

# A task work taken off the queue (unwind_stall.ko blocks in front of it)
# across an unload and reload calls none of the new module's works.
reload_case() {
	insmod $MODDIR/unwind_stall.ko || return 1
	r=0
	$BIN/reload$1 "rmmod unwind_test && rmmod unwind_deferred &&
		insmod $MODDIR/unwind_deferred.ko && insmod $MODDIR/unwind_test.ko" || r=1
	# The stalled task's work was off its queue: unload found none queued.
	last=$(dmesg | grep 'unwind_deferred: unloaded' | tail -1)
	case "$last" in
	*" 0 pending"*) ;;
	*) diag "the task work was still queued: $last"; r=1 ;;
	esac
	stall_case_end || r=1
	return $r
}
t_sec_reload_dequeued64() { reload_case 64; }
t_sec_reload_dequeued32() { reload_case 32; }

# Unload against the trampoline (issue 23): the injection build lets the
# stalled task's dequeued work run (the kernel's trampoline, which finds
# no hooks and clears the mask) between the unload's cancel and its write
# of the mask, which must not put PENDING back: after the reload the
# task's next request gets its callback.
unload_trampoline_case() {
	insmod $MODDIR/unwind_stall.ko || return 1
	r=0
	rmmod unwind_test 2>/dev/null
	unload_core || r=1
	insmod $MODDIR/inject/unwind_deferred.ko || r=1
	insmod $MODDIR/unwind_test.ko || r=1
	n0=$(dmesg | grep -c 'unwind_deferred: inject: a dequeued work ran during unload')
	$BIN/reload$1 "rmmod unwind_test && rmmod unwind_deferred &&
		insmod $MODDIR/unwind_deferred.ko && insmod $MODDIR/unwind_test.ko" || r=1
	n1=$(dmesg | grep -c 'unwind_deferred: inject: a dequeued work ran during unload')
	if [ "$n1" = $((n0 + 1)) ]; then
		diag "$(dmesg | grep 'inject: a dequeued work' | tail -1)"
	else
		diag "the dequeued work did not run inside the unload ($n0 -> $n1)"
		r=1
	fi
	stall_case_end || r=1
	return $r
}
t_race_unload_trampoline64() { unload_trampoline_case 64; }
t_race_unload_trampoline32() { unload_trampoline_case 32; }

# Caches of released tasks at unload (issue 23, defect 2): a thread walked
# by unwind_user_faultable() exits and is reaped while a perf event keeps
# its task_struct, the modules are unloaded, then the event is closed and
# the kernel frees the task alone.  The unload must have freed the
# mappings the thread's cache kept: it counts them, and kmemleak (the
# debug kernel's) finds no object allocated by a module that is gone;
# reports from before the case are counted and cleared first.
KMEMLEAK=/sys/kernel/debug/kmemleak
# Records in $KMEMLEAK with a frame of an unloaded module (no symbol) or
# of one of ours.
kmemleak_ours() {
	awk '/^unreferenced object/ { if (r != "" && ours) print r; r = $0; ours = 0; next }
		{ r = r "\n" $0 }
		/^ +0x[0-9a-f]+$/ || /\[unwind_/ { ours = 1 }
		END { if (r != "" && ours) print r }' $KMEMLEAK
}
# Fails if kmemleak finds an object with a frame of our modules.  New
# tasks first take the cached kernel stacks of exited ones, which clears
# them: a stale pointer there would keep a leaked object referenced.
# kmemleak reports an object unreferenced for 5 s in two scans in a row.
kmemleak_none_ours() {
	for i in 1 2 3 4 5 6 7 8; do /bin/true; done
	sleep 6
	echo scan >$KMEMLEAK
	echo scan >$KMEMLEAK
	leaks=$(kmemleak_ours)
	all=$(grep -c '^unreferenced object' $KMEMLEAK)
	if [ -n "$leaks" ]; then
		diag "kmemleak: $(echo "$leaks" | grep -c '^unreferenced object') objects of our modules leaked ($all reports in all):"
		echo "$leaks" | head -60 | sed 's/^/# /'
		return 1
	fi
	diag "kmemleak: no object of our modules leaked ($all reports in all)"
}
t_sec_unload_released_task() {
	r=0
	if [ -w $KMEMLEAK ]; then
		echo scan >$KMEMLEAK
		echo scan >$KMEMLEAK
		old=$(grep -c '^unreferenced object' $KMEMLEAK)
		[ "$old" = 0 ] || diag "$old kmemleak reports from before, cleared"
		echo clear >$KMEMLEAK
	fi
	$BIN/released64 "rmmod unwind_test && rmmod unwind_deferred" || r=1
	last=$(dmesg | grep 'unwind_deferred: unloaded' | tail -1)
	diag "${last#*] }"
	n=$(echo "$last" | sed -n 's/.* \([0-9]*\) saved mapping sets freed.*/\1/p')
	expect_ge "saved mapping sets freed by the unload" "${n:-0}" 1 || r=1
	if [ -w $KMEMLEAK ]; then
		# Before the reload: a module loaded where the old one was would
		# name its frames.
		kmemleak_none_ours || r=1
	else
		diag "no kmemleak in this kernel (the debug kernel has it): the unload's count only"
	fi
	load_core || r=1
	insmod $MODDIR/unwind_test.ko || r=1
	return $r
}

# unwind_test.ko's exit stops what its ioctls started and nobody stopped
# (issue 32): a stress run (per-CPU hrtimers, an NMI handler, the churn
# kthread) and a busy kthread.  Before the fix they ran on in freed module
# text: the boot died on the first timer, NMI or step of the thread.
t_sec_test_module_exit_stops_work() {
	r=0
	pid=$($D64 leave_running) || { diag "leave_running failed"; return 1; }
	[ -n "$pid" ] && [ -d /proc/$pid ] || { diag "no busy kthread ($pid)"; r=1; }
	grep -q '^ut_churn$' /proc/[0-9]*/comm 2>/dev/null || { diag "no churn kthread"; r=1; }
	# A request the stress run left may pin the module for a moment.
	n=0
	until rmmod unwind_test 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 200 ] || { diag "rmmod unwind_test failed for 2 s"; return 1; }
		sleep 0.01
	done
	# kthread_stop() returned: both threads are gone at once.
	[ -d /proc/$pid ] && { diag "busy kthread $pid still runs after rmmod"; r=1; }
	grep -q '^ut_churn$' /proc/[0-9]*/comm 2>/dev/null &&
		{ diag "churn kthread still runs after rmmod"; r=1; }
	# Time for any timer or NMI left behind to fire (the runner's dmesg
	# check sees the oops, if the boot survives it).
	sleep 1
	insmod $MODDIR/unwind_test.ko || r=1
	return $r
}

# An exit waits on no one (issue 32): the walk of a request pending at
# exit_group() takes no fault and reads no file, so a library on a file
# server that does not answer (FUSE, NFS) cannot hold the exit or pin the
# module.  With the table cache emptied (a reload), a program that never
# walked before requests only at its exit: its exit walk must read no
# table (the counters of every section and function read stay), and still be exact
# (deferred64 has frame pointers; t_deferred_exit's checks).  Not reading
# and not faulting is all there is to wait for: the locks it needs are
# only tried (mmap_read_trylock, mutex_trylock).
t_sec_exit_walk_no_read() {
	r=0
	rmmod unwind_test || return 1
	unload_core || return 1
	load_core || return 1
	insmod $MODDIR/unwind_test.ko || return 1
	reads0=$(( $(stat ehframe_reads) + $(stat sframe_reads) + $(stat fn_tables) + $(stat fn_reads) ))
	lookups0=$(stat map_lookups)
	$D64 exit || r=1
	reads=$(( $(stat ehframe_reads) + $(stat sframe_reads) + $(stat fn_tables) + $(stat fn_reads) - reads0 ))
	diag "exit walk: $reads sections read, $(( $(stat map_lookups) - lookups0 )) mappings looked up"
	expect_eq "sections read by the exit walk" $reads 0 || r=1
	# The same program walked by its task work reads its table: the
	# check above can see a read.
	$D64 task >/dev/null || r=1
	expect_ge "sections read by a task work's walk" \
		$(( $(stat ehframe_reads) + $(stat sframe_reads) + $(stat fn_tables) + $(stat fn_reads) - reads0 )) 1 || r=1
	return $r
}

# ... and only tries the table cache's lock.  With that lock held by a
# kthread (the injection build exports it to unwind_race.ko), a program
# whose tables are cached requests at its exit: the exit walk finds the
# lock taken (table_lock_busy), goes on with frame pointers (exact:
# t_deferred_exit's checks), and unlocks nothing it did not take: the
# guard of a failed try once did, and unlocked the holder's mutex
# ("bad unlock balance", lockdep).  The lock is free again after.
t_sec_exit_walk_lock_busy() {
	r=0
	race_load || return 1
	insmod $MODDIR/unwind_test.ko || r=1
	$D64 task >/dev/null || r=1
	busy0=$(stat table_lock_busy)
	warn0=$(dmesg | grep -c 'bad unlock balance\|DEBUG_LOCKS_WARN_ON')
	echo 1 >/sys/kernel/debug/unwind_race/hold_table_lock || r=1
	$D64 exit || r=1
	echo 0 >/sys/kernel/debug/unwind_race/hold_table_lock || r=1
	busy=$(( $(stat table_lock_busy) - busy0 ))
	diag "exit walk with the table lock held: $busy lookups found it taken"
	expect_ge "lookups that found the table lock taken" $busy 1 || r=1
	warn=$(( $(dmesg | grep -c 'bad unlock balance\|DEBUG_LOCKS_WARN_ON') - warn0 ))
	expect_eq "lock warnings in dmesg" $warn 0 || r=1
	hits0=$(stat table_hits)
	$D64 exit || r=1
	expect_ge "exit walks' table hits with the lock free" \
		$(( $(stat table_hits) - hits0 )) 1 || r=1
	rmmod unwind_test || r=1
	race_unload || r=1
	return $r
}

# io_uring's user workers are refused; the submitting task is not.
t_sec_user_worker64() { $BIN/uworker64; }
t_sec_user_worker32() { $BIN/uworker32; }

T_RACE="t_sec_test_module_exit_stops_work t_sec_exit_walk_no_read t_sec_exit_walk_lock_busy t_sec_user_worker64 t_sec_user_worker32 t_sec_unload_released_task t_sec_userfaultfd t_sec_exec_walk_nofault t_sec_ldt_race t_sec_segment_bad_descriptor t_sec_reload_dequeued64 t_sec_reload_dequeued32 t_race_unload_trampoline64 t_race_unload_trampoline32 t_race_protocol64 t_race_protocol32 t_race_exec64 t_race_exec32 t_race_signal64 t_race_signal32"

# --- teardown -------------------------------------------------------

t_module_unload_all() {
	r=0
	rmmod unwind_test || r=1
	unload_core || r=1
	grep -q '^unwind_' /proc/modules && { diag "modules left: $(grep ^unwind_ /proc/modules)"; r=1; }
	[ -d $STATS ] && { diag "$STATS left behind"; r=1; }
	return $r
}

# Leaks over the whole suite, where kmemleak is (the debug kernel): with
# every module of ours unloaded, no unreferenced object has a frame of
# one of them.
t_module_no_leaks() { kmemleak_none_ours; }

T_FIRST="t_module_load t_module_reload_20x t_hooks_static_key t_module_load_without_debugfs \
	t_hooks_fork_exit_free t_hooks_exit_to_user t_ia32_emulation"
T_UNWIND="$T_NAMES t_unwind_compat_segment_bases t_unwind_fuzz64 t_unwind_fuzz32 \
	t_unwind_walks_counted t_unwind_no_tables_where_no_sleep"
T_DEFERRED_ALL="$T_DEFERRED $T_DEFERRED_COMPAT t_deferred_cookies_reload t_deferred_unload_refused \
	t_deferred_stress"
T_LAST="$T_CONSUMERS t_deferred_unload_1000 t_module_unload_all"
[ -w $KMEMLEAK ] && T_LAST="$T_LAST t_module_no_leaks"
. "${UNWIND_RS_JOBS:-/jobs}/perf_tests.sh"
. "${UNWIND_RS_JOBS:-/jobs}/stress_tests.sh"
. "${UNWIND_RS_JOBS:-/jobs}/sframe_tests.sh"
. "${UNWIND_RS_JOBS:-/jobs}/ehframe_tests.sh"
. "${UNWIND_RS_JOBS:-/jobs}/ehframe_debian.sh"
# The whole job runs the perf group's fuzzer late, after the unload
# cycles: its module reload every second makes a TCG guest translate the
# new text again, and beside a busy host (CI's background builds of the
# packages' kernel, which end before the last tests) its time doubled
# (KASAN: 361 s against 200 s), more than any other test's.
# (The lists hold tabs and newlines: words, not strings, are compared.)
T_NAMES="$T_FIRST $T_UNWIND $T_SFRAME $T_EHFRAME $T_EHDEBIAN $T_DEFERRED_ALL $T_RACE \
	$(for t in $T_PERF; do [ $t = t_fuzz_perf_attrs ] || echo $t; done) $T_STRESS \
	$(for t in $T_LAST; do [ $t = t_module_unload_all ] && echo t_fuzz_perf_attrs; echo $t; done)"

# ut.only=REGEX on the kernel command line: just those tests (developing).
t_load_test() {
	insmod $MODDIR/unwind_test.ko
}
if [ -n "${ONLY:-}" ]; then
	T_NAMES="t_module_load t_load_test $(for t in $T_NAMES; do echo $t; done |
		grep -E "$ONLY" | grep -v -x -e t_module_load -e t_hooks_exit_to_user)"
fi

# UNWIND_RS_GROUP=NAME: one group, for the kselftest programs
# (tests/selftests/unwind_deferred/), each runnable on its own.
t_clean_slate() {
	for m in unwind_race unwind_bench unwind_perf unwind_ftrace unwind_test unwind_deferred unwind_stall; do
		grep -q "^$m " /proc/modules && { rmmod $m || return 1; }
	done
	return 0
}
t_loaded() {
	grep -q '^unwind_deferred ' /proc/modules || load_core || return 1
	grep -q '^unwind_test ' /proc/modules || insmod $MODDIR/unwind_test.ko
}
case "${UNWIND_RS_GROUP:-}" in
"") ;;
foundation) T_NAMES="t_clean_slate $T_FIRST" ;;
unwind) T_NAMES="t_loaded $T_UNWIND" ;;
deferred) T_NAMES="t_loaded $T_DEFERRED_ALL" ;;
hardening) T_NAMES="t_loaded $T_RACE" ;;
consumers) T_NAMES="t_loaded $T_LAST" ;;
perf) T_NAMES="t_loaded $T_PERF" ;;
sframe) T_NAMES="t_loaded $T_SFRAME" ;;
ehframe) T_NAMES="t_loaded $T_EHFRAME $T_EHDEBIAN" ;;
stress) T_NAMES="t_loaded $T_STRESS" ;;
*) echo "unknown group $UNWIND_RS_GROUP" >&2; exit 1 ;;
esac
t_run_all
