# SPDX-License-Identifier: GPL-2.0
# Debian's own programs, unmodified (bash, perl, xz from the guest's
# trixie userland, scripts/build-rootfs), sampled by Debian's perf 7.3.4
# with --call-graph fp (perf's frame-pointer walk in the interrupt),
# fp,defer (the module's walk: SFrame, .eh_frame, frame pointers) and
# dwarf (8 KiB of stack copied into every sample, unwound by perf script
# with libdw).  Sourced by tests.sh; t_ehframe_debian_<prog> is one test.
#
# Per program and mode: samples, the fraction whose user stack reaches
# the start (see ehd_parse), the mean user depth and perf.data bytes per
# sample.  The goals: fp,defer reaches the start at least as often as
# dwarf, at no more than a tenth of its bytes per sample, and agrees with
# dwarf frame by frame.
#
# Agreement: the two sessions sample different instants, so single
# samples cannot be paired.  A caller frame is keyed by its file and its
# offset in the file (perf script's dsoff: the same call site in both
# runs, whatever ASLR does).  A step of an unwinder is an edge (frame
# i's key, frame i+1's key), i >= 1 (frame 0, the sampled IP, is not a
# return address).  Wrong unwinding makes edges the other unwinder
# never produces.  agree(A, B) = the share of A's edge occurrences,
# among those that leave a key B also left, whose edge B has too; the
# test wants at least 95% both ways (a call site left to two callers,
# one sampled only in one session, costs a little).  Also printed: the
# share of dwarf's complete stacks (start reached) made only of steps
# fp,defer took too (whole stacks rarely repeat: the leaf end varies).  perf reports a caller frame of a dwarf unwind
# as its return address minus one: those are put back.
EHD=/tmp/ehd

# ehd_parse DATA EXE DWARF OUT: "samples reached depth_sum noprog
# loader" of EXE's samples; OUT.edges ("key key count"), OUT.chains
# ("count chain") and OUT.miss (where the others end).  A stack reaches
# the start when __libc_start_main (libc.so.6, in .dynsym: Debian's libc
# has no .symtab, so __libc_start_call_main is [unknown]) is its last
# frame or the one before a last frame in EXE, or when its last frame is
# EXE's _start (perf names the entry point; libc's startup before main
# is [unknown] past __libc_start_main's .dynsym size), or when its last
# frame is in ld.so (the loader before libc started: "loader"; Debian
# links with -z now: later, ld.so is never the outermost file).  A
# sample whose frames are in no file at all was taken in the exec
# (perf's child's stack, or none): "noprog", left out of the fractions.
ehd_parse() {
	$PERF script -i $1 --no-inline --max-stack 4096 -F comm,ip,sym,dso,dsoff 2>/dev/null |
	awk -v exe=$2 -v dwarf=$3 -v out=$4 '
	function inc(h,   i, d) {
		for (i = length(h); i > 0; i--) {
			d = index("0123456789abcdef", substr(h, i, 1))
			if (d < 16)
				return substr(h, 1, i - 1) substr("0123456789abcdef", d + 1, 1) substr(h, i + 1)
			h = substr(h, 1, i - 1) "0" substr(h, i + 1)
		}
		return "1" h
	}
	BEGIN { RS = ""; FS = "\n"; n = split(exe, p, "/"); comm = p[n] }
	{
		split($1, h, " ")
		if (h[1] != comm)
			next
		samples++
		u = 0
		for (i = 2; i <= NF; i++) {
			line = $i
			sub(/^[ \t]+/, "", line)
			if (line ~ /^ffff/ || line ~ /\(cookie\)/)
				continue
			# "ip sym (dso+0xoffset)": the offset in the file is the
			# same in every run, whatever ASLR does.
			nf = split(line, f, " ")
			loc = f[nf]
			gsub(/^\(|\)$/, "", loc)
			k = index(loc, "+0x")
			dso = k ? substr(loc, 1, k - 1) : loc
			off = k ? substr(loc, k + 3) : ""
			u++
			sym[u] = f[2]
			so[u] = dso
			key[u] = dso "+" (dwarf && u > 1 && off != "" ? inc(off) : off)
			at[u] = off
		}
		un = 0
		for (i = 1; i <= u; i++)
			un += so[i] == "[unknown]"
		if (un == u) {
			noprog++	# no frame in a file: the exec itself
			next
		}
		depth += u
		# ld.so starting the program (its relocation, IFUNC resolvers,
		# constructors), before libc: the entry of the loader is outermost.
		if (so[u] ~ /\/ld-linux-x86-64\.so\.2$/)
			loader++
		if (so[u] ~ /\/ld-linux-x86-64\.so\.2$/ || sym[u] == "_start" && so[u] == exe || u >= 2 && sym[u] ~ /^__libc_start_main/ ||
		    u >= 3 && sym[u - 1] ~ /^__libc_start_main/ && so[u] == exe) {
			reached++
			c = ""
			for (i = 2; i <= u; i++)
				c = c " " key[i]
			chains[c]++
		} else {
			# Where the stacks that miss the start end.
			miss[u ? sym[u] " " so[u] "+0x" at[u] : "(no user frame)"]++
		}
		for (i = 2; i < u; i++)
			edges[key[i] " " key[i + 1]]++
	}
	END {
		printf "" > (out ".edges")
		printf "" > (out ".chains")
		printf "" > (out ".miss")
		for (m in miss) print miss[m], m > (out ".miss")
		for (e in edges) print e, edges[e] > (out ".edges")
		for (c in chains) print chains[c], c > (out ".chains")
		print samples + 0, reached + 0, depth + 0, noprog + 0, loader + 0
	}'
}

# ehd_agree A B: agree(A, B) in per mille, of OUT.edges files A and B.
ehd_agree() {
	[ -s $1 ] && [ -s $2 ] || { echo -1; return; }
	awk 'FNR == NR { b[$1 " " $2] = 1; from[$1] = 1; next }
	$1 in from { all += $3; if (($1 " " $2) in b) ok += $3 }
	END { print all ? int(ok * 1000 / all) : -1 }' $2 $1
}

# ehd_paths D F: per mille of D's complete samples (OUT.chains) whose
# every step is one F made too (OUT.edges): the whole stack, start
# reached, could be F's.  And D's count of complete samples.
ehd_paths() {
	[ -s $1 ] && [ -s $2 ] || { echo -1 0; return; }
	awk 'FNR == NR { f[$1 " " $2] = 1; next }
	{
		all += $1
		for (i = 2; i < NF; i++)
			if (!(($i " " $(i + 1)) in f))
				next
		ok += $1
	}
	END { print all ? int(ok * 1000 / all) : -1, all + 0 }' $2 $1
}

# ehd_run NAME EXE ARGS...: the three sessions, the table, the goals.
ehd_run() {
	perf_ready || return
	[ -x $2 ] || { diag "no $2 (scripts/build-rootfs)"; return 1; }
	name=$1
	exe=$2
	shift 2
	r=0
	mkdir -p $EHD
	diag "| program | mode | samples | reach the start | mean user depth | bytes/sample | bytes/complete stack |"
	maxs=$(cat /proc/sys/kernel/perf_event_max_stack)
	# Whole stacks in every mode (bash's are hundreds of frames deep).
	echo 1024 >/proc/sys/kernel/perf_event_max_stack
	for cg in fp fp,defer dwarf; do
		m=$(echo $cg | tr , _)
		e0=$(ehs entry_frames)
		if ! $PERF record -q -B -N -o $EHD/$m.data -e cpu-clock -c ${EHD_PERIOD:-1000000} \
			--call-graph $cg -- $exe "$@" >$EHD/$m.log 2>&1; then
			diag "$name: perf record --call-graph $cg failed:"
			sed 's/^/#   /' $EHD/$m.log | tail -5
			r=1
			continue
		fi
		d=0
		[ $cg = dwarf ] && d=1
		ehd_parse $EHD/$m.data $exe $d $EHD/$m >$EHD/$m.sum
		read n reached depth noprog loader <$EHD/$m.sum
		[ $n -gt 0 ] || n=1
		p=$(( n - noprog ))
		[ $p -gt 0 ] || p=1
		bytes=$(wc -c <$EHD/$m.data)
		eval "reach_$m=$(( reached * 1000 / p )) bps_$m=$(( bytes / n )) dep_$m=$(( depth / p ))"
		diag "| $name | $cg | $n | $(( reached * 100 / p )).$(( reached * 1000 / p % 10 ))% |" \
			"$(( depth / p )) | $(( bytes / n )) | $(( bytes / (reached ? reached : 1) )) |"
		diag "  ($noprog samples of the exec itself left out, $loader of ld.so before libc)"
		[ $cg = fp,defer ] &&
			diag "  (topmost frames without a row, stepped at a function's entry: $(( $(ehs entry_frames) - e0 )))"
		expect_ge "$name $cg: samples" $n 200 || r=1
		[ $cg = fp ] || sort -rn $EHD/$m.miss | head -3 |
			while read k w; do diag "  $cg: $k stacks end in $w"; done
		rm -f $EHD/$m.data
	done
	echo $maxs >/proc/sys/kernel/perf_event_max_stack
	[ $r = 0 ] || return 1
	af=$(ehd_agree $EHD/fp_defer.edges $EHD/dwarf.edges)
	ad=$(ehd_agree $EHD/dwarf.edges $EHD/fp_defer.edges)
	set -- $(ehd_paths $EHD/dwarf.chains $EHD/fp_defer.edges)
	diag "$name: agree(fp,defer, dwarf) $af/1000, agree(dwarf, fp,defer) $ad/1000;" \
		"$1/1000 of dwarf's $2 complete stacks are made of fp,defer's steps"
	# Within 2% of dwarf: the runs are different samples, and start-up
	# (ld.so, libraries' initializers) weighs differently in each.  Some
	# start-up samples are at the first instruction of a library's .init
	# (crti's, no FDE: 15 of 764 of perl's in libcrypt's once, on KASAN):
	# the walk's entry step takes those on (ehframe_nocfi_entry).
	expect_ge "$name: fp,defer reaches the start (per mille, +20) vs dwarf" \
		$((reach_fp_defer + 20)) $reach_dwarf || r=1
	# A tenth of dwarf's bytes per sample; a deep stack (bash's, deeper
	# than dwarf's 8 KiB reach) costs 8 bytes a frame, so there the bytes
	# per delivered user frame are compared instead.
	if [ $dep_fp_defer -gt $((dep_dwarf * 2)) ]; then
		expect_ge "$name: dwarf bytes per user frame vs 10 x fp,defer's" \
			$((bps_dwarf / (dep_dwarf + 1))) $((bps_fp_defer * 10 / (dep_fp_defer + 1))) || r=1
	else
		expect_ge "$name: dwarf bytes/sample vs 10 x fp,defer's" $bps_dwarf $((bps_fp_defer * 10)) || r=1
	fi
	expect_ge "$name: agree(fp,defer, dwarf) per mille" $af 950 || r=1
	expect_ge "$name: agree(dwarf, fp,defer) per mille" $ad 950 || r=1
	rm -rf $EHD
	return $r
}

# bash: a recursive shell function 24 deep that loops at every level:
# each shell call is about ten C frames of execute_command and friends,
# so the stacks range from shallow to hundreds of frames.
t_ehframe_debian_bash() {
	# One sample per 4 ms of CPU, not 1: bash's stacks are hundreds of
	# frames deep, and perf script's reading of 10,000 such samples was
	# most of CI's longest test (6 minutes on KASAN); about 700 to 900
	# samples in fp and dwarf mode, 1,000 to 2,400 in fp,defer, remain.
	EHD_PERIOD=4000000
	ehd_run bash /usr/bin/bash -c 'f() { local j=0; while [ $j -lt 1000 ]; do j=$((j + 1)); done
		[ $1 -gt 0 ] && f $(($1 - 1)); }; f 24; exit 0'
	r=$?
	EHD_PERIOD=
	return $r
}

# perl: recursive Perl subs (Perl's calls do not recurse in C) and a
# sort with a Perl comparator (its merge sort does, and re-enters the
# runloop for every comparison).
t_ehframe_debian_perl() {
	ehd_run perl /usr/bin/perl -e 'sub fib { my $n = shift; $n < 2 ? $n : fib($n - 1) + fib($n - 2) }
		fib(22); my @a = map { ($_ * 7919) % 100003 } 1 .. 60000; @a = sort { $a <=> $b } @a;'
}

# xz: LZMA2 compression of 1 MB of text, one thread.
t_ehframe_debian_xz() {
	mkdir -p $EHD
	seq 1 150000 >/tmp/ehd-data
	# 2 ms a sample: about 2,000 samples a mode, not 4,000 to 5,000.
	EHD_PERIOD=2000000
	ehd_run xz /usr/bin/xz -6 -T1 -k -f /tmp/ehd-data
	r=$?
	EHD_PERIOD=
	rm -f /tmp/ehd-data /tmp/ehd-data.xz
	return $r
}

T_EHDEBIAN="t_ehframe_debian_bash t_ehframe_debian_perl t_ehframe_debian_xz"
