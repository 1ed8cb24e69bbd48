#!/usr/bin/env bash
# UCX under mrc-audit (docs/audit.md "UCX"), one guest, not part of any
# target: `make check-guest GUEST_SUITES=$PWD/tests/cluster/ucx-audit.sh`.
# ucx_perftest (Debian's ucx-utils, on the host the guest mounts) as
# server and client over Soft-RoCE on lo with UCX_TLS=rc_verbs,ud_verbs,
# both under mrc-audit --json.  ucx_perftest allocates its buffers once,
# so the check is the one of fi_pingpong in the cluster suite: the test
# runs, both reports name mrmon as the witness and count posts through
# libibverbs, and no stale use.
set -u
logs=$GUEST_RESDIR/ucx
mkdir -p "$logs"
result() { echo "$1 guest/$2" >>"$GUEST_RESULTS"; echo "$1 guest/$2"; }
tool=$GUEST_BUILD/tools/mrc-audit
if ! command -v ucx_perftest >/dev/null || [ ! -x "$tool" ]; then
	result SKIP ucx-audit
	echo "    | needs ucx_perftest (ucx-utils) and $tool"
	exit 0
fi
/bin/ip link set lo up
[ -e /sys/class/infiniband/rxe0 ] || rdma link add rxe0 type rxe netdev lo >"$logs/setup.log" 2>&1
ucx_info -d >"$logs/ucx_info.log" 2>&1
grep -aE 'Transport|Device' "$logs/ucx_info.log" | sed 's/^/    | /' | head -20

"$tool" -- ucx_info -d >"$logs/ucx_info-audited.log" 2>&1
# The regression check of the audit's lookup of libibverbs inside UCX's
# RTLD_LOCAL libuct_ib (verbs.c, mra_real): the same rc_verbs devices.
plain=$(grep -c 'Transport: rc_verbs' "$logs/ucx_info.log")
audited=$(grep -c 'Transport: rc_verbs' "$logs/ucx_info-audited.log")
echo "    | ucx_info -d: rc_verbs devices $plain, under mrc-audit $audited"
if [ "$plain" -gt 0 ] && [ "$plain" = "$audited" ]; then
	result PASS ucx-devices-audited
else
	result FAIL ucx-devices-audited
	UCX_LOG_LEVEL=debug "$tool" -- ucx_info -d >"$logs/ucx_info-audited-debug.log" 2>&1
	grep -aiE 'ib_|verbs|rxe' "$logs/ucx_info-audited-debug.log" |
		grep -aiE 'fail|error|unsupp|not |cannot|skip' | head -20 | sed 's/^/    | /'
fi
# rc_verbs needs an auxiliary transport for its wire-up (tcp cannot be
# one: "no auxiliary transport"): ud_verbs.
export UCX_TLS=${UCX_TLS:-rc_verbs,ud_verbs,self}
ibv_devinfo -v 2>&1 | grep -aE 'GID|state' | sed 's/^/    | /' | head -8
pt=(ucx_perftest -t "${UCX_TEST:-tag_bw}" -s 1048576 -n 50)
rm -f "$logs"/*.json
# pair NAME [mrc-audit...]: server and client, each under the prefix.
pair() {
	local name=$1 rc src server
	shift
	timeout -k 5 120 "$@" "${pt[@]}" >"$logs/$name-server.log" 2>&1 &
	server=$!
	sleep 3
	timeout -k 5 120 "$@" "${pt[@]}" 127.0.0.1 >"$logs/$name.log" 2>&1
	rc=$?
	wait "$server"
	src=$?
	echo "(client exit $rc, server exit $src)" >>"$logs/$name.log"
	grep -aE 'WARN|ERROR|^ +[0-9]+ |Final|exit' "$logs/$name.log" | sed "s/^/    | $name: /" | tail -12
	grep -aE 'WARN|ERROR' "$logs/$name-server.log" | sed "s/^/    | $name server: /" | head -4
	if [ $rc -eq 0 ] && [ $src -eq 0 ]; then result PASS "$name"; else result FAIL "$name"; fi
	[ $rc -eq 0 ] && [ $src -eq 0 ]
}
# UD's address handles: GID 0 (lo's fe80::) gives "Address not valid",
# GID 1 (::ffff:127.0.0.1) UD endpoints that time out ("unhandled timeout
# error"); ::1 (GID 2) works.  Once without the audit (the control that
# UCX runs at all), then under it.
export UCX_IB_GID_INDEX=${UCX_IB_GID_INDEX:-2}
pair ucx-plain env
pair ucx-audited "$tool" --json -o "$logs/%p.json" --
rc=$?
src=$rc
cat "$logs"/*.json >"$logs/all.json" 2>/dev/null
reports=$(grep -aoE '"pid":[0-9]+' "$logs/all.json" | wc -l)
witnessed=$(grep -aoE '"witness":\{"kind":"mrmon"' "$logs/all.json" | wc -l)
stale=$(grep -aoE '"stale_uses":[0-9]+' "$logs/all.json" | cut -d: -f2 | xargs)
regs=$(grep -aoE '"registrations":\{"total":[0-9]+' "$logs/all.json" | grep -oE '[0-9]+$' | xargs)
posts=$(grep -aoE '"posts":\{[^}]*\}' "$logs/all.json" | xargs)
echo "    | reports $reports (mrmon: $witnessed), registrations $regs, stale uses $stale; $posts"
if [ $rc -eq 0 ] && [ $src -eq 0 ] && [ "$reports" = 2 ] && [ "$witnessed" = 2 ] &&
   [ "$stale" = "0 0" ] && [ "$(grep -aoE '"send":[1-9]' "$logs/all.json" | wc -l)" = 2 ]; then
	result PASS ucx-audit
else
	result FAIL ucx-audit
fi
