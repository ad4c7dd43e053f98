# SPDX-License-Identifier: GPL-2.0
# .eh_frame: programs built like Debian's (trixie's gcc/g++ 14, -O2
# -fomit-frame-pointer, no SFrame; scripts/build-ehframe-progs) unwound
# with the .eh_frame the module finds through PT_GNU_EH_FRAME.  Every
# program checks its trace itself: the recorded return addresses, then
# libgcc's own walk down to _start (tests/user/ehframe/ehchain.h).
# Sourced by tests.sh; each t_* is one test.  Modes are enum ut_mode:
# 0 unwind_user(), 1 for_each_user_frame(), 2 unwind_user_faultable().

EH=${UNWIND_RS_EHFRAME:-/ehframe}

# eh_need: skip without the programs (the kselftest package has none).
eh_need() {
	[ -x $EH/ehchain-static ] || { diag "SKIP: no $EH (scripts/build-ehframe-progs)"; return 4; }
}

# ehs NAME: a counter, or -1 when the module has none by that name.
ehs() {
	cat $STATS/$1 2>/dev/null || { echo "# no counter $1" >&2; echo -1; }
}

# eh_chains PROG: chains of several depths, each mode; all exact.
eh_chains() {
	eh_need || return 4
	r=0
	f0=$(ehs ehframe_frames)
	for d in 1 2 8 64 300; do
		for m in 0 1 2; do
			$EH/$1 chain $d $m || { diag "$1 chain $d mode $m failed"; r=1; }
		done
	done
	f=$(( $(ehs ehframe_frames) - f0 ))
	diag "frames unwound with .eh_frame: $f"
	expect_ge ".eh_frame frames" $f 1000 || r=1
	return $r
}
t_ehframe_chain_static() { eh_chains ehchain-static; }
# Linked as gcc does by default: no .eh_frame_hdr (the module makes one).
t_ehframe_chain_static_nohdr() { eh_chains ehchain-static-nohdr; }
t_ehframe_chain_static_pie() { eh_chains ehchain-spie; }
t_ehframe_chain_dynamic() { eh_chains ehchain-dyn; }

# The chain in a linked library, then in dlopen'd ones: the second
# dlopen maps other code (libehdl2.so) where the first library was.
t_ehframe_shared_dlopen() {
	eh_need || return 4
	r=0
	for d in 1 8 64; do
		for m in 0 2; do
			$EH/ehchain-dyn lib $d $m || r=1
		done
	done
	$EH/ehchain-dyn dlopen 32 2 $EH/libehdl.so $EH/libehdl2.so $EH/libehdl.so || r=1
	return $r
}

# C++: a recursive template, virtual calls, std::function, frames with
# personality and LSDA; then the same after an exception went through.
t_ehframe_cxx() {
	eh_need || return 4
	r=0
	for d in 1 8 64; do
		for m in 0 1 2; do
			$EH/ehcxx chain $d $m || { diag "ehcxx chain $d mode $m failed"; r=1; }
		done
	done
	$EH/ehcxx throw 9 2 || r=1
	return $r
}

# Deferred requests (from the syscall, and from a real NMI in it): the
# callback's trace, walked by the task work, is exact.
t_ehframe_deferred() {
	eh_need || return 4
	r=0
	for p in ehchain-static ehchain-dyn; do
		for d in 1 8 60; do
			for op in 1 2; do
				$EH/$p deferred $d $op || { diag "$p deferred $d op $op"; r=1; }
			done
		done
	done
	for op in 1 2; do
		$EH/ehcxx deferred 8 $op || { diag "ehcxx deferred op $op"; r=1; }
	done
	return $r
}

# Levels alternate .eh_frame code and frame-pointer code without CFI
# (no FDE covers it: the frame-pointer step); mixed3 adds levels with
# SFrame in the same file (per frame: SFrame, .eh_frame, frame pointers).
t_ehframe_mixed_fp() {
	eh_need || return 4
	r=0
	for p in ehchain-static ehchain-dyn; do
		for d in 1 2 3 16 65; do
			$EH/$p mixed $d 0 || r=1
		done
	done
	return $r
}
t_ehframe_mixed_sframe() {
	eh_need || return 4
	r=0
	s0=$(ehs sframe_frames)
	e0=$(ehs ehframe_frames)
	for d in 1 2 3 4 30 90; do
		for m in 0 2; do
			$EH/ehchain-mixed3 mixed3 $d $m || r=1
		done
	done
	s=$(( $(ehs sframe_frames) - s0 ))
	e=$(( $(ehs ehframe_frames) - e0 ))
	diag "SFrame frames $s, .eh_frame frames $e"
	expect_ge "SFrame frames" $s 40 || r=1
	expect_ge ".eh_frame frames" $e 40 || r=1
	return $r
}

# eh_asm_requests CMD: "ehchain CMD MODE" (four requests from an assembly
# function, each checked by the program) in each program, modes 0 and 2.
eh_asm_requests() {
	ear=0
	for p in ehchain-static ehchain-spie ehchain-dyn; do
		for m in 0 2; do
			$EH/$p $1 $m || ear=1
		done
	done
	return $ear
}

# Requests at an assembly function's entry, body, a path whose row
# comes from DW_CFA_restore_state, and after its epilogue's adjustment.
t_ehframe_prologue_epilogue() {
	eh_need || return 4
	eh_asm_requests edges
}

# Requests in code no FDE covers (as crti's .init in Debian's libraries,
# sampled at its first instruction), RBP 0: at its entry, the return
# address at SP takes the walk to its caller; words at SP that are no
# return address (no call before them, or no row for it) end the walk.
t_ehframe_nocfi_entry() {
	eh_need || return 4
	n0=$(ehs entry_frames)
	eh_asm_requests nocfi
	r=$?
	n=$(( $(ehs entry_frames) - n0 ))
	diag "entry_frames +$n"
	expect_eq "entry_frames" $n 6 || r=1
	return $r
}

# Section headers at an offset no file reaches (e_shoff near 2^63, in a
# copy of the program without .eh_frame_hdr, which finds .eh_frame by
# its section header): the file is refused once and that refusal is
# cached (the next run finds it: table_hits), not taken for an I/O error
# and read again at every lookup.
t_ehframe_absurd_offset() {
	eh_need || return 4
	r=0
	c=/tmp/eh-absurd
	for off in '\360\377\377\377\377\377\377\177' '\000\000\377\377\377\377\377\377'; do
		cp $EH/ehchain-static-nohdr $c
		printf "$off" | dd of=$c bs=1 seek=40 conv=notrunc 2>/dev/null || return 1
		j0=$(ehs ehframe_rejects)
		$c chain 4 0 loose || r=1
		j1=$(ehs ehframe_rejects) h1=$(ehs table_hits)
		$c chain 4 0 loose || r=1
		diag "e_shoff $off: refused $(( j1 - j0 )) then $(( $(ehs ehframe_rejects) - j1 )), cache hits of the next run $(( $(ehs table_hits) - h1 ))"
		expect_eq "refusals of the first run" $(( j1 - j0 )) 1 || r=1
		expect_eq "refusals of the next run" $(( $(ehs ehframe_rejects) - j1 )) 0 || r=1
		expect_ge "cache hits of the next run" $(( $(ehs table_hits) - h1 )) 1 || r=1
		rm -f $c
	done
	return $r
}

# Corrupt .eh_frame_hdr, .eh_frame and PT_GNU_EH_FRAME
# (tests/user/ehframe/mkhostile.py): every walk ends cleanly and starts
# at the leaf, each file is refused at most once (a refusal is cached),
# each function looked up by function at most once (kept as refused),
# and the copies whose header cannot be read at all are refused exactly
# once.  The walk of the intact program stays exact.
t_ehframe_hostile() {
	eh_need || return 4
	r=0
	n=0
	fnrej=0
	for f in $EH/hostile/*; do
		name=$(basename $f)
		j0=$(ehs ehframe_rejects) k0=$(ehs fn_rejects)
		for m in 0 2 0; do
			timeout 20 $f chain 16 $m loose >/tmp/eh.out 2>&1
			rc=$?
			[ $rc = 0 ] || { r=1; diag "$name mode $m: exit $rc"; cat /tmp/eh.out; }
		done
		j=$(( $(ehs ehframe_rejects) - j0 )) k=$(( $(ehs fn_rejects) - k0 ))
		fnrej=$((fnrej + k))
		diag "$name: $(grep -o '^# [0-9]* frames' /tmp/eh.out | tr -d '#'), refused $j time(s), functions refused $k"
		# Six walks of 16 levels: a refused function is kept as
		# such, not read again at each frame (a handful of functions).
		[ $k -le 8 ] || { diag "$name: functions refused $k times (not kept)"; r=1; }
		case $name in
		hdr-version|hdr-table-enc-bad|hdr-count-huge|phdr-offset-past-eof)
			expect_eq "$name refused once" $j 1 || r=1 ;;
		*)	[ $j -le 1 ] || { diag "$name refused $j times (not cached)"; r=1; } ;;
		esac
		n=$((n + 1))
	done
	expect_ge "hostile files" $n 26 || r=1
	expect_ge "functions refused (by function, the default)" $fnrej 1 || r=1
	$EH/ehchain-static chain 16 0 || r=1
	return $r
}

# The counters: a walk of a dynamic program caches its files' sections
# (program, libehlink.so, libc), and its frames count as .eh_frame's.
t_ehframe_counted() {
	eh_need || return 4
	r=0
	f0=$(ehs ehframe_frames)
	$EH/ehchain-dyn lib 64 2 || r=1
	f=$(( $(ehs ehframe_frames) - f0 ))
	diag "ehframe_frames +$f, ehframe_sections $(ehs ehframe_sections), fn_tables $(ehs fn_tables)," \
		"ehframe_rejects $(ehs ehframe_rejects)"
	expect_ge "ehframe_frames" $f 64 || r=1
	expect_ge "files with .eh_frame tables (whole or by function)" \
		$(( $(ehs ehframe_sections) + $(ehs fn_tables) )) 3 || r=1
	return $r
}

# Debian's perf, --call-graph fp,defer, on the static program's spin
# (eh_leaf, 16 x chain, run, main): the module's walk gives complete
# stacks, perf's own frame-pointer walk (fp) cannot.
# perf names the spin loop after eh_leaf or after the label inside it
# (eh_leaf_ip, sized up to the next symbol), as the shape of its symbol
# tree has it.
EH_LEAF="eh_leaf|eh_leaf_ip"

t_ehframe_perf_defer() {
	eh_need || return 4
	perf_ready || return
	r=0
	for cg in fp,defer fp; do
		rm -f /tmp/eh.incomplete
		PERF_PERIOD=$LEAF_PERIOD perf_rec $PD/eh.data $cg $EH/ehchain-static spin 16 60000000 || return 1
		set -- $(leaf_chains $PD/eh.data ehchain-static "$EH_LEAF" /tmp/eh.incomplete)
		diag "--call-graph $cg: $1 samples, $3 of $2 in the leaf complete" \
			"($4 more taken in the task work)"
		expect_ge "$cg: samples in the leaf" $2 20 || r=1
		expect_le "$cg: samples taken in the task work (25%)" $4 $(($1 / 4)) || r=1
		case $cg in
		fp,defer) expect_ge "fp,defer: complete stacks (99%)" $3 $(( $2 * 99 / 100 )) || {
			# The guest's perf data dies with it: the first incomplete
			# stacks, with perf's own record of the session, go to the log.
			r=1
			diag "first incomplete stacks:"
			sed 's/^/#   /' /tmp/eh.incomplete 2>/dev/null | head -80
			$PERF report -i $PD/eh.data --stats 2>/dev/null | sed 's/^/#   /' | head -40
		} ;;
		fp) expect_ge "fp: incomplete stacks (90%)" $(( $2 - $3 )) $(( $2 * 9 / 10 )) || r=1 ;;
		esac
	done
	rm -f $PD/eh.data*
	return $r
}

# --- tables_: .eh_frame looked up one function at a time -------------

# A task's walks of the same stack after its first take no row from a
# file's functions (a static program looked up by function, the default):
# the row memo keeps every frame's, the outermost's (_start: RA
# undefined) and the topmost frame's too.  fn_rows counts the rows walks
# took from the functions kept; the functions are read by a first run.
t_tables_rows_remembered() {
	eh_need || return 4
	r=0
	$EH/ehchain-static chain 16 0 >/dev/null || return 1
	f0=$(ehs fn_rows)
	EHCHAIN_WALKS=2 $EH/ehchain-static chain 16 0 >/dev/null || r=1
	f1=$(ehs fn_rows)
	EHCHAIN_WALKS=22 $EH/ehchain-static chain 16 0 >/dev/null || r=1
	f2=$(ehs fn_rows)
	diag "rows from the functions kept: $((f1 - f0)) in a task's 2 walks, $((f2 - f1)) in 22"
	expect_ge "rows from the functions kept (the first walk's)" $((f1 - f0)) 1 || r=1
	expect_eq "rows from the functions kept by 20 more walks" $((f2 - f1)) $((f1 - f0)) || r=1
	return $r
}

# A spinning task sampled by perf: its topmost IP moves about a loop of
# 128 blocks with one row (under TCG too), more IPs than the row memo has
# slots.
# After the first samples, each takes its topmost row from the stretch
# of code kept with the last one found (span_rows), not from the file's
# functions (fn_rows: a first walk's rows, whatever the samples).
t_tables_topmost_span() {
	eh_need || return 4
	perf_ready || return
	r=0
	f0=$(ehs fn_rows)
	s0=$(ehs span_rows)
	m0=$(ehs map_lookups)
	w0=$(ehs walks)
	perf_rec $PD/span.data fp,defer $EH/ehchain-static wide 16 500 || return 1
	f1=$(ehs fn_rows)
	s1=$(ehs span_rows)
	m1=$(ehs map_lookups)
	w1=$(ehs walks)
	n=$($PERF report -i $PD/span.data --stats 2>/dev/null |
		awk '$1 == "CALLCHAIN_DEFERRED" && $2 == "events:" { print $3; exit }')
	# The rows so taken are right: the stacks from the leaf are whole.
	set -- $(leaf_chains $PD/span.data ehchain-static "$EH_LEAF")
	rm -f $PD/span.data*
	n=${n:-0}
	diag "$n deferred samples; topmost rows from the span $((s1 - s0)), rows from the functions kept $((f1 - f0)); $3 of $2 stacks from the leaf whole; $((w1 - w0)) walks, $((m1 - m0)) mappings looked up"
	expect_ge "deferred samples" $n 100 || return 1
	expect_ge "whole stacks from the leaf (99%)" $3 $(($2 * 99 / 100)) || r=1
	expect_ge "samples in the leaf" $2 $((n / 2)) || r=1
	expect_ge "topmost rows from the span (half the samples)" $((s1 - s0)) $((n / 2)) || r=1
	expect_le "rows from the functions kept (a first walk's, 10% of samples)" $((f1 - f0)) $((n / 10 + 40)) || r=1
	return $r
}

# tables_reload [PARAMS]: the core module again, with PARAMS (an empty
# table cache).
tables_reload() {
	rmmod unwind_test 2>/dev/null
	unload_core || return 1
	insmod $MODDIR/unwind_deferred.ko "$@" || return 1
	insmod $MODDIR/unwind_test.ko
}

# With table_compile_kb=1048576 every .eh_frame under 1 GiB is compiled
# whole on the first walk (the default, 0, looks every .eh_frame with a
# header up by function): the .eh_frame tests above are exact again,
# their sections compiled whole, no file looked up by function, and the
# cache under its cap.
t_tables_compiled_whole() {
	eh_need || return 4
	r=0
	tables_reload table_compile_kb=1048576 || return 1
	s0=$(ehs ehframe_sections)
	for t in t_ehframe_chain_static t_ehframe_chain_static_pie t_ehframe_chain_dynamic \
		t_ehframe_shared_dlopen t_ehframe_cxx t_ehframe_deferred \
		t_ehframe_mixed_fp t_ehframe_mixed_sframe t_ehframe_prologue_epilogue \
		t_ehframe_nocfi_entry; do
		$t || { diag "$t failed with sections compiled whole"; r=1; }
	done
	s=$(( $(ehs ehframe_sections) - s0 ))
	diag "files by function $(ehs fn_tables), functions read $(ehs fn_reads);" \
		"sections compiled whole $s; cache $(ehs table_cache_bytes) bytes"
	expect_ge "sections compiled whole" $s 4 || r=1
	expect_eq "files looked up by function" $(ehs fn_tables) 0 || r=1
	expect_ge "table cache cap" $(( 4096 * 1024 )) $(ehs table_cache_bytes) || r=1
	tables_reload || r=1
	return $r
}

# A library with over 16 MiB of .eh_frame (libehbig.so, generated by
# tests/user/ehframe/mkbig.py; Debian's libLLVM has 6 MiB), dlopen'd: at
# the default table_compile_kb its functions are looked up one at a time,
# chains through it that meet up to 300 functions far apart in the file
# are exact (its levels' recorded return addresses and libgcc's own walk),
# nothing of it is compiled whole, and the table cache stays under its cap.
t_tables_big() {
	eh_need || return 4
	[ -f $EH/libehbig.so ] || { diag "no $EH/libehbig.so"; return 1; }
	r=0
	tables_reload || return 1
	s0=$(ehs ehframe_sections)
	for d in 1 8 64 300; do
		for m in 0 2; do
			$EH/ehchain-dyn dlopen $d $m $EH/libehbig.so ||
				{ diag "libehbig.so chain $d mode $m failed"; r=1; }
		done
	done
	# Again: the functions are kept.
	n1=$(ehs fn_reads)
	$EH/ehchain-dyn dlopen 300 2 $EH/libehbig.so || r=1
	again=$(( $(ehs fn_reads) - n1 ))
	diag "files by function $(ehs fn_tables), functions read $n1 (then $again)," \
		"rejected $(ehs fn_rejects), evicted $(ehs fn_evictions);" \
		"sections compiled whole $(( $(ehs ehframe_sections) - s0 ));" \
		"cache $(ehs table_cache_bytes) bytes"
	expect_ge "files by function" $(ehs fn_tables) 1 || r=1
	expect_ge "functions read" $n1 300 || r=1
	expect_eq "functions read again" $again 0 || r=1
	expect_eq "functions rejected" $(ehs fn_rejects) 0 || r=1
	expect_ge "table cache cap" $(( 4096 * 1024 )) $(ehs table_cache_bytes) || r=1
	return $r
}

# Eight threads released at once into the same chain of 64 functions
# never seen in libehbig.so: every chain exact, and the functions are
# read once, as many reads as one thread alone makes (the others wait for
# the reader and find its rows: fn_waits), never eight copies.
t_tables_shared_miss() {
	eh_need || return 4
	[ -f $EH/libehbig.so ] || { diag "no $EH/libehbig.so"; return 1; }
	r=0
	for n in 1 8; do
		tables_reload || return 1
		$EH/ehchain-dyn threads $n 64 0 $EH/libehbig.so ||
			{ diag "$n threads: a chain is not exact"; r=1; }
		eval reads$n=$(ehs fn_reads) waits$n=$(ehs fn_waits)
		diag "$n threads: functions read $(ehs fn_reads), misses another's read answered $(ehs fn_waits)"
	done
	expect_ge "functions read by one thread" $reads1 64 || r=1
	expect_eq "functions read by eight threads" $reads8 $reads1 || r=1
	tables_reload || r=1
	return $r
}

# Eight threads that meet the same files first at once, each file's
# .eh_frame compiled whole (table_compile_kb=1048576): each file is read
# once, the other threads wait for the reader and find its table cached
# (table_read_waits), never eight copies.
t_tables_shared_read() {
	eh_need || return 4
	r=0
	for n in 1 8; do
		tables_reload table_compile_kb=1048576 || return 1
		$EH/ehchain-dyn threads $n 64 0 $EH/libehdl.so ||
			{ diag "$n threads: a chain is not exact"; r=1; }
		eval reads$n=$(ehs ehframe_reads) waits$n=$(ehs table_read_waits)
		diag "$n threads: sections read $(ehs ehframe_reads), misses another's read answered $(ehs table_read_waits)"
	done
	expect_ge "sections read by one thread (program, libraries)" $reads1 3 || r=1
	expect_eq "sections read by eight threads" $reads8 $reads1 || r=1
	expect_ge "misses another's read answered" $waits8 1 || r=1
	tables_reload || r=1
	return $r
}

# Under a small cap (table_cache_kb=64, every file by function) walks
# meet more of libehbig.so's functions than fit: the chains stay exact,
# the file lets go of its oldest functions (fn_evictions), and what the
# cache counts and what the tables hold stay under the cap.
t_tables_capped() {
	eh_need || return 4
	[ -f $EH/libehbig.so ] || { diag "no $EH/libehbig.so"; return 1; }
	r=0
	tables_reload table_cache_kb=64 table_compile_kb=0 || return 1
	for m in 0 2; do
		$EH/ehchain-dyn dlopen 300 $m $EH/libehbig.so ||
			{ diag "libehbig.so chain 300 mode $m failed"; r=1; }
	done
	diag "functions read $(ehs fn_reads), evicted $(ehs fn_evictions);" \
		"cache $(ehs table_cache_bytes) bytes, tables hold $(ehs table_bytes_held)," \
		"entries evicted $(ehs table_evictions)"
	expect_ge "functions evicted" $(ehs fn_evictions) 1 || r=1
	expect_ge "table cache cap" 65536 $(ehs table_cache_bytes) || r=1
	expect_ge "tables held under the cap" 65536 $(ehs table_bytes_held) || r=1
	tables_reload || r=1
	return $r
}

# A table read leaves the file as it was: it goes to the page cache, not
# through vfs_read(), so it updates no atime (and raises no fsnotify
# event, on the same path), one function at a time or compiled whole.
# The library's atime is set far back once it is loaded (relatime then
# updates it at any read), before the walks read its tables.
t_tables_no_atime() {
	eh_need || return 4
	r=0
	lib=/tmp/libatime.so
	cp $EH/libehdl.so $lib || return 1
	for ck in 0 1048576; do
		tables_reload table_compile_kb=$ck || return 1
		EHCHAIN_LOADED="touch -a -d @1000000000 $lib" \
			$EH/ehchain-dyn dlopen 8 0 $lib || { diag "the chain failed"; r=1; }
		reads=$(( $(ehs fn_reads) + $(ehs ehframe_reads) ))
		diag "table_compile_kb=$ck: $reads reads, atime $(command stat -c %X $lib)"
		expect_ge "table reads" $reads 1 || r=1
		expect_eq "atime" $(command stat -c %X $lib) 1000000000 || r=1
	done
	rm -f $lib
	tables_reload || r=1
	return $r
}

# An SFrame section over sframe_compile_kb (0 here: every one) is not
# compiled: the file's .eh_frame is looked up one function at a time
# instead (in the static program, through a header made for it), and
# the chains stay exact.
t_tables_sframe_large() {
	[ -x /sframe/v2/sfchain-dyn ] || { diag "SKIP: no /sframe/v2"; return 4; }
	r=0
	tables_reload sframe_compile_kb=0 || return 1
	for p in sfchain-dyn sfchain-static; do
		for m in 0 2; do
			/sframe/v2/$p chain 64 $m || { diag "$p chain 64 mode $m failed"; r=1; }
		done
	done
	diag "sframe_reads $(ehs sframe_reads), sframe_frames $(ehs sframe_frames)," \
		"fn_tables $(ehs fn_tables), fn_reads $(ehs fn_reads), ehframe_frames $(ehs ehframe_frames)"
	expect_eq "SFrame sections read" $(ehs sframe_reads) 0 || r=1
	expect_ge "files by function (two programs, libc, ld.so)" $(ehs fn_tables) 3 || r=1
	expect_ge ".eh_frame frames" $(ehs ehframe_frames) 256 || r=1
	tables_reload || r=1
	/sframe/v2/sfchain-dyn chain 64 0 || r=1
	expect_ge "SFrame sections read (default)" $(ehs sframe_reads) 1 || r=1
	return $r
}

# A file with SFrame and no .eh_frame the module can find (sfchain-sfonly,
# v2 and v3): over sframe_compile_kb (0: every section) its functions are
# looked up one at a time through the FDE array, and the chains stay
# exact; at the default cap the same section is compiled whole.
t_tables_sframe_by_function() {
	[ -x /sframe/v2/sfchain-sfonly ] || { diag "SKIP: no /sframe/v2/sfchain-sfonly"; return 4; }
	r=0
	tables_reload sframe_compile_kb=0 || return 1
	for v in v2 v3; do
		for d in 1 8 64 300; do
			for m in 0 2; do
				/sframe/$v/sfchain-sfonly chain $d $m ||
					{ diag "$v chain $d mode $m failed"; r=1; }
			done
		done
	done
	diag "fn_tables $(ehs fn_tables), fn_reads $(ehs fn_reads), fn_rejects $(ehs fn_rejects)," \
		"sframe_reads $(ehs sframe_reads), sframe_frames $(ehs sframe_frames)"
	expect_eq "SFrame sections read whole" $(ehs sframe_reads) 0 || r=1
	expect_ge "files by function (the two programs)" $(ehs fn_tables) 2 || r=1
	expect_ge "functions read" $(ehs fn_reads) 4 || r=1
	expect_eq "functions refused" $(ehs fn_rejects) 0 || r=1
	expect_ge "SFrame frames" $(ehs sframe_frames) 1000 || r=1
	expect_eq ".eh_frame frames" $(ehs ehframe_frames) 0 || r=1
	tables_reload || r=1
	/sframe/v3/sfchain-sfonly chain 64 0 || r=1
	expect_ge "SFrame sections read (default)" $(ehs sframe_reads) 1 || r=1
	expect_eq "files by function (default)" $(ehs fn_tables) 0 || r=1
	return $r
}

T_TABLES="t_tables_rows_remembered t_tables_topmost_span t_tables_compiled_whole t_tables_big t_tables_shared_miss t_tables_capped \
	t_tables_no_atime t_tables_sframe_large t_tables_sframe_by_function t_tables_shared_read"

T_EHFRAME="t_ehframe_chain_static t_ehframe_chain_static_nohdr t_ehframe_chain_static_pie t_ehframe_chain_dynamic \
	t_ehframe_shared_dlopen t_ehframe_cxx t_ehframe_deferred t_ehframe_mixed_fp \
	t_ehframe_mixed_sframe t_ehframe_prologue_epilogue t_ehframe_nocfi_entry t_ehframe_hostile \
	t_ehframe_absurd_offset \
	t_ehframe_counted t_ehframe_perf_defer $T_TABLES"
