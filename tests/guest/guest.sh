#!/usr/bin/env bash
# Runs inside the guest, in the host's root (read-only) as root.  Loads
# mrmon and the extra modules, then runs every suite script
# tests/guest/suites/*.sh in name order.  A suite appends
# "PASS|FAIL|SKIP guest/NAME" lines to $GUEST_RESULTS (tests/run.sh does
# that) and may exit non-zero; the next suite still runs.
set -u
. "${1:?guest.env}"
export GUEST_RESULTS=$GUEST_RESDIR/results.txt MRC_TEST_BUILD=$GUEST_BUILD
export GUEST_RESDIR GUEST_BUILD GUEST_SRC GUEST_TEST_TIMEOUT TMPDIR=/tmp HOME=/tmp
# run.sh --env: NAME=VALUE words for the tests (e.g. MRMON_TIME_SCALE).
[ -z "${GUEST_ENV:-}" ] || export ${GUEST_ENV?}
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
: >"$GUEST_RESULTS"
cd "$GUEST_SRC" || exit 1
if insmod "$GUEST_KMOD/mrmon.ko" && [ -c /dev/mrmon ]; then
	echo "PASS guest/mrmon-load" >>"$GUEST_RESULTS"
else
	echo "FAIL guest/mrmon-load" >>"$GUEST_RESULTS"
fi
for m in $GUEST_MODULES; do
	if modprobe "$m"; then
		echo "PASS guest/modprobe-$m" >>"$GUEST_RESULTS"
	else
		echo "FAIL guest/modprobe-$m" >>"$GUEST_RESULTS"
	fi
done
status=0
for s in $GUEST_SUITES; do
	echo "== guest suite $(basename "$s")"
	bash "$s" || status=1
done
# Every descriptor is closed now: the module must unload (no leaked
# reference).
if rmmod mrmon; then
	echo "PASS guest/mrmon-unload" >>"$GUEST_RESULTS"
else
	echo "FAIL guest/mrmon-unload" >>"$GUEST_RESULTS"
	status=1
fi
exit $status
