#!/usr/bin/env bash
# mrc-bench inside the QEMU guest, where the kernel monitor (mrmon) loads:
# a suite script for tests/guest/run.sh (--suites), started by
# `make bench-guest`.  The guest is emulated (TCG): only ratios measured in
# this same run mean anything, so the workloads that carry the kernel
# monitor's targets run with small sizes and a few rounds.
set -u
out=$GUEST_RESDIR/bench
mkdir -p "$out"
bench=$GUEST_BUILD/tools/mrc-bench
if [ ! -x "$bench" ]; then
	echo "SKIP guest/bench" >>"$GUEST_RESULTS"
	echo "no $bench"
	exit 0
fi
"$bench" --quick --rounds "${BENCH_GUEST_ROUNDS:-3}" \
	--workload hits,misses,invalidate,invalidate-bulk,unrelated \
	--json "$out/bench-guest.json" >"$out/bench-guest.txt" 2>&1
rc=$?
cat "$out/bench-guest.txt"
if [ $rc -eq 0 ]; then
	echo "PASS guest/bench" >>"$GUEST_RESULTS"
else
	echo "FAIL guest/bench" >>"$GUEST_RESULTS"
fi
exit $rc
