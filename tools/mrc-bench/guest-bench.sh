#!/usr/bin/env bash
# mrc-bench inside the QEMU guest, where the kernel monitor (mrmon) loads:
# a suite script for tests/guest/run.sh (--suites), started by
# `make bench-guest`.  The guest is emulated (TCG): only ratios measured in
# this same run mean anything.  Invalidation (the kernel monitor's targets)
# runs with 1,000 regions, so that each figure is the median of 20 slices;
# the other workloads with the small sizes of --quick.
set -u
out=$GUEST_RESDIR/bench
mkdir -p "$out"
bench=$GUEST_BUILD/tools/mrc-bench
rounds=${BENCH_GUEST_ROUNDS:-5}
if [ ! -x "$bench" ]; then
	echo "SKIP guest/bench" >>"$GUEST_RESULTS"
	echo "no $bench"
	exit 0
fi
"$bench" --quick --rounds "$rounds" --workload invalidate,invalidate-bulk \
	--param 1000 --json "$out/bench-guest-invalidate.json" \
	>"$out/bench-guest.txt" 2>&1
rc=$?
"$bench" --quick --rounds "$rounds" --workload hits,misses,unrelated \
	--json "$out/bench-guest-other.json" >>"$out/bench-guest.txt" 2>&1
rc2=$?
cat "$out/bench-guest.txt"
if [ $rc -eq 0 ] && [ $rc2 -eq 0 ]; then
	echo "PASS guest/bench" >>"$GUEST_RESULTS"
else
	echo "FAIL guest/bench" >>"$GUEST_RESULTS"
fi
[ $rc -eq 0 ] && [ $rc2 -eq 0 ]
