#!/usr/bin/env bash
# A program with small I/O gets a verdict that helps: the VM calls' share
# of the run time and the block size from which registering would pay,
# instead of "saves -0.001 ms".  Negative control: vm-workload with a
# registration cost so high that its 7 cache hits save most of the run
# gets no such verdict.
. "$(dirname "$0")/lib.sh"
S=$B/tests/prof/small-io V=$B/tests/prof/vm-workload
[ -x "$S" ] && [ -x "$V" ] || fail "helpers are not built"
"$PROF" -q -t "$WORK/s.txt" -o "$WORK/s.json" -c verbs -c uring:backend=uring -- "$S" \
	|| fail "mrc-prof failed on small-io"
sed -n '/Simulated/,/^$/p' "$WORK/s.txt"
grep -Eq 'verdict: no I/O buffer large enough to register: the VM calls took [0-9.]+ ms, [0-9.]+% of the [0-9.]+ s run' \
	"$WORK/s.txt" || fail "no run-time share in the verdict"
grep -Eq 'verbs: registering pays over copying at 0.10 ns/B from blocks of [0-9.]+ (KiB|MiB)' "$WORK/s.txt" \
	|| fail "no break-even block size for verbs"
grep -Eq 'uring: registering pays over copying' "$WORK/s.txt" || fail "no verdict for the second configuration"
grep -q '"savings_small": true' "$WORK/s.json" || fail "JSON: savings_small is not true"
echo "ok: small-io gets the share and the break-even sizes"
"$PROF" -q -t "$WORK/v.txt" -o "$WORK/v.json" -c big:reg_us=100000 -- "$V" \
	|| fail "mrc-prof failed on vm-workload"
grep -q 'verdict:' "$WORK/v.txt" && fail "control: a cache saving most of the run got the small-I/O verdict"
grep -q '"savings_small": false' "$WORK/v.json" || fail "control: JSON savings_small is not false"
echo "ok: control: no small-I/O verdict where the cache pays"
