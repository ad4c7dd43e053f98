# SPDX-License-Identifier: GPL-2.0
# Load from outside (issue 23, item 5): Debian's stress-ng churns tasks
# while Debian's perf records the whole system with fp,defer and the core
# is unloaded and loaded again every few seconds.  Sourced by tests.sh
# (after perf_tests.sh, whose perf_ready it uses).  The four stress_* tests
# run in this order and share $SD: stress_churn_perf makes the load and
# leaves the core loaded and quiet; the others check what it left.

STRESS_NG=${UNWIND_RS_STRESS_NG:-/usr/bin/stress-ng}
SD=/tmp/stress
# The stressors of the issue, one instance each, all at once: every kind
# of task creation and exit (fork, exec, clone, pthread, vfork, a traced
# child, a thread group exiting together) interleaves with the others.
# The *-max caps keep the 1 GiB guest (KASAN: twice the memory per
# object) out of the OOM killer.
# stress-ng's exec stressor refuses to run as root: it runs as nobody, in
# a second stress-ng beside the first.
STRESS_ARGS="--fork 1 --fork-max 16 \
	--pthread 1 --pthread-max 32 --vfork 1 --vfork-max 16 --ptrace 1 --exit-group 1 \
	--temp-path $SD --metrics-brief"
STRESS_EXEC_ARGS="--exec 1 --exec-max 16 --temp-path $SD --metrics-brief"
# The clone stressor's child maps and touches 128 MiB before its first
# clone, and each clone without CLONE_VM copies that mapping: under KASAN
# on a loaded TCG host it made 12 clones in 60 s, or none.  It runs in a
# stress-ng of its own until it has made CLONE_OPS clones, for at most
# three times the others' time: a count reached, bounded, not a time.
CLONE_OPS=4
STRESS_CLONE_ARGS="--clone 1 --clone-max 32 --clone-ops $CLONE_OPS --temp-path $SD --metrics-brief"
STRESSORS="fork exec clone pthread vfork ptrace exit-group"

# The kernel's unreclaimable slab plus vmalloc, in kB: where everything the
# module allocates lives (per-task caches: kmalloc, one page each; unwind
# tables: kvmalloc).  KASAN keeps freed objects in a quarantine that
# counts as slab: shrinking every cache drains its part of it first.  The
# lowest of three readings, a second apart: RCU-deferred frees of the
# churn's tasks land in between, and a leak stays in all three.
stress_mem() {
	sm_min=
	for sm_i in 1 2 3; do
		for f in /sys/kernel/slab/*/shrink; do
			[ -e "$f" ] && echo 1 >"$f" 2>/dev/null
		done
		sm_v=$(awk '/^SUnreclaim:|^VmallocUsed:/ { s += $2 } END { print s + 0 }' /proc/meminfo)
		[ -z "$sm_min" ] || [ "$sm_v" -lt "$sm_min" ] && sm_min=$sm_v
		sleep 1
	done
	echo $sm_min
}

# kmalloc-4k objects in use (the per-task caches' slab), where /proc/slabinfo
# exists (SLUB_DEBUG: the KASAN kernel; the debug kernel is SLUB_TINY).
stress_4k() {
	awk '$1 == "kmalloc-4k" { print $2 }' /proc/slabinfo 2>/dev/null
}

# stress_memory_baseline's tolerance for the kernel's growth, in kB, and
# the task caches the churn must have allocated for a leak of them to
# show against it: 128 (twice its 64 kmalloc-4k objects) where
# /proc/slabinfo counts them, else the tolerance's worth of 4 kB caches.
STRESS_TOL_KB=1536
stress_caches_needed() {
	if [ -n "$(stress_4k)" ]; then echo 128; else echo $((STRESS_TOL_KB / 4)); fi
}

# The task caches allocated so far: those of the loads unloaded, plus the
# loaded core's (stress_unload adds its count to the file just before the
# rmmod: a reading in between counts them twice, which only ends the
# churn sooner than needed by that one reload's share).
stress_caches() {
	echo $(($(cat $SD/cache_allocs 2>/dev/null || echo 0) + $(stat cache_allocs 2>/dev/null || echo 0)))
}

# stress_run SECONDS NAME: the three stress-ng runs, logs in $SD/NAME.log,
# $SD/NAME.exec.log and $SD/NAME.clone.log; fails if any does.
stress_run() {
	su -s /bin/sh nobody -c "$STRESS_NG $STRESS_EXEC_ARGS --timeout $1" >$SD/$2.exec.log 2>&1 &
	sr_p=$!
	$STRESS_NG $STRESS_CLONE_ARGS --timeout $(($1 * 3)) >$SD/$2.clone.log 2>&1 &
	sr_c=$!
	sr_r=0
	$STRESS_NG $STRESS_ARGS --timeout $1 >$SD/$2.log 2>&1 || sr_r=1
	wait $sr_p || sr_r=1
	wait $sr_c || sr_r=1
	return $sr_r
}

# stress_unload: rmmod the core, retrying while a task work pins it (at
# most 2 s); adds what this load allocated to $SD/cache_allocs first.
stress_unload() {
	su_a=$(stat cache_allocs 2>/dev/null || echo 0)
	su_i=0
	# Each attempt is marked in the kernel's log (its clock is perf's):
	# the one that succeeds makes the module GOING, from which the
	# kernel's task work can no longer pin it and drops the requests it
	# finds, before the module's exit prints "unloading" (the rmmod
	# task may be preempted in between).
	until echo "unwind-rs-test: rmmod" >/dev/kmsg; rmmod unwind_deferred 2>/dev/null; do
		su_i=$((su_i + 1))
		[ $su_i -ge 200 ] && return 1
		sleep 0.01
	done
	echo $(($(cat $SD/cache_allocs 2>/dev/null || echo 0) + su_a)) >$SD/cache_allocs
}

t_stress_churn_perf() {
	perf_ready || return
	# Not a skip: the guest's userland carries it (scripts/build-rootfs).
	[ -x $STRESS_NG ] || { diag "no $STRESS_NG"; return 1; }
	rm -rf $SD
	mkdir -p $SD
	chmod 777 $SD
	mkdir -p /etc
	grep -q '^nobody:' /etc/passwd 2>/dev/null || {
		grep -q '^root:' /etc/passwd 2>/dev/null ||
			echo 'root:x:0:0:root:/:/bin/sh' >>/etc/passwd
		echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
	}
	r=0
	grep -q '^unwind_test ' /proc/modules && { rmmod unwind_test || return 1; }
	grep -q '^unwind_deferred ' /proc/modules && { rmmod unwind_deferred || return 1; }
	# Warm-up without module or perf: the kernel's own caches (task
	# structs, pids, maple nodes, stacks) grow to what this churn keeps,
	# so that the baseline after it is what the kernel holds anyway.
	m_cold=$(stress_mem)
	stress_run 5 warm || { diag "stress-ng warm-up failed:"; tail -5 $SD/warm.log | sed 's/^/#   /'; r=1; }
	sleep 2
	stress_mem >$SD/mem0
	stress_4k >$SD/k4_0
	diag "baseline: $m_cold kB before the warm-up, $(cat $SD/mem0) kB after" \
		"(SUnreclaim + VmallocUsed), kmalloc-4k objects $(cat $SD/k4_0)"
	load_core || return 1
	# A task that lives through the churn and past the checks, sampled
	# all along (the churn's own tasks exit): one left with PENDING and
	# nothing queued after the last load stays so, for
	# stress_no_pending_unqueued to see.
	# (Its output elsewhere: the test's own is read to its end.)
	sh -c 'while :; do i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done; sleep 0.05; done' \
		</dev/null >/dev/null 2>&1 &
	echo $! >$SD/keeper
	forks0=$(awk '$1 == "processes" { print $2 }' /proc/stat)
	# The whole system, with perf's fallback when the module is gone.
	# 250 Hz per CPU; large buffers: a lost record would read as unmerged.
	$PERF record -a -q -N -m 1024 -o $SD/perf.data -e cpu-clock -c 4000000 \
		--call-graph fp,defer >$SD/perf.log 2>&1 &
	pp=$!
	# perf takes a while to start under TCG: its file's header first.
	n=0
	until [ -s $SD/perf.data ] || [ $n -ge 300 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	sleep 2
	# Unload and load again every 3 s, unloaded for half a second each
	# time (perf falls back to synchronous stacks then).
	(
		n=0 f=0
		while [ ! -e $SD/done ]; do
			sleep 3
			if stress_unload; then
				sleep 0.5
				load_core && n=$((n + 1)) || f=$((f + 1))
			else
				f=$((f + 1))
			fi
		done
		echo $n $f >$SD/reloads
	) &
	lp=$!
	secs=${STRESS_NG_SECONDS:-60}
	stress_run $secs stress || { diag "stress-ng failed"; r=1; }
	# Enough churn for stress_memory_baseline to see a leak of the task
	# caches: a loaded host gets less done in the same time, so a count
	# is reached, in at most 3 more rounds of 20 s (fork, pthread, vfork,
	# ptrace, exit-group).
	more=0
	while [ $(stress_caches) -lt $(stress_caches_needed) ] && [ $more -lt 3 ]; do
		$STRESS_NG $STRESS_ARGS --timeout 20 >$SD/more$more.log 2>&1 ||
			{ diag "stress-ng (more churn) failed"; r=1; }
		more=$((more + 1))
	done
	touch $SD/done
	wait $lp
	forks=$(($(awk '$1 == "processes" { print $2 }' /proc/stat) - forks0))
	grep -q '^unwind_deferred ' /proc/modules || load_core || r=1
	# Quiet for a second before perf stops: the last entries of the
	# remaining tasks end, and their records are written.
	sleep 1
	kill -INT $pp
	# perf record re-raises SIGINT after writing its file: 130 is normal.
	wait $pp
	prc=$?
	[ $prc = 0 ] || [ $prc = 130 ] ||
		{ diag "perf record failed ($prc):"; tail -5 $SD/perf.log | sed 's/^/#   /'; r=1; }
	set -- $(cat $SD/reloads)
	diag "$secs s of stress-ng and $more rounds of 20 s more: $forks tasks created, the core reloaded $1 times" \
		"($2 failed unloads or loads), $(cat $SD/cache_allocs) task caches allocated"
	# "Every few seconds": a cycle is 3.5 s idle plus rmmod and insmod,
	# which take seconds under this load on TCG (a cycle took 7 s on
	# debug, 12 s on KASAN).
	expect_ge "reloads" $1 $((secs / 20)) || r=1
	expect_eq "failed unloads or loads" $2 0 || r=1
	expect_ge "tasks created" $forks 1000 || r=1
	# Each stressor must have worked: bogo ops > 0 in stress-ng's metrics.
	for s in $STRESSORS; do
		ops=$(cat $SD/stress.log $SD/stress.exec.log $SD/stress.clone.log | awk -v s=$s '{ for (i = 1; i < NF; i++) if ($i == s && $(i + 1) ~ /^[0-9]+$/) { print $(i + 1); exit } }')
		diag "stress-ng $s: ${ops:-no} bogo ops"
		expect_ge "$s bogo ops" "${ops:-0}" 1 || r=1
	done
	grep -hE 'fail|error|skip' $SD/stress.log $SD/stress.exec.log $SD/stress.clone.log | head -8 | sed 's/^/#   /'
	touch $SD/ran
	return $r
}

# No task is left with PENDING while its work is not queued: such a task
# would never be served again (issue 23's unload race).  The module
# counts them (debugfs pending_unqueued); a request's own two short
# windows are ruled out by reading again (a stuck task stays counted).
t_stress_no_pending_unqueued() {
	[ -e $SD/ran ] || { diag "stress_churn_perf did not run"; return 1; }
	[ -r $STATS/pending_unqueued ] || { diag "no $STATS/pending_unqueued"; return 1; }
	i=0
	while :; do
		n=$(cat $STATS/pending_unqueued)
		[ "$n" = 0 ] || [ $i -ge 10 ] && break
		i=$((i + 1))
		sleep 0.5
	done
	diag "tasks with PENDING and no queued work: $n (read $((i + 1)) times)," \
		"$(ls /proc | grep -c '^[0-9]') processes"
	r=0
	[ -d /proc/$(cat $SD/keeper) ] || { diag "the long-lived task is gone"; r=1; }
	kill $(cat $SD/keeper) 2>/dev/null
	expect_eq "tasks with PENDING and nothing queued" "$n" 0 || r=1
	return $r
}

# Every deferred sample gets its record (perf merges by (tid, cookie)),
# except one whose entry may have been cut by an unload: a sample (tid,
# cookie, t) is excused only when an unload not over at t (its dmesg
# lines "unloading" and "unloaded", same clock as perf's) or the session's
# end starts before the task's next deferred sample with another cookie (its entry
# ended there, and with the module loaded the record comes before that).
# A task that exits is served by the exit hook, and one never seen again
# counts as having exited.  Samples while unloaded are synchronous.
t_stress_deferred_records() {
	[ -e $SD/ran ] || { diag "stress_churn_perf did not run"; return 1; }
	# Each unload, "start end gap" per line: it starts with the rmmod
	# attempt that succeeds (the last marked before the module's
	# "unloading", gap seconds before it; stress_unload says why), and a
	# request granted before may lose its record from then on.
	dmesg | sed -n -e 's/^\[ *\([0-9.]*\)\] unwind-rs-test: rmmod$/r \1/p' \
		-e 's/^\[ *\([0-9.]*\)\] unwind_deferred: unloading$/s \1/p' \
		-e 's/^\[ *\([0-9.]*\)\] unwind_deferred: unloaded,.*/e \1/p' |
		awk '$1 == "r" { a = $2 } $1 == "s" { s = a != "" ? a : $2; g = $2 - s }
		$1 == "e" && s != "" { print s, $2, g; s = ""; a = "" }' >$SD/unloads
	diag "from the last rmmod to the module's \"unloading\": at most" \
		"$(sort -k3 -g $SD/unloads | tail -1 | awk '{ printf "%.1f ms", $3 * 1000 }')"
	$PERF script -i $SD/perf.data --no-merge-callchains --no-inline -F comm,tid,time,ip,sym \
		2>$SD/script.err >$SD/script.txt
	# LOST and LOST_SAMPLES: perf's buffers overflowed (a record lost
	# reads as unmerged: the run is void, not the module wrong).
	lost=$($PERF report -i $SD/perf.data --stats 2>/dev/null |
		awk '/LOST/ { for (i = 1; i < NF; i++) if ($i == "events:") s += $(i + 1) } END { print s + 0 }')
	set -- $(awk -v uf=$SD/unloads -v missf=$SD/missing '
	BEGIN { while ((getline l < uf) > 0) { split(l, p, " "); us[++nu] = p[1] + 0; ue[nu] = p[2] + 0 } }
	{
		# perf script: a block per event, a header line then frames.
		if ($0 == "") { flush(); next }
		if (!inb) { hdr = $0; inb = 1; ck = ""; next }
		if ($0 ~ /\(cookie\)/) { split($0, f, " "); ck = f[1] }
	}
	function flush(   h, n, i, tid, t, c) {
		if (!inb) return
		inb = 0
		n = split(hdr, h, " ")
		comm = h[1]
		# "comm tid time:" (comm may hold spaces): the time ends with ":".
		for (i = 2; i <= n; i++) if (h[i] ~ /^[0-9]+\.[0-9]+:$/) break
		if (i > n) { bad++; if (bad <= 3) print "# unparsed: " hdr > missf; return }
		t = substr(h[i], 1, length(h[i]) - 1) + 0
		tid = h[i - 1]
		if (hdr ~ /DEFERRED CALLCHAIN/) {
			c = hdr; sub(/.*\[cookie: /, "", c); sub(/\].*/, "", c)
			rec[tid, c] = 1; records++
			return
		}
		ns++
		stid[ns] = tid; st[ns] = t; scomm[ns] = comm
		scook[ns] = (ck == "" ? "sync" : ck)
		if (ck == "") sync++; else deferred++
	}
	END {
		flush()
		end = 1e18
		# For each deferred sample, the next deferred sample of its task
		# with another cookie: its entry ended before it.  One pass from
		# the end (a scan per sample took minutes under TCG), keeping per
		# task the nearest deferred sample after (cookie na, time nt) and
		# the nearest whose cookie is not na (nb, ntb).  Cookies compared as
		# strings: a hex cookie of digits and one "e" reads as a number
		# (1e556 is inf, and busybox awk finds inf != inf).  A synchronous
		# one proves nothing: perf falls back as soon as an unload begins,
		# before its line.
		for (i = ns; i >= 1; i--) {
			if (scook[i] == "sync")
				continue
			tid = stid[i]
			c = scook[i] ""
			if ((tid in na) && na[tid] != c) {
				nxa[i] = nt[tid]; nxc[i] = na[tid]
				nb[tid] = na[tid]; ntb[tid] = nt[tid]
			} else if (tid in nb) { nxa[i] = ntb[tid]; nxc[i] = nb[tid] }
			else { nxa[i] = end; nxc[i] = "none" }
			na[tid] = c
			nt[tid] = st[i]
		}
		for (i = 1; i <= ns; i++) {
			if (scook[i] == "sync")
				continue
			if ((stid[i], scook[i]) in rec) { merged++; continue }
			nxt = nxa[i]
			nc = nxc[i]
			# The start of the first unload not over at the sample.
			un = end
			for (k = 1; k <= nu; k++) if (ue[k] >= st[i]) { un = us[k]; break }
			if (nxt == end || un < nxt) { excused++; continue }
			missing++
			bycomm[scomm[i]]++
			if (!((stid[i], scook[i]) in shown) && nshown++ < 8) {
				shown[stid[i], scook[i]] = 1
				printf "# no record: %s tid %s cookie %s at %.6f, the task next sampled at %.6f (cookie %s), next unload at %.6f\n", scomm[i], stid[i], scook[i], st[i], nxt, nc, un > missf
			}
		}
		for (c in bycomm) printf "# unmerged samples of %s: %d\n", c, bycomm[c] > missf
		print ns + 0, deferred + 0, sync + 0, records + 0, merged + 0, excused + 0, missing + 0, bad + 0, nu + 0
	}' $SD/script.txt)
	[ -s $SD/missing ] && cat $SD/missing
	diag "$1 samples: $2 deferred, $3 synchronous; $4 deferred records, $5 samples" \
		"merged, $6 unmerged where an unload or the end cut the entry, $7 unmerged" \
		"otherwise; $9 unloads in dmesg; $lost lost events"
	r=0
	expect_eq "unparsed perf script blocks" $8 0 || r=1
	expect_ge "samples" $1 1000 || r=1
	expect_ge "deferred records" $4 100 || r=1
	# Most deferred samples are merged: a parse that misses cookies fails.
	expect_ge "merged deferred samples (90%)" $5 $(($2 * 9 / 10)) || r=1
	expect_ge "synchronous samples (perf's fallback while unloaded)" $3 1 || r=1
	expect_ge "unloads seen in dmesg" $9 5 || r=1
	expect_eq "lost events" $lost 0 || r=1
	expect_eq "deferred samples without their record" $7 0 || r=1
	rm -f $SD/script.txt
	return $r
}

# After the last unload the kernel holds no more memory than before the
# churn: SUnreclaim + VmallocUsed within 1.5 MiB of the baseline (the
# kernel's own growth after this churn was 680 to 772 kB on debug), and on
# the KASAN kernel kmalloc-4k, the caches' slab, within 64 objects.  The
# churn must have allocated more than that in task caches alone: twice
# the kmalloc-4k tolerance (leaking half of them fails), or on debug,
# without slabinfo, the meminfo tolerance (leaking all of them fails; the
# debug runs allocated 600 to 2,000 caches, 2.4 to 8 MiB).  Ends with the core and unwind_test loaded.
t_stress_memory_baseline() {
	[ -e $SD/ran ] || { diag "stress_churn_perf did not run"; return 1; }
	kill $(cat $SD/keeper) 2>/dev/null
	r=0
	rm -f $SD/perf.data
	stress_unload || { diag "the last unload failed"; r=1; }
	sleep 2
	m1=$(stress_mem)
	k1=$(stress_4k)
	m0=$(cat $SD/mem0) k0=$(cat $SD/k4_0) allocs=$(cat $SD/cache_allocs)
	tol=$STRESS_TOL_KB
	diag "SUnreclaim + VmallocUsed: $m0 kB before, $m1 kB after the last unload" \
		"($((m1 - m0)) kB); kmalloc-4k objects: ${k0:-n/a} before, ${k1:-n/a} after;" \
		"$allocs task caches allocated ($((allocs * 4)) kB)"
	expect_ge "the tolerance, against the growth in kB" $tol $((m1 - m0)) || r=1
	if [ -n "$k0" ]; then
		expect_ge "64 kmalloc-4k objects, against their growth" 64 $((k1 - k0)) || r=1
		expect_ge "task caches allocated (2 x 64)" $allocs 128 || r=1
	else
		expect_ge "task caches allocated, in kB (the tolerance)" $((allocs * 4)) $tol || r=1
	fi
	load_core || r=1
	insmod $MODDIR/unwind_test.ko || r=1
	return $r
}

T_STRESS="t_stress_churn_perf t_stress_no_pending_unqueued t_stress_deferred_records \
	t_stress_memory_baseline"
