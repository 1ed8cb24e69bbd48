#!/usr/bin/env bash
# --unwind dwarf gives whole, exact call stacks: in vm-workload the munmap
# calls of workload_mmaps come from thread_main (25, in the second thread)
# and from main (40 + 10, the second batch in the forked child), and the
# report says which unwinder named them.
. "$(dirname "$0")/lib.sh"
W=$B/tests/prof/vm-workload
[ -x "$W" ] || fail "$W is not built"
"$PROF" -u dwarf -d 3 --top 200 -q -t "$WORK/r.txt" -o "$WORK/r.json" -- "$W" \
	|| fail "mrc-prof -u dwarf failed"
sed -n '/^Top/,/^Simulated/p' "$WORK/r.txt" | head -12
# from CALLER: munmap calls whose second frame is workload_mmaps, third CALLER.
from() {
	awk -v c="$1" '$5 == "munmap" && index($0, "<- workload_mmaps+") &&
		index($0, "(vm-workload) <- " c "+") { n += $1 } END { print n + 0 }' "$WORK/r.txt"
}
[ "$(from thread_main)" = 25 ] || fail "munmap via thread_main: $(from thread_main), expected 25"
[ "$(from main)" = 50 ] || fail "munmap via main: $(from main), expected 50"
grep -q 'by DWARF unwinding' "$WORK/r.txt" || fail "the report does not name the unwinder"
grep -q '"unwind": "dwarf"' "$WORK/r.json" || fail "the JSON does not name the unwinder"
echo "ok: 25 from thread_main, 50 from main"
"$PROF" -u psychic -q -- true 2>"$WORK/err"; rc=$?
[ $rc = 2 ] || fail "a bad --unwind value was accepted (rc $rc)"
