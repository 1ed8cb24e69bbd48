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
# sysfs, not `rdma link show rxe0`: that names a link (rxe0/1) and fails
# on a device that exists, and the add then says "File exists".
/bin/ip link set lo up
if [ ! -e /sys/class/infiniband/rxe0 ] &&
   ! rdma link add rxe0 type rxe netdev lo >"$logs/setup.log" 2>&1; then
	result FAIL audit-setup
	sed 's/^/    | /' "$logs/setup.log"
	exit 1
fi

status=0
# json_num FILE KEY: the first "KEY":N in FILE.
json_num() { grep -o "\"$2\":[0-9]*" "$1" | head -1 | cut -d: -f2; }

# scenario name expected-stale-uses [witness: mrmon, the default, or uffd]
#   [harmless CLEARs at least] [tag prefix] [VAR=value for the audit]
scenario() {
	local name=$1 want=$2 w=${3:-mrmon} min_harmless=${4:-0} rc stale witness harmless
	local tag=${5:-${3:+$3-}}$1
	local log=$logs/$tag.log json=$logs/$tag.json
	rm -f "$json"
	env MRC_AUDIT_WITNESS="$w" ${6:-} timeout -k 5 300 "$tool" --json --output "$json" -- \
		"$prog" "$name" >"$log" 2>&1 </dev/null
	rc=$?
	stale=$(json_num "$json" stale_uses)
	harmless=$(json_num "$json" harmless)
	witness=$(grep -o '"witness":{"kind":"[a-z]*"' "$json" | cut -d'"' -f6)
	echo "(exit $rc, witness ${witness:-?}, stale uses ${stale:-?}, expected $want;" \
		"harmless CLEARs ${harmless:-?}, at least $min_harmless)" >>"$log"
	if [ $rc -eq 77 ]; then
		result SKIP "audit-$tag"
	elif [ $rc -eq 0 ] && [ "$witness" = "$w" ] && [ "${stale:-x}" = "$want" ] &&
	     [ "${harmless:-0}" -ge "$min_harmless" ]; then
		result PASS "audit-$tag"
	else
		result FAIL "audit-$tag"
		status=1
	fi
	sed 's/^/    | /' "$log"
}

scenario remap 2
scenario remap-control 0
scenario remap-raw 2
# The unmapping call: libc's munmap is seen, with its stack (the report's
# "call" names munmap and audit-verbs's remap in its stack); the same made
# as a raw syscall() cannot be, and the report must say "call":null.
call_check() {	# tag result-name grep-pattern-that-must-match [pattern that must not]
	local json=$logs/$1.json
	if [ -s "$json" ] && grep -q "$3" "$json" && { [ -z "${4:-}" ] || ! grep -q "$4" "$json"; }; then
		result PASS "audit-$2"
	else
		result FAIL "audit-$2"
		status=1
	fi
	grep -o '"call":\(null\|{"name":"[^"]*"\)' "$json" 2>/dev/null | sort | uniq -c | sed 's/^/    | /'
}
call_check remap call-munmap '"call":{"name":"munmap","addr":[0-9]*,"length":65536,"tid":[0-9]*,"stack":\[[^]]*audit-verbs'
call_check remap-raw call-raw-unseen '"call":null' '"call":{'
scenario mprotect 0
scenario mprotect-control 1
scenario dontneed 1
scenario dontneed-control 0
scenario remap-wr 1
scenario remap-wr-control 0
# A huge-page split in the buffer's 2 MiB window: mrmon says CLEAR, the
# pages stay; the re-check against the pinned pages finds them unchanged
# (at least one harmless CLEAR, no stale use).  Its control turns the
# re-check off and must see the CLEAR as a stale use; split-dontneed
# changes the pages after the split and must stay stale with the re-check.
scenario split 0 "" 1
scenario split 1 mrmon 0 noverify- MRC_AUDIT_VERIFY=0
scenario split-dontneed 1
# The weaker witness, where the module is absent (forced here): the same
# verdicts for what userfaultfd reports (unmaps, discards).
scenario remap 2 uffd
scenario remap-control 0 uffd
scenario mprotect 0 uffd
scenario dontneed 1 uffd
scenario remap-wr 1 uffd

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

# A real client: libfabric (verbs;ofi_rxm over rxe, tests/guest/fabric's
# fabric-churn, which knows nothing of the audit).  With memhooks and the
# raw munmap its MR cache hands out stale registrations (70-fabric.sh's
# negative control): every stale transfer the program sees must be a stale
# use in the report, one 64 KiB fi_write each.  With libmrcache-fabric
# (mrmon) or the cache off: none of either.  (The program's own exit status
# is not asked for: it also wants a new key after every remap, which the
# cache off does not give.)
fabric_churn=$GUEST_BUILD/fabric/fabric-churn
fabric_preload=$GUEST_BUILD/libmrcache-fabric-preload.so
fabric() {	# name expect(stale|none) env... -- churn args
	local name=$1 expect=$2 log=$logs/$1.log json=$logs/$1.json rc seen stale
	shift 2
	rm -f "$json"
	timeout -k 5 300 env "$@" "$tool" --json --output "$json" -- "$fabric_churn" churn "$fabric_iters" \
		$fabric_args >"$log" 2>&1 </dev/null
	rc=$?
	seen=$(sed -n 's/^churn .*: stale \([0-9]*\),.*/\1/p' "$log")
	stale=$(json_num "$json" stale_uses)
	echo "(exit $rc, the program's stale transfers ${seen:-?}, the audit's stale uses ${stale:-?})" >>"$log"
	if { [ "$expect" = stale ] && [ "${seen:-0}" -gt 0 ] && [ "$seen" = "$stale" ]; } ||
	   { [ "$expect" = none ] && [ "${seen:-x}" = 0 ] && [ "${stale:-x}" = 0 ]; }; then
		result PASS "audit-$name"
	else
		result FAIL "audit-$name"
		status=1
	fi
	grep -aE '^churn|^\(exit' "$log" | sed 's/^/    | /'
}
if [ -x "$fabric_churn" ] && [ -e "$fabric_preload" ]; then
	if [ ! -e /sys/class/infiniband/rxefab ]; then	# as 70-fabric.sh
		/bin/ip link add fabric0 type dummy && /bin/ip addr add 10.77.0.1/24 dev fabric0 &&
			/bin/ip link set fabric0 up && rdma link add rxefab type rxe netdev fabric0
	fi >"$logs/fabric-setup.log" 2>&1
	export FI_PROVIDER="verbs;ofi_rxm" FI_UNIVERSE_SIZE=16
	fabric_iters=30 fabric_args="--raw --expect-stale"
	fabric fabric-memhooks-raw stale FI_MR_CACHE_MONITOR=memhooks
	fabric_args=--raw
	fabric fabric-mrmon-raw none LD_PRELOAD="$fabric_preload"
	fabric fabric-nocache-raw none FI_MR_CACHE_MONITOR=disabled
	unset FI_PROVIDER FI_UNIVERSE_SIZE
else
	result SKIP audit-fabric
fi

# The text report of one stale case, for the log reader.
"$tool" -- "$prog" remap >"$logs/remap-text.log" 2>&1 </dev/null
sed 's/^/    | /' "$logs/remap-text.log" | head -60

# Overhead (docs/audit.md): the same program with and without the audit.
"$prog" bench "$bench_n" >"$logs/bench-plain.log" 2>&1 </dev/null
"$tool" -- "$prog" bench "$bench_n" >"$logs/bench-audit.log" 2>&1 </dev/null
MRC_AUDIT_WITNESS=uffd "$tool" -- "$prog" bench "$bench_n" >"$logs/bench-audit-uffd.log" 2>&1 </dev/null
MRC_AUDIT_VERIFY=0 "$tool" -- "$prog" bench "$bench_n" >"$logs/bench-audit-noverify.log" 2>&1 </dev/null
echo "    | without mrc-audit:"; grep '^bench' "$logs/bench-plain.log" | sed 's/^/    |   /'
echo "    | with mrc-audit:"; grep '^bench' "$logs/bench-audit.log" | sed 's/^/    |   /'
echo "    | with mrc-audit, MRC_AUDIT_VERIFY=0 (no frames read at registration):"
grep '^bench' "$logs/bench-audit-noverify.log" | sed 's/^/    |   /'
echo "    | with mrc-audit, the userfaultfd witness:"
grep '^bench' "$logs/bench-audit-uffd.log" | sed 's/^/    |   /'
# The hot path alone: the words in mrmon's map, then the static word
# (1,000 and 10,000 registrations).
for n in 1000 10000; do
	for w in mrmon none; do
		"$GUEST_BUILD/tools/mrc-audit-check-cost" $n 2000000 $w 2>&1 | sed 's/^/    | /'
	done
done
exit $status
