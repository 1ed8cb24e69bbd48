#!/usr/bin/env bash
# Runs inside the guest (tests/guest/guest.sh sources the environment):
# Soft-RoCE on lo, then mrc-rdma's churn check under monitor `none` (the
# negative control: it must see stale transfers) and under every other
# monitor (it must not), then the verbs tests of the host suite, which
# skip on the host for want of a device.
#   suite.sh ITERS CONTROL_ITERS [bench-args...]
# With bench arguments it also runs `mrc-rdma bench` (the figures).
# Logs go to $GUEST_RESDIR/rdma/ (the host's <guest out>/res/rdma/).
set -u
iters=${1:-2000} control_iters=${2:-400}
shift 2 2>/dev/null
tool=$GUEST_BUILD/tools/mrc-rdma
logs=$GUEST_RESDIR/rdma
mkdir -p "$logs"
result() { echo "$1 guest/$2" >>"$GUEST_RESULTS"; echo "$1 guest/$2"; }
show() { sed 's/^/    | /' "$1"; }

if [ ! -x "$tool" ]; then
	result SKIP rdma-setup
	echo "    | $tool not built (no libibverbs?)"
	exit 0
fi
# rxe needs a netdev that is up; busybox would shadow iproute2's ip.
/bin/ip link set lo up
if [ ! -e /sys/class/infiniband/rxe0 ] &&	# sysfs: `rdma link show DEV` fails on a device that exists
   ! rdma link add rxe0 type rxe netdev lo >"$logs/setup.log" 2>&1; then
	result FAIL rdma-setup
	show "$logs/setup.log"
	exit 1
fi
result PASS rdma-setup

status=0
run() {	# name expect-exit... -- args
	local name=$1 log=$logs/$1.log start rc
	shift
	start=$(date +%s)
	timeout -k 5 900 "$tool" "$@" >"$log" 2>&1 </dev/null
	rc=$?
	echo "($(( $(date +%s) - start ))s, exit $rc)" >>"$log"
	case $rc in
	0) result PASS "$name" ;;
	77) result SKIP "$name" ;;
	*) result FAIL "$name"; status=1 ;;
	esac
	grep -E '^(churn|  |PASS|FAIL|stale|mrc-rdma|mrcache|\()' "$log" | head -40 | sed 's/^/    | /'
}

run rdma-churn-none-control churn --monitor none --iters "$control_iters" --expect-stale
for m in kernel uffd hooks bpf; do
	run "rdma-churn-$m" churn --monitor "$m" --iters "$iters"
done
if [ $# -gt 0 ]; then
	run rdma-bench bench "$@"
fi

tests=("$GUEST_BUILD"/tests/test-verbs-*)
if [ -e "${tests[0]}" ]; then
	MRC_TEST_LOGDIR=$logs bash "$GUEST_SRC/tests/run.sh" --suite guest-rdma \
		--results "$GUEST_RESULTS" --timeout 300 "${tests[@]}" || status=1
fi
exit $status
