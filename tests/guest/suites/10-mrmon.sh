#!/usr/bin/env bash
# The module's own tests: C programs using the uapi directly
# (tests/guest/test-*.c, built into $MRC_TEST_BUILD/guest-tests).  The two
# long ones run smaller here: stress 10,000 replacements, leak 20,000
# cycles (under TCG 100,000 take about 6 and 2 minutes); `make guest-soak`
# runs them at full size.
set -u
# A test that changes a module parameter (the fuzzer's limits) puts it back
# when it ends, but not when its timeout kills it; the tests after it would
# then run on its limits.  Each test starts from the parameters found here.
params=$(mktemp)
for f in /sys/module/mrmon/parameters/*; do
	[ -w "$f" ] && printf '%s %s\n' "$f" "$(cat "$f")"
done >"$params"
MRMON_STRESS_CHECKS=${MRMON_STRESS_CHECKS:-10000} MRMON_LEAK_CYCLES=${MRMON_LEAK_CYCLES:-20000} \
	bash "$GUEST_SRC/tests/run.sh" --suite guest --results "$GUEST_RESULTS" --timeout "${GUEST_TEST_TIMEOUT:-300}" \
	--before "while read -r f v; do echo \"\$v\" >\"\$f\"; done <$params 2>/dev/null" \
	"$GUEST_BUILD"/guest-tests/test-*
