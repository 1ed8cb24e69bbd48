#!/usr/bin/env bash
# Guest side of `make guest-bench`: the figures of docs/mrmon.md.
set -u
mkdir -p "$GUEST_RESDIR/logs"
{
	echo "== bench-mrmon (kernel $(uname -r), $(nproc) vCPU, TCG)"
	"$GUEST_BUILD/guest-tests/bench-mrmon" 9
	echo "== spurious invalidations"
	"$GUEST_BUILD/guest-tests/test-mrmon-spurious"
} 2>&1 | tee "$GUEST_RESDIR/logs/bench.txt"
echo "PASS guest/bench" >>"$GUEST_RESULTS"
bash "$(dirname "$0")/kdreg2/suite.sh"
