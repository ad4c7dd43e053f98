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

# The skip paths first, through the installed group script: exit 4 (the
# kselftest skip code) and the reason, nothing run.
mkdir -p /etc
grep -q '^nobody:' /etc/passwd 2>/dev/null || {
	grep -q '^root:' /etc/passwd 2>/dev/null ||
		echo 'root:x:0:0:root:/:/bin/sh' >>/etc/passwd
	echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
}
g=/kselftest/unwind_deferred/foundation.sh
skip_case() {
	n=$1 name=$2 want=$3
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
	if [ $rc = 4 ] && echo "$out" | grep -q "^# SKIP: .*$want" &&
		! echo "$out" | grep -q '^ok '; then
		echo "ok $n $name"
	else
		echo "not ok $n $name # exit $rc"
	fi
}
echo "1..2"
skip_case 1 kselftest_skip_not_root "must run as root" \
	su -s /bin/sh nobody -c "UNWIND_RS_MODDIR=$m $g"
skip_case 2 kselftest_skip_no_modules "no unwind_deferred.ko" \
	env UNWIND_RS_MODDIR=/nonexistent $g
UNWIND_RS_MODDIR=$m /kselftest/run_kselftest.sh
