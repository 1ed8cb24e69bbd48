#!/usr/bin/env bash
# mrc-audit over Soft-RoCE (docs/audit.md): tests/guest/audit/audit-verbs,
# an ordinary verbs program, runs each scenario under mrc-audit --json.
# A scenario passes when the program's own data oracle agrees with what
# it expects (misdirected or landed) AND the report names the kernel
# monitor as its witness and counts the expected stale uses: 2 and 1 for
# the stale cases, 0 for their controls and for mprotect (the -wr ones
# post through ibv_wr_*).  Then the overhead figures: audit-verbs bench
# with and without the audit, and the cost of one SGE check
# (mrc-audit-check-cost) with mrmon's words.
#   45-audit.sh [BENCH_N]
set -u
bench_n=${1:-200}
tool=$GUEST_BUILD/tools/mrc-audit
prog=$GUEST_BUILD/audit/audit-verbs
logs=$GUEST_RESDIR/audit
mkdir -p "$logs"
result() { echo "$1 guest/$2" >>"$GUEST_RESULTS"; echo "$1 guest/$2"; }

if [ ! -x "$prog" ] || [ ! -e "$GUEST_BUILD/libmrc-audit.so" ]; then
	result SKIP audit-setup
	echo "    | $prog or libmrc-audit.so not built (no libibverbs-dev?)"
	exit 0
fi
# Soft-RoCE as 40-rdma.sh brings it up, for a run of this suite alone.
/bin/ip link set lo up
if ! rdma link show rxe0 >/dev/null 2>&1 &&
   ! rdma link add rxe0 type rxe netdev lo >"$logs/setup.log" 2>&1; then
	result FAIL audit-setup
	sed 's/^/    | /' "$logs/setup.log"
	exit 1
fi

status=0
# json_num FILE KEY: the first "KEY":N in FILE.
json_num() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }

scenario() {	# name expected-stale-uses
	local name=$1 want=$2 log=$logs/$1.log json=$logs/$1.json rc stale witness
	rm -f "$json"
	timeout -k 5 300 "$tool" --json --output "$json" -- "$prog" "$name" >"$log" 2>&1 </dev/null
	rc=$?
	stale=$(json_num "$json" stale_uses)
	witness=$(grep -o '"witness":{"kind":"[a-z]*"' "$json" | cut -d'"' -f6)
	echo "(exit $rc, witness ${witness:-?}, stale uses ${stale:-?}, expected $want)" >>"$log"
	if [ $rc -eq 77 ]; then
		result SKIP "audit-$name"
	elif [ $rc -eq 0 ] && [ "$witness" = mrmon ] && [ "${stale:-x}" = "$want" ]; then
		result PASS "audit-$name"
	else
		result FAIL "audit-$name"
		status=1
	fi
	sed 's/^/    | /' "$log"
}

scenario remap 2
scenario remap-control 0
scenario mprotect 0
scenario mprotect-control 1
scenario dontneed 1
scenario dontneed-control 0
scenario remap-wr 1
scenario remap-wr-control 0

# --fatal: the first stale use raises SIGTRAP (exit by signal 5).
timeout -k 5 300 "$tool" --fatal -- "$prog" remap >"$logs/fatal.log" 2>&1 </dev/null
rc=$?
echo "(exit $rc)" >>"$logs/fatal.log"
if [ $rc -eq $((128 + 5)) ] && grep -q 'SIGTRAP follows' "$logs/fatal.log"; then
	result PASS audit-fatal
else
	result FAIL audit-fatal
	status=1
fi
grep -aE 'stale use|exit' "$logs/fatal.log" | head -4 | sed 's/^/    | /'

# The text report of one stale case, for the log reader.
"$tool" -- "$prog" remap >"$logs/remap-text.log" 2>&1 </dev/null
sed 's/^/    | /' "$logs/remap-text.log" | head -60

# Overhead (docs/audit.md): the same program with and without the audit.
"$prog" bench "$bench_n" >"$logs/bench-plain.log" 2>&1 </dev/null
"$tool" -- "$prog" bench "$bench_n" >"$logs/bench-audit.log" 2>&1 </dev/null
echo "    | without mrc-audit:"; grep '^bench' "$logs/bench-plain.log" | sed 's/^/    |   /'
echo "    | with mrc-audit:"; grep '^bench' "$logs/bench-audit.log" | sed 's/^/    |   /'
# The hot path alone: the words in mrmon's map, then the static word
# (1,000 and 10,000 registrations).
for n in 1000 10000; do
	for w in mrmon none; do
		"$GUEST_BUILD/tools/mrc-audit-check-cost" $n 2000000 $w 2>&1 | sed 's/^/    | /'
	done
done
exit $status
