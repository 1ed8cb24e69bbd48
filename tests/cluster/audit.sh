#!/usr/bin/env bash
# Sourced by node0.sh (the full run, or alone with --subset audit): the
# two-node jobs under mrc-audit (docs/audit.md "Two nodes").  Each rank
# (and each fi_pingpong side) preloads libmrc-audit.so and writes one JSON
# report, /tmp/audit-NAME.PID.json on its own node; audit_judge gathers
# both nodes' reports into $logs/NAME.audit.json and checks them against
# what the job itself saw (audit_judge).  The churn with the raw munmap:
#   memhooks (the negative control that corrupts transfers): as many
#   stale uses of the job's buffers as the churn's stale transfers;
#   libmrcache-fabric (mrmon) and the cache disabled: none;
# and fi_pingpong: none.  Last, the audit's cost on the job: the churn
# under mrmon, without and with the audit, alternately, five times each.
audit_lib=$GUEST_BUILD/libmrc-audit.so
if [ ! -e "$audit_lib" ]; then
	result SKIP audit-setup
	echo "    | $audit_lib not built (no libibverbs-dev?)"
	return 0
fi

# audit_env NAME: the variables that make a process audit itself into
# /tmp/audit-NAME.PID.json (mpirun's -x takes them as they are).
audit_env() {
	echo "MRC_AUDIT_JSON=1 MRC_AUDIT_OUTPUT=/tmp/audit-$1.%p.json${AUDIT_VERIFY:+ MRC_AUDIT_VERIFY=$AUDIT_VERIFY}"
}
audit_x() { local v; for v in $(audit_env "$1"); do printf -- '-x\n%s\n' "$v"; done; }

# json_sum FILE KEY: the sum of every "KEY":N in FILE.
json_sum() { grep -aoE "\"$2\":[0-9]+" "$1" | cut -d: -f2 | awk '{s += $1} END {print s + 0}'; }

# The churn's largest message (mpi-churn.c, MAX_SIZE): a registration
# larger than that is not of a buffer of the job but one of libfabric's
# own (ofi_rxm's buffer pools, 16.3 and 16.5 MiB, registered at start).
churn_max=$((4 << 20))

# audit_uses FILE: one line per stale use listed in FILE's reports,
# "LENGTH CAUSE" (the registration's length, the invalidation's cause).
audit_uses() {
	paste -d' ' \
		<(grep -aoE '"registration":\{"id":[0-9]+,"call":"[a-z_0-9]+","addr":[0-9]+,"length":[0-9]+' "$1" |
			grep -oE '[0-9]+$') \
		<(grep -aoE '"invalidation":\{"cause":"[A-Z]+"' "$1" | cut -d'"' -f6)
}

# audit_judge NAME WANT: WANT "job" (stale uses of the job's buffers = the
# job's stale transfers, and at least one) or "zero" (none of the job's
# buffers, no stale transfer).  Either way: two reports, both with mrmon
# as the witness and the CLEAR re-check on (the ranks run as root: pagemap
# gives them frame numbers), every stale use listed, and none of
# libfabric's own pools.  Before the re-check, every configuration showed
# 0-12 stale uses of those pools, all CLEAR, with their data intact: the
# huge-page split of docs/audit.md ("Harmless CLEARs").  Set
# AUDIT_VERIFY=0 to see them again (the re-check's control).
audit_judge() {
	local name=$1 want=$2 out=$logs/$1.audit.json reports witnessed uses listed mine pool poolbad risk job ok=0
	local rechecked harmless
	{
		cat /tmp/audit-"$name".*.json 2>/dev/null
		echo
		rsh.sh node1 "cat /tmp/audit-$name.*.json; echo"
	} >"$out" 2>&1
	reports=$(grep -aoE '"pid":[0-9]+' "$out" | wc -l)
	witnessed=$(grep -aoE '"witness":\{"kind":"mrmon"' "$out" | wc -l)
	uses=$(json_sum "$out" stale_uses)
	listed=$(audit_uses "$out" | grep -c .)
	mine=$(audit_uses "$out" | awk -v m=$churn_max '$1 <= m' | grep -c .)
	pool=$(audit_uses "$out" | awk -v m=$churn_max '$1 > m {print $2}' | sort | uniq -c | xargs)
	poolbad=$(audit_uses "$out" | awk -v m=$churn_max '$1 > m' | grep -c .)
	rechecked=$(grep -aoE '"clear_recheck":\{"enabled":true' "$out" | wc -l)
	harmless=$(json_sum "$out" harmless)
	risk=$(grep -aoE '"at_risk":\{"count":[0-9]+' "$out" | grep -oE '[0-9]+$' | awk '{s += $1} END {print s + 0}')
	job=$(grep -aoE 'mpi-churn: pattern .* stale [0-9]+' "$logs/$name.log" | sed 's/.* stale //')
	[ "$want" = zero ] && job=${job:-0}
	if [ "${AUDIT_VERIFY:-1}" = 0 ]; then
		poolbad=0 rechecked=2	# the control: report, do not judge the pools
	fi
	if [ "$reports" = 2 ] && [ "$witnessed" = 2 ] && [ "$listed" = "$uses" ] &&
	   [ "$poolbad" = 0 ] && [ "$rechecked" = 2 ]; then
		case $want in
		job) [ "$mine" -gt 0 ] && [ "$mine" = "$job" ] && ok=1 ;;
		zero) [ "$mine" = 0 ] && [ "$job" = 0 ] && ok=1 ;;
		esac
	fi
	if [ $ok = 1 ]; then result PASS "$name-report"; else result FAIL "$name-report"; status=1; fi
	echo "    | reports $reports (witness mrmon: $witnessed); stale uses $uses" \
		"(per report: $(grep -aoE '"stale_uses":[0-9]+' "$out" | cut -d: -f2 | xargs); listed $listed):" \
		"$mine of the job's buffers, against the job's ${job:-?} stale transfers;" \
		"of libfabric's pools: ${pool:-none}; at risk $risk;" \
		"CLEARs re-checked and found harmless: $harmless (re-check on in $rechecked reports)"
	audit_uses "$out" | sort | uniq -c | sed 's/^ */    |   /; s/$/ (count, registration length, cause)/'
}

rm -f /tmp/audit-*.json
rsh.sh node1 'rm -f /tmp/audit-*.json' >/dev/null 2>&1

# fi_pingpong allocates one buffer at start and frees it at exit
# (util/pingpong.c, pp_alloc_msgs): nothing to churn, so no stale use.
# shellcheck disable=SC2046	# audit_env's words are separate variables
pingpong pingpong-audit LD_PRELOAD="$audit_lib" $(audit_env pingpong-audit)
audit_judge pingpong-audit zero

mrmon_audit=(-x LD_PRELOAD="$preload:$audit_lib" -x MRMON_FI_STATS=1)
memhooks_audit=("${memhooks[@]}" -x LD_PRELOAD="$audit_lib")
nocache_audit=("${nocache[@]}" -x LD_PRELOAD="$audit_lib")
# audit_churn NAME CONFIG WANT [CHURN-OPTION...]: the churn with the raw
# munmap under the audit, then the reports judged.
audit_churn() {
	local name=$1 want=$3 ax
	declare -n cfg=$2
	shift 3
	mapfile -t ax < <(audit_x "$name")
	watched "$name" 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" "${cfg[@]}" \
		"${ax[@]}" "$churn" --iters "$iters" --raw "$@"
	audit_judge "$name" "$want"
}
audit_churn audit-churn-memhooks-raw memhooks_audit job --expect-stale
audit_churn audit-churn-mrmon-raw mrmon_audit zero
audit_churn audit-churn-nocache-raw nocache_audit zero

# The cost: rank 0's loop (ns per message) and the whole mpirun (s).
declare -A cost=()
for k in 1 2 3 4 5; do
	for on in off on; do
		name=audit-cost-$on-$k
		if [ $on = on ]; then
			mapfile -t ax < <(audit_x "$name")
			watched "$name" 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" \
				"${mrmon_audit[@]}" "${ax[@]}" "$churn" --iters "$iters"
		else
			watched "$name" 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" \
				"${mrmon[@]}" "$churn" --iters "$iters"
		fi
		cost[$on-ns]+=" $(grep -aoE 'ns/msg [0-9]+' "$logs/$name.log" | cut -d' ' -f2)"
		cost[$on-s]+=" $(grep -aoE '^\([0-9]+s, exit' "$logs/$name.log" | tr -dc 0-9)"
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for on in off on; do
	echo "    | audit $on: ns/msg${cost[$on-ns]} (median $(median <<<"${cost[$on-ns]}")), job s${cost[$on-s]} (median $(median <<<"${cost[$on-s]}"))"
done | tee -a "$logs/audit-cost.log"
