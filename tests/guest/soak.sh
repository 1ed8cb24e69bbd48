#!/usr/bin/env bash
# Guest side of `make guest-soak`: the module tests at their full sizes
# (check-guest runs the two long ones smaller to stay fast under TCG).
set -u
MRMON_STRESS_CHECKS=100000 MRMON_LEAK_CYCLES=100000 \
	bash "$GUEST_SRC/tests/run.sh" --suite guest-soak --results "$GUEST_RESULTS" --timeout 900 \
	"$GUEST_BUILD/guest-tests/test-mrmon-stress" "$GUEST_BUILD/guest-tests/test-mrmon-leak"
