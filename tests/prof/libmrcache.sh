#!/usr/bin/env bash
# A program using libmrcache: mrc-prof reads its MRCACHE_PROF dump and
# splits the time between lookup, registration, deregistration, monitor
# and invalidation work; the counts match the cache's own statistics.
. "$(dirname "$0")/lib.sh"
L=$B/tests/prof/lib-workload
[ -x "$L" ] || fail "$L is not built"
# A sanitizer build (make SAN=asan): LeakSanitizer stops the world from a
# CLONE_UNTRACED thread, which no tracer follows and whose mmap then fails
# under the filter (docs/mrc-prof.md, Limitations).
if nm "$L" 2>/dev/null | grep -q __asan_init; then export ASAN_OPTIONS=detect_leaks=0; fi
"$PROF" -t "$WORK/r.txt" -o "$WORK/r.json" -- "$L" hooks >"$WORK/stats"; rc=$?
[ $rc = 77 ] && skip "the hooks monitor cannot run here"
[ $rc = 0 ] || fail "lib-workload under mrc-prof failed ($rc)"
cat "$WORK/stats"; sed -n '/^libmrcache/,$p' "$WORK/r.txt"
stat() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$WORK/stats"; }
count() {
	awk -v k="\"$1\": {" 'index($0, k) { f = 1; next } f && /"count"/ { gsub(/[^0-9]/, ""); print; exit }' \
		"$WORK/r.json"
}
grep -q '"dumps": 1,' "$WORK/r.json" || fail "expected one MRCACHE_PROF dump"
[ "$(count lookup)" = "$(stat hits)" ] || fail "lookups $(count lookup) != hits $(stat hits)"
[ "$(count miss)" = "$(stat misses)" ] || fail "misses $(count miss) != $(stat misses)"
[ "$(count register)" = $(( $(stat registrations) + $(stat failures) )) ] || fail "registrations differ"
[ "$(count deregister)" = "$(stat deregistrations)" ] || fail "deregistrations differ"
[ "$(count monitor)" -gt 0 ] || fail "no monitor work recorded"
total() {
	awk -v k="\"$1\": {" 'index($0, k) { f = 1; next } f && /"total_ns"/ { gsub(/[^0-9]/, ""); print; exit }' \
		"$WORK/r.json"
}
[ "$(count miss_own)" = "$(count miss)" ] || fail "every miss has its own time"
[ "$(total miss_own)" -lt "$(total miss)" ] || fail "a miss's own time must exclude its registration"
# An invalidation's span covers draining the events and marking regions
# (lib/cache/invalidate.c); their deregistrations run after it, as the lock
# is released, so its own time may equal its inclusive time, never exceed it.
[ "$(total invalidation_own)" -le "$(total invalidation)" ] || \
	fail "an invalidation's own time exceeds its inclusive time"
echo "ok: time split counts match the cache's statistics"
