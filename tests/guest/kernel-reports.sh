#!/usr/bin/env bash
# The lines of a guest kernel log that report a kernel problem, the
# harness's kernel-log check (run.sh), minus the reports a test expected.
#   kernel-reports.sh [GREP OPTIONS (-q, -A12)] [FILE...]   (stdin without FILE)
# Exit status as grep's: 0 if a report is found, 1 if none.
#
# The pattern: "BUG:" covers KASAN ("BUG: KASAN: slab-out-of-bounds"),
# KCSAN ("BUG: KCSAN: data-race"), DEBUG_ATOMIC_SLEEP ("BUG: sleeping
# function called from invalid context"), the soft-lockup ("watchdog: BUG:
# soft lockup") and workqueue detectors; "WARNING:" covers lockdep
# ("WARNING: possible circular locking dependency detected", "...
# recursive locking ...", "... inconsistent lock state", "... suspicious
# RCU usage") and WARN_ON.  The hard-lockup and hung-task detectors and
# RCU stalls say neither, and are matched by name.
#
# Expected reports: a test that makes the kernel print a report on purpose
# brackets it in the kernel log with "mrcache-expect: NAME begin" and
# "mrcache-expect: NAME end".  The one NAME known is oom-kill
# (test-mrmon-oom): an OOM kill prints the allocating task's stack
# ("Call Trace:") between "invoked oom-killer:" and "Killed process".
# Inside the brackets only those "Call Trace:" lines are dropped; every
# other report there (a soft lockup of the reaper, an RCU stall, a hung
# task, a second stack outside the OOM report) still counts.
set -u
pat='WARNING:|BUG:|BUG at|Oops|KASAN|KCSAN|UBSAN|general protection|Call Trace|hard LOCKUP|INFO: task .* blocked for more than|detected stall|turning off the locking correctness validator|Kernel panic'
opts=()
while [ $# -gt 0 ] && [ "${1#-}" != "$1" ]; do
	opts+=("$1")
	shift
done
without_expected() {
	awk '
		/mrcache-expect: oom-kill begin/ { expect = 1; oom = 0 }
		/mrcache-expect: oom-kill end/ { expect = 0; oom = 0 }
		expect && /invoked oom-killer:/ { oom = 1 }
		expect && oom && /Call Trace:/ { next }
		expect && /Killed process / { oom = 0 }
		{ print }' "$@"
}
if [ $# -eq 0 ]; then
	without_expected
else
	for f; do
		[ -f "$f" ] && without_expected "$f"
	done
fi | grep -aE "${opts[@]}" "$pat"
