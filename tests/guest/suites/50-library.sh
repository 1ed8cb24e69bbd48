#!/usr/bin/env bash
# The library's whole host suite again, with the kernel monitor.
set -u
tests=("$GUEST_BUILD"/tests/test-*)
[ -e "${tests[0]}" ] || { echo "no library tests built"; exit 0; }
MRCACHE_MONITOR=kernel MRCACHE_LOGDIR=$GUEST_RESDIR/logs/guest-lib \
	bash "$GUEST_SRC/tests/run.sh" --suite guest --results "$GUEST_RESULTS" --timeout "${GUEST_TEST_TIMEOUT:-300}" \
	"${tests[@]}"
