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
