# SPDX-License-Identifier: GPL-2.0
# scripts/perf-test-compare, inside the guest: Debian's perf 7.3 runs its
# own test suite (`perf test`, built-in and shell tests) on our production
# kernel with the module loaded, or on upstream 7.3's, which has the
# deferred unwinder built in.  Each top-level test runs alone (-S), in its
# own session, killed with its children after PERF_SUITE_TIMEOUT seconds:
# one hung test must not take the rest with it.  Prints
# "PERFTEST ID RESULT SECONDS NAME [PERF'S WORDS]" for every test and
# subtest, the output of each that failed as "# " lines, and PERFTEST-END.
. /jobs/lib.sh
PERF=/usr/bin/perf
TMO=${PERF_SUITE_TIMEOUT:-300}
echo "PERFTEST-INFO kernel $(uname -r)"
echo "PERFTEST-INFO $($PERF version)"
# ut.perf_suite_bare: our kernel without the module, to tell the
# module's differences from 6.12's.
bare=0
grep -q ut.perf_suite_bare /proc/cmdline && bare=1
if [ -f $MODDIR/unwind_deferred.ko ] && [ $bare = 0 ]; then
	case $(uname -r) in 6.12.*)
		load_core || { echo "PERFTEST-FAILED load"; exit 1; }
		echo "PERFTEST-INFO module loaded"
		;;
	esac
fi
# perf's shell tests are "#!/bin/bash" scripts; this initramfs has
# Debian's bash at /usr/bin only.
[ -e /bin/bash ] || ln -s /usr/bin/bash /bin/bash
# Shell tests write to the working directory.
mkdir -p /tmp/perftest && cd /tmp/perftest || exit 1

ids=$($PERF test list 2>/dev/null | sed -n 's/^ *\([0-9][0-9]*\): .*/\1/p')
[ -n "$ids" ] || { echo "PERFTEST-FAILED list"; exit 1; }
# ut.only=REGEX: the top-level test numbers to run (a partial run).
[ -n "${ONLY:-}" ] && ids=$(echo "$ids" | grep -xE "$ONLY")
echo "PERFTEST-INFO $(echo $ids | wc -w) tests, ${TMO}s each at most"

for id in $ids; do
	start=$(date +%s)
	setsid $PERF test -S -v "$id" </dev/null >/tmp/pt.out 2>&1 &
	pid=$!
	timed_out=0
	while kill -0 $pid 2>/dev/null; do
		if [ $(($(date +%s) - start)) -ge "$TMO" ]; then
			kill -KILL -$pid 2>/dev/null
			timed_out=1
			break
		fi
		sleep 1
	done
	wait $pid 2>/dev/null
	secs=$(($(date +%s) - start))
	if [ $timed_out = 1 ]; then
		echo "PERFTEST $id TIMEOUT $secs"
		sed 's/^/# /' /tmp/pt.out | tail -20
		continue
	fi
	# " 5.1: Test event parsing      : Ok"; a result may carry a reason,
	# "Skip (not root)".  Names may contain ':', the result follows the
	# last ": ".
	res=$(awk -v secs=$secs -v top=$id '
		/^ *[0-9]+(\.[0-9]+)?: / {
			i = index($0, ":"); id = substr($0, 1, i - 1); gsub(/ /, "", id)
			rest = substr($0, i + 2)
			# A long name leaves no padding: "...exit).: Ok".
			if (!match(rest, /: (Ok|FAILED|Skip|Running)[^:]*$/)) next
			res = substr(rest, RSTART + 2); name = substr(rest, 1, RSTART - 1)
			sub(/ +$/, "", name)
			# In progress, not a result: "Running (0 active)".
			if (res ~ /^Running/) next
			if (res ~ /^Ok/) r = "ok"
			else if (res ~ /^FAILED/) r = "FAIL"
			else if (res ~ /^Skip/) r = "skip"
			else r = "other"
			if (!(id in line)) order[++cnt] = id
			line[id] = r " " secs " " name " [" res "]"
		}
		END {
			for (k = 1; k <= cnt; k++) print "PERFTEST", order[k], line[order[k]]
			if (!cnt) print "PERFTEST", top, "NORESULT", secs
		}
	' /tmp/pt.out)
	echo "$res"
	# What a test printed that failed, was skipped or gave no result.
	case "$res" in
	*FAIL* | *skip* | *NORESULT*) sed 's/^/# /' /tmp/pt.out | tail -25 ;;
	esac
done
rm -rf /tmp/perftest
echo "PERFTEST-END"
