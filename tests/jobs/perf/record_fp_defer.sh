#!/bin/bash
# perf record deferred user callchains (--call-graph fp,defer)
# SPDX-License-Identifier: GPL-2.0
#
# Written as a test of perf's own suite (tools/perf/tests/shell/): with
# --call-graph fp,defer the kernel stores a cookie in a sample instead of
# the user stack, and writes the stack once, in a
# PERF_RECORD_CALLCHAIN_DEFERRED record with that cookie, before the task
# returns to user space; perf script merges the two.  Checks that the
# records come, that every sample merges with one (no "(cookie)" left),
# and that the merged stacks are whole: leaf, parent, leafloop of perf's
# own workload, built with frame pointers.

err=0
PERF_DATA=$(mktemp /tmp/__perf_test.perf.data.XXXXXX)
PERF_OUT=$(mktemp /tmp/__perf_test.perf.out.XXXXXX)

cleanup() {
	rm -f "${PERF_DATA}" "${PERF_DATA}".old "${PERF_OUT}"
	trap - EXIT TERM INT
}

trap_cleanup() {
	cleanup
	exit 1
}
trap trap_cleanup EXIT TERM INT

if [ "$(uname -m)" != "x86_64" ]; then
	echo "Skip: fp,defer is tested on x86_64"
	cleanup
	exit 2
fi

# The tool must know the mode, the kernel the attribute.
if ! perf record -o "${PERF_DATA}" -e cpu-clock --call-graph fp,defer -- true \
	> "${PERF_OUT}" 2>&1; then
	echo "Skip: perf record --call-graph fp,defer is not supported"
	cat "${PERF_OUT}"
	cleanup
	exit 2
fi

echo "Recording leafloop with --call-graph fp,defer"
if ! perf record -o "${PERF_DATA}" -e cpu-clock -c 1000000 --call-graph fp,defer \
	-- perf test -w leafloop 1 > "${PERF_OUT}" 2>&1; then
	echo "perf record failed"
	cat "${PERF_OUT}"
	err=1
fi

records=$(perf script -i "${PERF_DATA}" --no-merge-callchains 2> /dev/null |
	grep -c "DEFERRED CALLCHAIN")
echo "Deferred callchain records: ${records}"
if [ "${records}" -lt 1 ]; then
	echo "No PERF_RECORD_CALLCHAIN_DEFERRED"
	err=1
fi

perf script -i "${PERF_DATA}" -F comm,ip,sym 2> /dev/null > "${PERF_OUT}"
samples=$(grep -c "^perf" "${PERF_OUT}")
unmerged=$(grep -c "(cookie)" "${PERF_OUT}")
echo "Samples: ${samples}, left unmerged: ${unmerged}"
if [ "${samples}" -lt 10 ] || [ "${unmerged}" -ne 0 ]; then
	echo "Deferred callchains were not merged into every sample"
	err=1
fi

# Each frame is a tab, spaces and an address before the symbol.
SEP="[[:space:]]+ [[:xdigit:]]+"
if grep -q "leafloop" "${PERF_OUT}"; then
	if ! tr '\n' ' ' < "${PERF_OUT}" | grep -E -q "perf $SEP leaf $SEP parent $SEP leafloop"; then
		echo "No merged stack with leaf, parent, leafloop"
		err=1
	fi
else
	# A stripped perf (as distributions ship it): no symbols, so the
	# workload's three frame-pointer frames must be in perf's own file.
	depth=$(perf script -i "${PERF_DATA}" -F comm,ip,dso 2> /dev/null | awk '
		/^perf/ { n = 0; next }
		$1 !~ /^ffff/ && $2 ~ /\/perf\)$/ { n++; if (n > max) max = n }
		END { print max + 0 }')
	echo "No symbols in perf: most user frames in perf's file: ${depth}"
	if [ "${depth}" -lt 3 ]; then
		echo "No merged stack with the workload's three frames"
		err=1
	fi
fi
if [ ${err} -ne 0 ]; then
	head -n 20 "${PERF_OUT}"
fi

cleanup
exit ${err}
