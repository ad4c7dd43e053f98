# SPDX-License-Identifier: GPL-2.0
# The kselftest package of tests/selftests/unwind_deferred, installed by
# scripts/build-tests under /kselftest, run by the kernel's own runner:
# one result per group, each group's tests as nested KTAP; the core is the
# one built in-tree (drivers/unwind_deferred).

# The runner writes to /dev/stdout, which devtmpfs does not provide.
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
# The runner calls "timeout --foreground": busybox's has no such option.
rm -f /usr/bin/timeout
printf '#!/bin/sh\n[ "$1" = --foreground ] && shift\nexec busybox timeout "$@"\n' \
	>/usr/bin/timeout
chmod 755 /usr/bin/timeout
# The modules as a kernel tree with the module in-tree gives them: the
# core from drivers/unwind_deferred, the test modules beside it.
m=/tmp/intree-modules
mkdir -p $m
for k in /modules/*.ko; do ln -s "$k" $m/; done
ln -sf /modules/intree/unwind_deferred.ko $m/unwind_deferred.ko
ln -s /modules/inject $m/inject
UNWIND_RS_MODDIR=$m /kselftest/run_kselftest.sh
