#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs one group of the suite (jobs/tests.sh) and prints its tests' KTAP.
# Exit 0: all passed; 4: cannot run here (why is printed); else failed.
ksft_skip=4
cd "$(dirname "$0")" || exit 1
export UNWIND_RS_GROUP=$1
export UNWIND_RS_BIN=$PWD UNWIND_RS_JOBS=$PWD/jobs
export UNWIND_RS_MODDIR=${UNWIND_RS_MODDIR:-/modules}

skip() {
	echo "# SKIP: $*"
	exit $ksft_skip
}

[ "$(id -u)" = 0 ] || skip "must run as root"
grep -q ' unwind_hooks_register$' /proc/kallsyms ||
	skip "kernel without CONFIG_UNWIND_DEFERRED_HOOKS (patches/ not applied)"
[ -f "$UNWIND_RS_MODDIR/unwind_deferred.ko" ] && [ -f "$UNWIND_RS_MODDIR/unwind_test.ko" ] ||
	skip "no unwind_deferred.ko and unwind_test.ko in $UNWIND_RS_MODDIR (set UNWIND_RS_MODDIR)"
[ -d /sys/kernel/debug/tracing ] || [ -d /sys/kernel/debug/unwind_deferred ] ||
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
exec sh "$UNWIND_RS_JOBS/tests.sh"
