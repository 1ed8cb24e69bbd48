#!/usr/bin/env bash
# The module's own tests: C programs using the uapi directly
# (tests/guest/test-*.c, built into $MRCACHE_BUILD/guest-tests).  The two
# long ones run smaller here: stress 10,000 replacements, leak 20,000
# cycles (under TCG 100,000 take about 6 and 2 minutes); `make guest-soak`
# runs them at full size.
set -u
MRMON_STRESS_CHECKS=${MRMON_STRESS_CHECKS:-10000} MRMON_LEAK_CYCLES=${MRMON_LEAK_CYCLES:-20000} \
	bash "$GUEST_SRC/tests/run.sh" --suite guest --results "$GUEST_RESULTS" --timeout 300 \
	"$GUEST_BUILD"/guest-tests/test-*
