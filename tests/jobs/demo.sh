# SPDX-License-Identifier: GPL-2.0
# The main job, inside the guest: load the module and a consumer, run a
# program and print its user stack as the deferred callback saw it.
. /jobs/lib.sh
load_core && insmod $MODDIR/unwind_test.ko || { echo "UT-DEMO-FAILED"; exit 1; }
for abi in 64 32; do
	echo "UT-PROGRAM demo$abi"
	/bin/demo$abi || echo "UT-DEMO-FAILED"
done
grep -H . $STATS/walks $STATS/callbacks $STATS/queued
rmmod unwind_test && unload_core
