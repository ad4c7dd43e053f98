# SPDX-License-Identifier: GPL-2.0
# Helpers for the guest-side test scripts (busybox sh).

# The guest's layout; the kselftest package (tests/selftests/) points these
# at its own directory.
MODDIR=${UNWIND_RS_MODDIR:-/modules}
BIN=${UNWIND_RS_BIN:-/bin}
STATS=/sys/kernel/debug/unwind_deferred

load_core() {
	insmod $MODDIR/unwind_deferred.ko || return 1
}

unload_core() {
	rmmod unwind_deferred || return 1
}

stat() {
	cat $STATS/$1
}

# Whether this is the KASAN kernel (its tests run longer there).
on_kasan() {
	dmesg | grep -q KernelAddressSanitizer
}

diag() {
	echo "# $*"
}

# expect WHAT GOT WANT
expect_eq() {
	if [ "$2" != "$3" ]; then
		diag "$1: got '$2', want '$3'"
		return 1
	fi
}

# expect_ge WHAT GOT MIN
expect_ge() {
	if [ "$2" -lt "$3" ]; then
		diag "$1: got $2, want >= $3"
		return 1
	fi
}

# expect_le WHAT GOT MAX
expect_le() {
	if [ "$2" -gt "$3" ]; then
		diag "$1: got $2, want <= $3"
		return 1
	fi
}

# cut_stacks [MAX [KEEP]]: perf script's output from stdin to stdout, each
# sample's stack longer than MAX frames (default 40) cut to its first KEEP
# (default 8) and one line "... N more frames".  A sample is a line that
# does not start with white space (its header) and the indented lines
# after it (its frames), up to a blank line or the next header.  The demo
# passes every perf script stack through it, so that perf's garbage fp
# walk of Debian's perl (about 130 "0 [unknown]" frames) takes one screen.
# Why 40: well above the real stacks the demo shows (perf_work64 and
# sfchain at depth 6, perl's, whose Perl-level recursion does not recurse
# in C: 9 user frames on average in the README's table; plus a kernel
# part), so fp, fp,defer and dwarf stay whole and comparable and only
# garbage is cut; a real deep stack (bash's recursion: 105) would be cut
# too, with its count.  POSIX awk only (busybox's); run on the host by
# tests/host/test_cut_stacks.py.
cut_stacks() {
	awk -v max="${1:-40}" -v keep="${2:-8}" '
	function flush(   i, m) {
		m = n > max ? keep : n
		for (i = 1; i <= m; i++)
			print f[i]
		if (n > m)
			printf "%s... %d more frames\n", ind, n - m
		n = 0
	}
	BEGIN { max += 0; keep += 0; n = 0 }
	/^[ \t]*$/ { flush(); print; next }
	/^[ \t]/ {
		f[++n] = $0
		if (n == 1) {
			ind = $0
			sub(/[^ \t].*$/, "", ind)
		}
		next
	}
	{ flush(); print }
	END { flush() }'
}

# --- KTAP ---------------------------------------------------------------

T_NAMES=""
t_add() {
	T_NAMES="$T_NAMES $1"
}

# Runs $T_NAMES as one KTAP document; fails if any test failed.
t_run_all() {
	failed=0
	n=0
	for t in $T_NAMES; do n=$((n + 1)); done
	echo "KTAP version 1"
	echo "1..$n"
	i=0
	for t in $T_NAMES; do
		i=$((i + 1))
		start=$(cut -d' ' -f1 /proc/uptime)
		out=$("$t" 2>&1)
		rc=$?
		end=$(cut -d' ' -f1 /proc/uptime)
		echo "$out" | sed -e '/^$/d' -e 's/^\([^#]\)/# \1/'
		name=${t#t_}
		echo "# $name: ${start}s - ${end}s"
		case $rc in
		0) echo "ok $i $name" ;;
		4) echo "ok $i $name # SKIP" ;;
		*) echo "not ok $i $name # exit $rc"; failed=$((failed + 1)) ;;
		esac
	done
	[ $failed -eq 0 ]
}
