#!/usr/bin/env bash
# The module's own tests: C programs using the uapi directly
# (tests/guest/test-*.c, built into $MRCACHE_BUILD/guest-tests).
set -u
bash "$GUEST_SRC/tests/run.sh" --suite guest --results "$GUEST_RESULTS" --timeout 300 \
	"$GUEST_BUILD"/guest-tests/test-*
