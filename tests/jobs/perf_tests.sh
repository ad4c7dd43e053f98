# SPDX-License-Identifier: GPL-2.0
# Real clients: Debian's own perf (trixie-backports, 7.3) and trace-cmd,
# unmodified, on our kernel.  Sourced by tests.sh; each t_* is one test.
#
# The workload (user/perf_work.c) has a known user stack: main (or a
# thread's start routine) -> outer -> probed -> recurse x (DEPTH + 1) ->
# leaf.  A sample whose merged callchain shows leaf is "complete" when
# every one of those frames is there; one recurse short with leaf as the
# first user frame is a sample in leaf's prologue or epilogue, where a
# frame-pointer walk misses the caller ("edge", at most 1%).  A deferred
# sample whose record
# never came shows "(cookie)".  A uretprobe's trampoline ([uprobes]) may
# be a sample's first user frame (the IP), never a return address.

PERF=${UNWIND_RS_PERF:-/usr/bin/perf}
TRACE_CMD=${UNWIND_RS_TRACE_CMD:-/usr/bin/trace-cmd}
PW64=$BIN/perf_work64
PW32=$BIN/perf_work32
PD=/tmp/perf

# perf_rec OUT CALLGRAPH CMD...: a cpu-clock sampling session of CMD.
perf_rec() {
	pr_out=$1
	pr_cg=$2
	shift 2
	mkdir -p $PD
	if ! $PERF record -q -B -N ${PERF_REC_OPTS:-} -o $pr_out -e cpu-clock -c ${PERF_PERIOD:-500000} \
		--call-graph $pr_cg -- "$@" >$pr_out.log 2>&1; then
		diag "perf record --call-graph $pr_cg failed:"
		sed 's/^/#   /' $pr_out.log | tail -5
		return 1
	fi
}

# The leaf tests' sample period (1 ms of CPU time): a sample in the
# return to user space asks for one more task work in the same entry, so
# at a period near a task work's cost (KASAN on a loaded TCG host: 34% of
# the samples at 500 us) the task work feeds itself.
LEAF_PERIOD=1000000

# leaf_chains FILE COMM LEAF [BAD]: Debian's perf on a program whose
# stacks are LEAF (an awk regex of the leaf's names), 16 x chain, run,
# main: "samples leafy complete inwork" of COMM's samples in FILE (leafy:
# in LEAF; complete: with the whole stack below it); the first 4
# incomplete stacks go to the file BAD.  A sample taken in the return to
# user space once it runs the task work (task_work_run: the walk, perf's
# callbacks; the loop around it: local_irq_*_exit_to_user) is counted
# apart (inwork), not as leafy: once perf's three works have written
# their records for this entry, perf walks such a sample with frame
# pointers itself (Documentation/design.md, "A sample after the record"),
# and a slow guest (KASAN, a loaded TCG host) takes more of them.
leaf_chains() {
	$PERF script -i $1 --no-inline -F comm,ip,sym 2>/dev/null |
		awk -v comm=$2 -v want="^($3)\$" -v badf=${4:-/dev/null} '
	BEGIN { RS = ""; FS = "\n" }
	{
		split($1, h, " ")
		if (h[1] != comm)
			next
		samples++
		leaf = ch = run = main = work = 0
		for (i = 2; i <= NF; i++) {
			split($i, f, " ")
			if (f[2] == "task_work_run" || f[2] ~ /_exit_to_user$/) work = 1
			else if (f[2] ~ want) leaf = 1
			else if (f[2] == "chain") ch++
			else if (f[2] == "run") run = 1
			else if (f[2] == "main") main = 1
		}
		if (!leaf)
			next
		if (work) {
			inwork++
			next
		}
		leafy++
		if (ch == 16 && run && main)
			complete++
		else if (bad++ < 4)
			print $0 > badf
	}
	END { print samples + 0, leafy + 0, complete + 0, inwork + 0 }'
}

# perf_rec_bg OUT: a 3 s fp,defer session of perf_work64 in the
# background ($pid), returning 1 s into the workload (perf takes a while
# to start under TCG).
perf_rec_bg() {
	perf_rec $1 fp,defer $PW64 16 mixed 3000 &
	pid=$!
	n=0
	until pidof perf_work64 >/dev/null || [ $n -ge 600 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	sleep 1
}

# perf_chains FILE DEPTH COMM: "samples leafy complete cookies tramps edge
# kern" of COMM's samples, from perf script's merged callchains (kern: leafy
# samples taken in the kernel, with kernel frames before the user ones).
perf_chains() {
	$PERF script -i $1 --no-inline -F comm,ip,sym,dso 2>/dev/null | awk -v depth=$2 -v comm=$3 '
	BEGIN { RS = ""; FS = "\n" }
	{
		split($1, h, " ")
		if (h[1] != comm)
			next
		samples++
		leaf = rec = outer = main = user = kframes = 0
		first = ""
		for (i = 2; i <= NF; i++) {
			split($i, f, " ")
			if (f[2] == "leaf") leaf = 1
			else if (f[2] == "recurse") rec++
			else if (f[2] == "outer") outer = 1
			else if (f[2] == "main" || f[2] == "thread") main = 1
			if ($i ~ /\(cookie\)/) cookies++
			if (f[1] ~ /^ffff/) {
				kframes++
				continue
			}
			if (!user++)
				first = f[2]
			else if ($i ~ /\[uprobes\]/)
				tramps++
		}
		if (!leaf)
			next
		leafy++
		if (kframes)
			kern++
		if (rec == depth + 1 && outer && main)
			complete++
		else if (first == "leaf" && rec == depth && outer && main)
			edge++
	}
	END { print samples + 0, leafy + 0, complete + edge, cookies + 0, tramps + 0, edge + 0, kern + 0 }'
}

# perf_deferred FILE: "records samples_with_cookie max_ips" in FILE, from
# the unmerged view (one DEFERRED CALLCHAIN block per record).
perf_deferred() {
	$PERF script -i $1 --no-merge-callchains --no-inline --max-stack 100000 -F comm,ip,sym 2>/dev/null |
	awk 'BEGIN { RS = ""; FS = "\n" }
	/DEFERRED CALLCHAIN/ { records++; if (NF - 1 > max) max = NF - 1; next }
	/\(cookie\)/ { cookies++ }
	END { print records + 0, cookies + 0, max + 0 }'
}

# perf_check LABEL FILE DEPTH COMM MODE: MODE "defer" wants records and
# every sample merged; "sync" wants no record.  Every leafy sample must
# be complete either way.
perf_check() {
	set -- "$@" $(perf_chains $2 $3 $4) $(perf_deferred $2)
	pc_label=$1 pc_mode=$5 samples=$6 leafy=$7 complete=$8 cookies=$9
	shift 9
	tramps=$1 edge=$2 kern=$3 records=$4 cookie_samples=$5
	diag "$pc_label: $samples samples, $complete of $leafy leafy complete ($edge in" \
		"leaf's prologue or epilogue, $kern in the kernel), $records deferred records," \
		"$cookie_samples deferred samples, $cookies unmerged"
	pc_r=0
	expect_ge "$pc_label: leafy samples" $leafy 20 || pc_r=1
	expect_eq "$pc_label: complete stacks" $complete $leafy || pc_r=1
	expect_ge "$pc_label: 1% of the leafy samples, against the edge ones" \
		$((leafy / 100)) $edge || pc_r=1
	expect_eq "$pc_label: uretprobe trampolines" $tramps 0 || pc_r=1
	case $pc_mode in
	defer)
		expect_ge "$pc_label: deferred records" $records 1 || pc_r=1
		expect_ge "$pc_label: deferred samples" $cookie_samples $((samples * 9 / 10)) || pc_r=1
		# A sample taken once the entry's record is written or being
		# written asks perf's next work (its request is "taken"), whose
		# record comes after it: every deferred sample is merged.
		expect_eq "$pc_label: unmerged samples" $cookies 0 || pc_r=1 ;;
	sync)
		expect_eq "$pc_label: deferred records" $records 0 || pc_r=1
		expect_eq "$pc_label: deferred samples" $cookie_samples 0 || pc_r=1 ;;
	esac
	return $pc_r
}

perf_ready() {
	[ -x $PERF ] || { diag "SKIP: no perf at $PERF"; return 4; }
	$PERF version >/dev/null 2>&1 || { diag "SKIP: $PERF does not run"; return 4; }
}

# Debian's perf on a 64-bit and a 32-bit program: deferred callchains
# from the module, complete after merging, as complete as synchronous.
perf_defer_abi() {
	perf_ready || return
	pd_prog=$1
	pd_comm=$(basename $pd_prog)
	r=0
	perf_rec $PD/sync.data fp $pd_prog 16 mixed 1500 || return 1
	perf_check "sync" $PD/sync.data 16 $pd_comm sync || r=1
	perf_rec $PD/defer.data fp,defer $pd_prog 16 mixed 1500 || return 1
	perf_check "defer" $PD/defer.data 16 $pd_comm defer || r=1
	# Samples in syscalls: kernel frames, then the deferred user stack
	# ($kern, set by perf_check).
	expect_ge "leafy samples taken in the kernel" $kern 10 || r=1
	# perf report's call graph, built from the merged stacks.
	$PERF report -i $PD/defer.data --stdio -g --no-children --no-inline \
		--comms $pd_comm 2>/dev/null >$PD/report.txt
	for fn in leaf recurse probed outer main; do
		grep -qw "$fn" $PD/report.txt || { diag "perf report -g lacks $fn"; r=1; }
	done
	grep -m 12 -E "leaf|recurse|main" $PD/report.txt | sed 's/^/# /'
	rm -f $PD/*.data $PD/report.txt
	return $r
}

t_perf_defer64() {
	perf_defer_abi $PW64
}

t_perf_defer32() {
	perf_defer_abi $PW32
}

# Without the module the kernel still accepts fp,defer, and every sample
# keeps a synchronous user callchain.
t_perf_defer_without_module() {
	perf_ready || return
	t_clean_slate || return 1
	r=0
	perf_rec $PD/nomod.data fp,defer $PW64 16 mixed 1000 || r=1
	[ $r = 0 ] && { perf_check "no module" $PD/nomod.data 16 perf_work64 sync || r=1; }
	t_loaded || r=1
	rm -f $PD/*.data
	return $r
}

# perf_unload_case NAME KO [PARAM]: a fp,defer session during which the
# module (KO, loaded with PARAM) is unloaded.  Allowed (perf holds no
# reference): the session degrades to synchronous callchains, every
# stack complete, and only the entries in flight at the unload lose
# their user part.
perf_unload_case() {
	perf_ready || return
	t_clean_slate || return 1
	insmod $2 ${3:-} || return 1
	r=0
	pu=$1
	perf_rec_bg $PD/$pu.data
	# A hook that is running pins the module for its duration: retry.
	tries=0
	until rmmod unwind_deferred 2>/dev/null; do
		tries=$((tries + 1))
		[ $tries -lt 100 ] || { diag "rmmod during the session failed 100 times"; r=1; break; }
		sleep 0.05
	done
	diag "unloaded during the session after $tries busy retries"
	wait $pid || r=1
	set -- $(perf_chains $PD/$pu.data 16 perf_work64) $(perf_deferred $PD/$pu.data)
	diag "$pu: $1 samples, $3 of $2 leafy complete, $8 records, $9 deferred samples, $4 unmerged"
	expect_ge "deferred records before the unload" $8 1 || r=1
	expect_ge "1% of the leafy samples, against the edge ones" $(($2 / 100)) $6 || r=1
	expect_eq "complete stacks" $3 $2 || r=1
	expect_ge "leafy samples" $2 20 || r=1
	expect_ge "unmerged samples <= 2" 2 $4 || r=1
	t_loaded || r=1
	rm -f $PD/*.data
	return $r
}
t_perf_defer_unload() { perf_unload_case unload $MODDIR/unwind_deferred.ko; }
# From rmmod's start (the module GOING) to its exit, perf's requests are
# refused and their samples walked synchronously: the kernel's task work
# can no longer pin the module and would drop a request taken then, with
# its sample's user part.  The injection build holds that window open
# for a second (inject_going_ms), every hook still in place, and says
# what came in meanwhile: perf's requests refused, none taken.
t_perf_defer_going() {
	n0=$(dmesg | grep -c 'inject: while going:')
	perf_unload_case going $MODDIR/inject/unwind_deferred.ko inject_going_ms=1000 || r=1
	line=$(dmesg | grep 'inject: while going:' | tail -1)
	[ "$(dmesg | grep -c 'inject: while going:')" = $((n0 + 1)) ] || { diag "no report of the window"; return 1; }
	diag "${line#*inject: }"
	set -- $(echo "${line#*while going: }" | tr -dc '0-9 ')
	expect_ge "perf requests refused while going" "${1:-0}" 1 || r=1
	expect_eq "requests taken while going" "${2:--1}" 0 || r=1
	return $r
}

# Threads that exit right after their work: their last samples' records
# are written by the exit hook, before perf detaches the task's events.
t_perf_defer_exiting_threads() {
	perf_ready || return
	r=0
	perf_rec $PD/threads.data fp,defer $PW64 8 sys 30 40 || return 1
	perf_check "threads" $PD/threads.data 8 perf_work64 defer || r=1
	set -- $(perf_chains $PD/threads.data 8 perf_work64)
	expect_eq "unmerged samples" $4 0 || r=1
	rm -f $PD/*.data
	return $r
}

# The module loaded in the middle of a session: deferral starts.
t_perf_defer_module_loaded_during() {
	perf_ready || return
	t_clean_slate || return 1
	r=0
	perf_rec_bg $PD/late.data
	load_core || r=1
	wait $pid || r=1
	set -- $(perf_chains $PD/late.data 16 perf_work64) $(perf_deferred $PD/late.data)
	diag "loaded during: $1 samples, $3 of $2 leafy complete, $8 records, $9 deferred samples, $4 unmerged"
	expect_ge "deferred samples after the load" $9 1 || r=1
	expect_ge "synchronous samples before it" $(($1 - $9)) 1 || r=1
	expect_eq "complete stacks" $3 $2 || r=1
	expect_ge "leafy samples" $2 20 || r=1
	expect_eq "unmerged samples" $4 0 || r=1
	insmod $MODDIR/unwind_test.ko || r=1
	rm -f $PD/*.data
	return $r
}

# System wide (-a): several processes, 64- and 32-bit, threads, both CPUs.
t_perf_defer_system_wide() {
	perf_ready || return
	r=0
	PERF_REC_OPTS=-a perf_rec $PD/sys.data fp,defer sh -c \
		"$PW64 16 mixed 800 & $PW32 16 mixed 800 & $PW64 16 sys 40 10 & wait" || return 1
	for comm in perf_work64 perf_work32; do
		set -- $(perf_chains $PD/sys.data 16 $comm)
		diag "$comm: $1 samples, $3 of $2 leafy complete, $4 unmerged"
		expect_ge "$comm leafy samples" $2 20 || r=1
		expect_eq "$comm complete stacks" $3 $2 || r=1
		expect_eq "$comm: unmerged samples" $4 0 || r=1
	done
	set -- $(perf_deferred $PD/sys.data)
	diag "system wide: $1 records, $2 deferred samples"
	expect_ge "records" $1 1 || r=1
	cpus=$($PERF script -i $PD/sys.data -F comm,cpu 2>/dev/null | awk '$1 ~ /perf_work/ { print $2 }' | sort -u | wc -l)
	expect_ge "CPUs with samples of the workload" $cpus 2 || r=1
	rm -f $PD/*.data
	return $r
}

# kernel.perf_event_max_stack caps the deferred record as it caps a
# synchronous callchain (Linux 7.3 ignores it).
t_perf_defer_max_stack() {
	perf_ready || return
	ms=/proc/sys/kernel/perf_event_max_stack
	old=$(cat $ms)
	r=0
	echo 24 >$ms || return 1
	perf_rec $PD/max.data fp,defer $PW64 64 sys 800 || r=1
	echo $old >$ms
	[ $r = 0 ] || return 1
	set -- $(perf_deferred $PD/max.data)
	diag "max_stack 24: $1 records, longest $3 entries"
	expect_ge "records" $1 1 || r=1
	expect_eq "longest deferred record" $3 24 || r=1
	rm -f $PD/*.data
	return $r
}

# A pending uretprobe puts its trampoline on the stack; the deferred
# record shows the real return address, as a synchronous callchain does.
t_perf_defer_uretprobe() {
	perf_ready || return
	ue=$TR/uprobe_events
	[ -w $ue ] || { diag "SKIP: no $ue (CONFIG_UPROBE_EVENTS)"; return 4; }
	off=$($PW64 offset probed) || return 1
	echo "r:unwind_rs_probed $PW64:$off" >>$ue || return 1
	r=0
	echo 1 >$TR/events/uprobes/unwind_rs_probed/enable || r=1
	perf_rec $PD/uret.data fp,defer $PW64 8 sys 1000 || r=1
	perf_rec $PD/uret_sync.data fp $PW64 8 sys 1000 || r=1
	echo 0 >$TR/events/uprobes/unwind_rs_probed/enable
	hits=$(grep -c unwind_rs_probed $TR/trace 2>/dev/null)
	echo "-:unwind_rs_probed" >>$ue
	echo >$TR/trace
	[ $r = 0 ] || return 1
	expect_ge "uretprobe hits" "${hits:-0}" 1 || r=1
	perf_check "uretprobe sync" $PD/uret_sync.data 8 perf_work64 sync || r=1
	perf_check "uretprobe defer" $PD/uret.data 8 perf_work64 defer || r=1
	rm -f $PD/*.data
	return $r
}

# perf_event_open() fuzzing of the deferred-callchain attributes (issue
# 23, item 6; tests/user/perf_fuzz.c): random groups of software events
# with defer_callchain/defer_output and everything around them, per task
# and per CPU, children that fork, exec, signal and exit, every ring
# buffer record checked; the core is unloaded and loaded again every
# second under it.  ut.fuzz_seed= and ut.fuzz_events= on the kernel
# command line replay a run.  Leaves both modules loaded.
# FUZZ_MODE (ut.fuzz_mode, scripts/soak): "full" (the default), "reloads"
# (no fuzzer: forks and perf sessions beside the reloads, as long as the
# fuzzer would run) or "fuzz" (no reloads); any mode but the default also
# logs the module's .text base at every load, to match a crash address.
soak_text() {
	[ -z "${FUZZ_MODE:-}" ] ||
		diag "soak: load $1 text $(cat /sys/module/unwind_deferred/sections/.text 2>/dev/null)"
}
t_fuzz_perf_attrs() {
	r=0
	seed=${FUZZ_SEED:-$(date +%s)}
	mode=${FUZZ_MODE:-full}
	rm -f /tmp/fuzz.done /tmp/fuzz.reloads
	soak_text 0
	(
		n=0
		while [ ! -e /tmp/fuzz.done ]; do
			sleep 1
			[ $mode = fuzz ] && continue
			grep -q '^unwind_test ' /proc/modules && rmmod unwind_test
			i=0
			until rmmod unwind_deferred 2>/dev/null; do
				i=$((i + 1))
				[ $i -ge 200 ] && break
				sleep 0.01
			done
			grep -q '^unwind_deferred ' /proc/modules || { load_core && n=$((n + 1)) && soak_text $n; }
			insmod $MODDIR/unwind_test.ko
		done
		echo $n >/tmp/fuzz.reloads
	) &
	lp=$!
	# 100,000 events on the KASAN kernel (CI), 20,000 on the others.
	events=20000
	! on_kasan || events=100000
	if [ $mode = reloads ]; then
		# What the fuzzer's run would take, in perf sessions and forks.
		end=$(( $(date +%s) + ${FUZZ_EVENTS:-$events} / 200 ))
		while [ $(date +%s) -lt $end ]; do
			$PERF record -q -o /tmp/fuzz.data -e cpu-clock -c 500000 --call-graph fp,defer -- \
				sh -c 'for i in 1 2 3 4 5 6 7 8; do /bin/true; done; '$PW64' 8 mixed 200' \
				>/dev/null 2>&1 || true
		done
		rm -f /tmp/fuzz.data
		echo "reloads only: perf sessions for $(( ${FUZZ_EVENTS:-$events} / 200 )) s" >/tmp/fuzz.out
	else
		$BIN/perf_fuzz64 $seed ${FUZZ_EVENTS:-$events} >/tmp/fuzz.out 2>&1 || r=1
	fi
	touch /tmp/fuzz.done
	wait $lp
	cat /tmp/fuzz.out
	diag "seed $seed, mode $mode: the core reloaded $(cat /tmp/fuzz.reloads 2>/dev/null) times under it"
	[ $mode = fuzz ] ||
		expect_ge "reloads under the fuzzer" "$(cat /tmp/fuzz.reloads 2>/dev/null || echo 0)" 1 || r=1
	grep -q '^unwind_deferred ' /proc/modules || load_core || r=1
	grep -q '^unwind_test ' /proc/modules || insmod $MODDIR/unwind_test.ko || r=1
	rm -f /tmp/fuzz.done /tmp/fuzz.reloads /tmp/fuzz.out
	return $r
}

# trace-cmd records the ftrace consumer's events; each request's cookie
# comes back with a stack in trace-cmd's report.
t_trace_cmd_events() {
	[ -x $TRACE_CMD ] || { diag "SKIP: no trace-cmd at $TRACE_CMD"; return 4; }
	insmod $MODDIR/unwind_ftrace.ko || return 1
	echo ut_ftrace >/sys/kernel/debug/unwind_ftrace/comm
	r=0
	mkdir -p $PD
	for prog in $C64 $C32; do
		$TRACE_CMD record -q -o $PD/trace.dat -e unwind_ftrace $prog ftrace_run \
			>$PD/tc.log 2>&1 || { diag "trace-cmd record failed"; tail -5 $PD/tc.log; r=1; }
		$TRACE_CMD report -i $PD/trace.dat 2>/dev/null >$PD/report.txt
		set -- $(awk '
			/unwind_request:/ { for (i = 1; i <= NF; i++) if ($i ~ /^cookie=/) req[$i] = 1; nreq++ }
			/unwind_stack:/ { for (i = 1; i <= NF; i++) { if ($i ~ /^cookie=/) c = $i; if ($i ~ /^nr=/) n = substr($i, 4) }
				stk[c] = n; nstk++ }
			END { for (c in req) { if (!(c in stk)) miss++; else if (stk[c] + 0 >= 5) deep++ }
				print nreq + 0, nstk + 0, miss + 0, deep + 0 }' $PD/report.txt)
		diag "$(basename $prog): $1 requests, $2 stacks, $3 without a stack, $4 of 5 frames or more"
		grep unwind_stack: $PD/report.txt | cut -c1-150 | sed 's/^/# /'
		expect_ge "requests" $1 3 || r=1
		expect_eq "requests without a stack" $3 0 || r=1
		# The three syscalls in chain_leaf <- chain_b <- chain_a <- main.
		expect_ge "stacks of 5 frames or more" $4 3 || r=1
	done
	echo >/sys/kernel/debug/unwind_ftrace/comm
	rmmod unwind_ftrace || r=1
	rm -f $PD/trace.dat $PD/report.txt
	return $r
}

# The last three unload the core and end with it and unwind_test loaded.
# perf's own kind of test (tests/jobs/perf/record_fp_defer.sh, written
# for tools/perf/tests/shell/), run as perf's suite runs it: exit 0
# passes, 2 is a skip (a failure here: the guest has what it needs).
t_perf_shell_record_fp_defer() {
	perf_ready || return
	t_loaded || return 1
	r=0
	/usr/bin/bash "${UNWIND_RS_JOBS:-/jobs}/perf/record_fp_defer.sh" >/tmp/pshell.out 2>&1 || r=$?
	sed 's/^/# /' /tmp/pshell.out
	rm -f /tmp/pshell.out
	return $r
}

T_PERF="t_perf_defer64 t_perf_defer32 t_perf_shell_record_fp_defer t_perf_defer_exiting_threads \
	t_perf_defer_system_wide t_perf_defer_max_stack t_perf_defer_uretprobe \
	t_fuzz_perf_attrs t_trace_cmd_events t_perf_defer_without_module t_perf_defer_unload \
	t_perf_defer_going t_perf_defer_module_loaded_during"
