#!/usr/bin/env bash
# The library's whole host suite again, with the kernel monitor.
# Through GUEST_ENV (the 6.12 guest, mk/guest.mk), comma-separated names
# after "test-": GUEST_LIB_TESTS, prefixes of the only tests to run;
# GUEST_LIB_SKIP, tests not to run.
set -u
# Tests of the build and the docs, not of the kernel: they run host tools
# (make, cc, groff) that take half a minute under emulation; the host
# suite runs them.
skip=",man-pages,pkgconfig-link,make-default-goal,${GUEST_LIB_SKIP:-},"
IFS=, read -ra prefixes <<<"${GUEST_LIB_TESTS:-}"
[ ${#prefixes[@]} -gt 0 ] || prefixes=("")
tests=()
for prefix in "${prefixes[@]}"; do
	for prog in "$GUEST_BUILD"/tests/test-"$prefix"*; do
		name=${prog##*/test-}
		[ -e "$prog" ] && [[ $skip != *",$name,"* ]] && tests+=("$prog")
	done
done
if [ ${#tests[@]} -eq 0 ]; then
	# A subset that names nothing is a typo, not a pass.
	if [ -n "${GUEST_LIB_TESTS:-}" ]; then
		echo "GUEST_LIB_TESTS=$GUEST_LIB_TESTS names no test"
		echo "FAIL guest/library-selection" >>"$GUEST_RESULTS"
		exit 1
	fi
	echo "no library tests built"
	exit 0
fi
MRCACHE_MONITOR=kernel MRC_TEST_LOGDIR=$GUEST_RESDIR/logs/guest-lib \
	bash "$GUEST_SRC/tests/run.sh" --suite guest --results "$GUEST_RESULTS" --timeout "${GUEST_TEST_TIMEOUT:-300}" \
	"${tests[@]}"
