# SPDX-License-Identifier: GPL-2.0
# scripts/bench --anchor --profile, inside the guest: where the sampled
# thread's time goes.  An outer system-wide perf session (kernel and user
# callchains) profiles Debian's perf sampling the depth-64 and depth-256
# workloads with fp and with fp,defer; prints the hottest symbols of the
# workload's thread for each.
. /jobs/lib.sh
PERF=/usr/bin/perf
B=/bin/bench64
echo 1024 >/proc/sys/kernel/perf_event_max_stack
echo "PROFILE-INFO kernel $(uname -r)"
case $(uname -r) in 6.12.*) load_core || echo "BENCH-FAILED load" ;; esac
for w in ${PROFILE_DEPTHS:-8 64}; do
	for m in fp,defer; do
		echo "PROFILE depth $w --call-graph $m"
		$PERF record -q -B -N -a -e cpu-clock -c 20000 -o /tmp/outer.data -- \
			$PERF record -q -B -N -m 4M -o /tmp/inner.data -e cpu-clock -c 100000 \
			--call-graph $m -- $B anchor $w user 2000 >/dev/null 2>&1 ||
			echo "BENCH-FAILED profile $w $m"
		$PERF report -i /tmp/outer.data --comm bench64 --no-children --sort sym \
			--stdio -q 2>/dev/null | grep -v '^$' | head -40 | sed 's/^/PROFILE /'
		rm -f /tmp/outer.data /tmp/inner.data
	done
done
