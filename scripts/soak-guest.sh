#!/usr/bin/env bash
# The soak inside the QEMU guest (a suite for tests/guest/run.sh): the
# kernel monitor under scripts/soak.sh for SOAK_MINUTES (default 4), then
# the /dev/mrmon fuzzer for SOAK_FUZZ_OPS operations (default 500,000).
# Run from the host:
#   make BUILD=build check-guest GUEST_SUITES=$PWD/scripts/soak-guest.sh \
#        GUEST_TIMEOUT=1800 RESULTS=build/soak-results.txt
# Output: $GUEST_RESDIR/logs/soak.txt (build/guest/res/logs/soak.txt).
set -u
mkdir -p "$GUEST_RESDIR/logs"
out=$GUEST_RESDIR/logs/soak.txt
status=0
if bash "$GUEST_SRC/scripts/soak.sh" -b "$GUEST_BUILD" -m "${SOAK_MINUTES:-4}" -M kernel >"$out" 2>&1; then
	echo "PASS guest/soak-kernel" >>"$GUEST_RESULTS"
else
	echo "FAIL guest/soak-kernel" >>"$GUEST_RESULTS"
	status=1
fi
sed 's/^/    | /' "$out"
if MRMON_FUZZ_OPS=${SOAK_FUZZ_OPS:-500000} "$GUEST_BUILD/guest-tests/test-mrmon-fuzz" >>"$out" 2>&1; then
	echo "PASS guest/soak-fuzz" >>"$GUEST_RESULTS"
else
	echo "FAIL guest/soak-fuzz" >>"$GUEST_RESULTS"
	status=1
fi
tail -n 6 "$out" | sed 's/^/    | /'
exit $status
