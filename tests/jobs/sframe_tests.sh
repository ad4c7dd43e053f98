# SPDX-License-Identifier: GPL-2.0
# SFrame: frame-pointer-less programs (tests/user/sframe/, built by
# Debian trixie's gcc: SFrame v2, and forky's: v3; scripts/build-sframe-progs)
# unwound with sections the module finds in the mapped files.  Sourced by
# tests.sh; each t_* is one test.  Modes are enum ut_mode: 0 unwind_user(),
# 1 for_each_user_frame(), 2 unwind_user_faultable().

SF=${UNWIND_RS_SFRAME:-/sframe}
SFPARAM=/sys/module/unwind_deferred/parameters/sframe_cache_kb

# sf_need V: skip without the programs (the kselftest package has none).
sf_need() {
	[ -x $SF/$1/sfchain-static ] || { diag "SKIP: no $SF/$1 (scripts/build-sframe-progs)"; return 4; }
}

# sf_chains V PROG: chains of several depths, each mode; all exact.
sf_chains() {
	sf_need $1 || return 4
	r=0
	f0=$(stat sframe_frames)
	for d in 1 2 8 64 300; do
		for m in 0 1 2; do
			$SF/$1/$2 chain $d $m || { diag "$2 chain $d mode $m failed"; r=1; }
		done
	done
	diag "frames unwound with SFrame: $(( $(stat sframe_frames) - f0 ))"
	expect_ge "SFrame frames" $(( $(stat sframe_frames) - f0 )) 1000 || r=1
	return $r
}

t_sframe_chain_v2_static() { sf_chains v2 sfchain-static; }
t_sframe_chain_v2_static_pie() { sf_chains v2 sfchain-spie; }
t_sframe_chain_v2_dynamic() { sf_chains v2 sfchain-dyn; }
t_sframe_chain_v3_static() { sf_chains v3 sfchain-static; }
t_sframe_chain_v3_static_pie() { sf_chains v3 sfchain-spie; }
t_sframe_chain_v3_dynamic() { sf_chains v3 sfchain-dyn; }

# The chain is in a linked library, then in dlopen'd ones: the second
# dlopen maps other code (libsfdl2.so) where the first library was.
sf_libs() {
	sf_need $1 || return 4
	r=0
	for d in 1 8 64; do
		$SF/$1/sfchain-dyn lib $d 0 || r=1
	done
	$SF/$1/sfchain-dyn dlopen 32 2 $SF/$1/libsfdl.so $SF/$1/libsfdl2.so $SF/$1/libsfdl.so || r=1
	return $r
}
t_sframe_shared_dlopen_v2() { sf_libs v2; }
t_sframe_shared_dlopen_v3() { sf_libs v3; }

# Levels alternate SFrame code and frame-pointer code without .sframe.
sf_mixed() {
	sf_need $1 || return 4
	r=0
	for p in sfchain-static sfchain-dyn; do
		for d in 1 2 3 16 65; do
			$SF/$1/$p mixed $d 0 || r=1
		done
	done
	return $r
}
t_sframe_mixed_fp_v2() { sf_mixed v2; }
t_sframe_mixed_fp_v3() { sf_mixed v3; }

# Deferred requests (from the syscall, and from a real NMI in it): the
# callback's trace, walked by the task work before the return to user
# space, is exact.
sf_deferred() {
	sf_need $1 || return 4
	r=0
	for p in sfchain-static sfchain-dyn; do
		for d in 1 8 60; do
			for op in 1 2; do
				$SF/$1/$p deferred $d $op || { diag "$p deferred $d op $op"; r=1; }
			done
		done
	done
	return $r
}
t_sframe_deferred_v2() { sf_deferred v2; }
t_sframe_deferred_v3() { sf_deferred v3; }

sf_perf_chains() { leaf_chains $1 $2 leaf ${3:-}; }

# perf record --call-graph fp,defer gives complete stacks (the module
# walks with SFrame before the return to user space); --call-graph fp
# (perf's own frame-pointer walk in the sample) cannot.
sf_perf() {
	sf_need $1 || return 4
	perf_ready || return
	r=0
	for cg in fp,defer fp; do
		rm -f /tmp/sf.incomplete
		PERF_PERIOD=$LEAF_PERIOD perf_rec $PD/sf-$1.data $cg $SF/$1/sfchain-static spin 16 60000000 || return 1
		set -- $1 $(sf_perf_chains $PD/sf-$1.data sfchain-static /tmp/sf.incomplete)
		diag "$1 --call-graph $cg: $2 samples, $4 of $3 in the leaf complete" \
			"($5 more taken in the task work)"
		expect_ge "$cg: samples in the leaf" $3 20 || r=1
		expect_le "$cg: samples taken in the task work (25%)" $5 $(($2 / 4)) || r=1
		case $cg in
		fp,defer) expect_ge "fp,defer: complete stacks (99%)" $4 $(( $3 * 99 / 100 )) || {
			r=1
			diag "first incomplete stacks:"
			sed 's/^/#   /' /tmp/sf.incomplete 2>/dev/null | head -80
		} ;;
		fp) expect_ge "fp: incomplete stacks (90%)" $(( $3 - $4 )) $(( $3 * 9 / 10 )) || r=1 ;;
		esac
		set -- $1
	done
	rm -f $PD/sf-*.data
	return $r
}
t_sframe_perf_defer_v2() { sf_perf v2; }
t_sframe_perf_defer_v3() { sf_perf v3; }

# Requests at a function's entry, body and epilogue (CFA rsp+8, +48, +8).
sf_edges() {
	sf_need $1 || return 4
	r=0
	for p in sfchain-static sfchain-spie; do
		for m in 0 2; do
			$SF/$1/$p edges $m || r=1
		done
	done
	return $r
}
t_sframe_prologue_epilogue_v2() { sf_edges v2; }
t_sframe_prologue_epilogue_v3() { sf_edges v3; }

# The control: with SFrame off (cap 0) frame pointers cannot walk these
# programs, and back on they are exact again.
t_sframe_off_control() {
	sf_need v2 || return 4
	r=0
	old=$(cat $SFPARAM)
	echo 0 >$SFPARAM
	$SF/v2/sfchain-static chain 8 0 control || r=1
	echo $old >$SFPARAM
	$SF/v2/sfchain-static chain 8 0 || r=1
	return $r
}

# Corrupt sections and lying program headers: every walk ends cleanly and
# starts at the leaf; every section is refused (sframe_rejects, once: the
# negative entry is cached) but: those that validate at a wrong address
# (phdr-vaddr-*), whose wrong rules the walk must survive; a segment
# whose file range overflows, which is ignored (no PT_GNU_SFRAME); and a
# huge p_filesz, harmless since the length comes from the section's
# header (ld pads the segment): that one must be exact.
t_sframe_hostile() {
	sf_need v2 || return 4
	r=0
	n=0
	for f in $SF/v2/hostile/*; do
		name=$(basename $f)
		j0=$(stat sframe_rejects)
		for m in 0 2; do
			$f chain 16 $m loose >/tmp/sf.out || { r=1; diag "$name mode $m:"; cat /tmp/sf.out; }
		done
		j=$(( $(stat sframe_rejects) - j0 ))
		diag "$name: $(grep -o '[0-9]* frames' /tmp/sf.out), refused $j time(s)"
		case $name in
		phdr-vaddr-*|phdr-offset-overflow) ;;
		phdr-filesz-huge) $f chain 16 0 || r=1 ;;
		*) expect_eq "$name refused once (then cached)" $j 1 || r=1 ;;
		esac
		n=$((n + 1))
	done
	expect_ge "hostile files" $n 17 || r=1
	# The real program is still exact (the cache holds no hostile state).
	$SF/v2/sfchain-static chain 16 0 || r=1
	return $r
}

# A cached file rewritten in place (same inode: ctime, mtime, size change)
# and replaced by rename (new inode): the new contents are read, never
# the stale section.
t_sframe_replaced_file() {
	sf_need v2 || return 4
	sf_need v3 || return 4
	r=0
	cp $SF/v2/sfchain-static /tmp/sfrep
	/tmp/sfrep chain 24 0 || r=1
	cat $SF/v3/sfchain-static >/tmp/sfrep
	/tmp/sfrep chain 24 0 || { diag "after rewrite in place"; r=1; }
	cat $SF/v2/sfchain-static >/tmp/sfrep
	/tmp/sfrep chain 24 2 || { diag "after rewrite back"; r=1; }
	cp $SF/v3/sfchain-spie /tmp/sfrep.new
	mv /tmp/sfrep.new /tmp/sfrep
	/tmp/sfrep chain 24 0 || { diag "after rename"; r=1; }
	rm -f /tmp/sfrep
	return $r
}

# At a cap that holds about one section, alternating programs evict each
# other and every walk stays exact; the cache stays under the cap.
t_sframe_eviction() {
	sf_need v2 || return 4
	r=0
	old=$(cat $SFPARAM)
	for i in 1 2 3; do cp $SF/v2/sfchain-static /tmp/sfev$i; done
	b0=$(stat table_cache_bytes)
	/tmp/sfev1 chain 8 0 || r=1
	cost=$(( $(stat table_cache_bytes) - b0 ))
	kb=$(( (cost + 1023) / 1024 ))
	diag "one section costs $cost bytes: cap $kb KiB"
	echo $kb >$SFPARAM
	e0=$(stat table_evictions)
	for round in 1 2 3; do
		for i in 2 3 1; do
			/tmp/sfev$i chain 8 0 || { diag "sfev$i round $round"; r=1; }
		done
	done
	ev=$(( $(stat table_evictions) - e0 ))
	diag "evictions: $ev, cached bytes $(stat table_cache_bytes)"
	expect_ge "evictions" $ev 3 || r=1
	expect_ge "cap in bytes vs cached bytes" $((kb * 1024)) $(stat table_cache_bytes) || r=1
	echo $old >$SFPARAM
	rm -f /tmp/sfev1 /tmp/sfev2 /tmp/sfev3
	return $r
}

# The cache evicts the least recently used entry, not the oldest
# inserted: at a cap that holds two sections, A and B are read, A is
# walked again (a hit), and C's insertion evicts B.  A's next walk is a
# hit (no section read), B's a read; every walk exact.
t_sframe_eviction_order() {
	sf_need v2 || return 4
	r=0
	old=$(cat $SFPARAM)
	for i in a b c; do cp $SF/v2/sfchain-static /tmp/sfo$i; done
	b0=$(stat table_cache_bytes)
	/tmp/sfoa chain 8 0 || r=1
	cost=$(( $(stat table_cache_bytes) - b0 ))
	# Two entries fit, three do not, whatever the rounding to KiB.
	kb=$(( (cost * 5 / 2) / 1024 ))
	diag "one section costs $cost bytes: cap $kb KiB"
	expect_ge "a section's cost (bytes)" $cost 4096 || r=1
	echo $kb >$SFPARAM
	/tmp/sfob chain 8 0 || r=1
	/tmp/sfoa chain 8 0 || r=1
	/tmp/sfoc chain 8 0 || r=1
	n0=$(stat sframe_reads)
	/tmp/sfoa chain 8 0 || r=1
	expect_eq "sections read for A, walked last but one" $(( $(stat sframe_reads) - n0 )) 0 || r=1
	/tmp/sfob chain 8 0 || r=1
	expect_eq "sections read for B, the least recently used" $(( $(stat sframe_reads) - n0 )) 1 || r=1
	expect_ge "cap in bytes vs cached bytes" $((kb * 1024)) $(stat table_cache_bytes) || r=1
	echo $old >$SFPARAM
	rm -f /tmp/sfoa /tmp/sfob /tmp/sfoc
	return $r
}

# A task asleep between walks holds no tables (issue 21's bound): its
# memo keeps only the entries' shells, so once the cache evicts them
# (a 1 KiB cap, then another file read) the bytes held are 0, though the
# sleeper still names the mappings; awake, it looks them up again and its
# walk is exact.  table_bytes_held counts every compiled table alive.
t_tables_memory_bound() {
	sf_need v2 || return 4
	r=0
	old=$(cat $SFPARAM)
	cp $SF/v2/sfchain-dyn /tmp/tbhold
	cp $SF/v2/sfchain-static /tmp/tbother
	rm -f /tmp/tbfifo /tmp/tbhold.out
	mkfifo /tmp/tbfifo
	/tmp/tbhold hold 8 0 </tmp/tbfifo >/tmp/tbhold.out 2>&1 &
	pid=$!
	exec 3>/tmp/tbfifo
	i=0
	while ! grep -q '^held' /tmp/tbhold.out && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	h1=$(stat table_bytes_held)
	c1=$(stat table_cache_bytes)
	e0=$(stat table_evictions)
	echo 1 >$SFPARAM
	# Its table does not fit: frame pointers, not exact; only its
	# insertion matters.
	/tmp/tbother chain 8 0 >/dev/null 2>&1
	c2=$(stat table_cache_bytes)
	expect_ge "evictions at the insertion" $(( $(stat table_evictions) - e0 )) 1 || r=1
	h2=$(stat table_bytes_held)
	diag "held $h1 bytes (cache $c1) with the sleeper walked; $h2 (cache $c2) at a 1 KiB cap"
	grep -q '^held' /tmp/tbhold.out || { diag "the sleeper never walked"; r=1; }
	expect_ge "bytes held while cached" $h1 1 || r=1
	expect_eq "bytes held with the sleeper's memo, all evicted" $h2 0 || r=1
	expect_ge "cap in bytes vs cached bytes" 1024 $c2 || r=1
	echo $old >$SFPARAM
	exec 3>&-
	wait $pid || { diag "the sleeper's second walk"; cat /tmp/tbhold.out; r=1; }
	rm -f /tmp/tbhold /tmp/tbother /tmp/tbfifo /tmp/tbhold.out
	return $r
}

# A process walked again and again looks its mappings up once (the memo
# a task keeps between walks), and again after every change of its
# mappings; each walk is exact.  The dlopen tests check that code mapped
# where other code was is never unwound with the old section.
t_sframe_mappings_memo() {
	sf_need v2 || return 4
	r=0
	for p in sfchain-static sfchain-dyn; do
		l0=$(stat map_lookups)
		$SF/v2/$p repeat 24 2 100 || { diag "$p repeat"; r=1; }
		l1=$(stat map_lookups)
		$SF/v2/$p repeat 24 2 100 remap || { diag "$p repeat remap"; r=1; }
		l2=$(stat map_lookups)
		diag "$p: $((l1 - l0)) lookups for 100 walks, $((l2 - l1)) with a remap before each"
		[ $((l1 - l0)) -le 10 ] || { diag "$p: the memo was not used"; r=1; }
		expect_ge "$p lookups with remaps" $((l2 - l1)) 100 || r=1
	done
	return $r
}

# Unload with sections cached, and walks right after a reload: the cache
# is emptied at unload (table_cache_bytes back to 0 with a fresh module) and
# refilled; every walk stays exact.  Leaves both modules loaded.
t_sframe_unload_cached() {
	sf_need v2 || return 4
	sf_need v3 || return 4
	r=0
	i=0
	while [ $i -lt 5 ]; do
		if grep -q '^unwind_test ' /proc/modules; then rmmod unwind_test || return 1; fi
		if grep -q '^unwind_deferred ' /proc/modules; then unload_core || return 1; fi
		load_core || return 1
		insmod $MODDIR/unwind_test.ko || return 1
		expect_eq "cached bytes after load" $(stat table_cache_bytes) 0 || r=1
		$SF/v2/sfchain-dyn chain 8 0 >/dev/null || { diag "v2 dyn after reload $i"; r=1; }
		$SF/v3/sfchain-static chain 8 2 >/dev/null || { diag "v3 static after reload $i"; r=1; }
		[ $(stat sframe_sections) -ge 2 ] || { diag "no section cached ($i)"; r=1; }
		# The old names of the counters that serve every format.
		expect_eq "sframe_bytes (old name)" $(stat sframe_bytes) $(stat table_cache_bytes) || r=1
		expect_eq "sframe_hits (old name)" $(stat sframe_hits) $(stat table_hits) || r=1
		expect_eq "sframe_evictions (old name)" $(stat sframe_evictions) $(stat table_evictions) || r=1
		i=$((i + 1))
	done
	return $r
}

T_SFRAME="t_sframe_chain_v2_static t_sframe_chain_v2_static_pie t_sframe_chain_v2_dynamic \
	t_sframe_chain_v3_static t_sframe_chain_v3_static_pie t_sframe_chain_v3_dynamic \
	t_sframe_shared_dlopen_v2 t_sframe_shared_dlopen_v3 t_sframe_deferred_v2 t_sframe_deferred_v3 t_sframe_mixed_fp_v2 t_sframe_mixed_fp_v3 \
	t_sframe_prologue_epilogue_v2 t_sframe_prologue_epilogue_v3 t_sframe_off_control \
	t_sframe_hostile t_sframe_replaced_file t_sframe_eviction t_sframe_eviction_order \
	t_sframe_perf_defer_v2 t_sframe_perf_defer_v3 t_sframe_mappings_memo t_tables_memory_bound \
	t_sframe_unload_cached"
