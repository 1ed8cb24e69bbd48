#!/usr/bin/env bash
# libfabric's MR cache served by mrmon through fi_import (docs/libfabric.md).
# fabric-import drives the monitor directly; then an unmodified libfabric
# program (fabric-churn) moves data with verbs;ofi_rxm over Soft-RoCE while
# its buffer is unmapped and remapped at the same address, under the mrmon
# monitor (LD_PRELOAD), userfaultfd and memhooks, each with libc munmap and
# with the raw syscall.  memhooks cannot see the raw syscall: that run must
# show stale transfers (the negative control).  Then the hit cost of each.
#   70-fabric.sh [CHURN_ITERS [HIT_ITERS]]
set -u
iters=${1:-100} hit_iters=${2:-2000}
bin=$GUEST_BUILD/fabric
preload=$GUEST_BUILD/libmrcache-fabric-preload.so
logs=$GUEST_RESDIR/fabric
mkdir -p "$logs"
result() { echo "$1 guest/$2" >>"$GUEST_RESULTS"; echo "$1 guest/$2"; }

if [ ! -x "$bin/fabric-churn" ] || [ ! -e "$preload" ]; then
	result SKIP fabric-setup
	echo "    | $bin not built (no libfabric-dev?)"
	exit 0
fi

status=0
run() {	# name command...
	local name=$1 log=$logs/$1.log start rc
	shift
	start=$(date +%s)
	timeout -k 5 300 "$@" >"$log" 2>&1 </dev/null
	rc=$?
	echo "($(( $(date +%s) - start ))s, exit $rc)" >>"$log"
	case $rc in
	0) result PASS "$name" ;;
	77) result SKIP "$name" ;;
	*) result FAIL "$name"; status=1 ;;
	esac
	grep -aE '^(churn|hit|provider|mrmon-fi|FAIL|SKIP|fabric|\()|MR cache' "$log" |
		head -20 | sed 's/^/    | /'
}

run fabric-import "$bin/fabric-import"

# Soft-RoCE as 40-rdma.sh (tests/guest/rdma/suite.sh) brings it up, but on a
# dummy netdev with an address: libfabric's verbs MSG endpoints (under
# ofi_rxm) skip loopback interfaces (prov/verbs/src/verbs_info.c), so rxe
# on lo gives "fi_domain: No data available".  Same-device traffic stays
# inside rxe (its loopback path).
if [ ! -e /sys/class/infiniband/rxefab ]; then	# sysfs: `rdma link show DEV` fails on a device that exists
	{ /bin/ip link add fabric0 type dummy &&
	  /bin/ip addr add 10.77.0.1/24 dev fabric0 &&
	  /bin/ip link set fabric0 up &&
	  rdma link add rxefab type rxe netdev fabric0; } >"$logs/setup.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ]; then
		result FAIL fabric-rxe
		sed 's/^/    | /' "$logs/setup.log"
		exit 1
	fi
fi
result PASS fabric-rxe

# ofi_rxm sizes its verbs CQ for FI_UNIVERSE_SIZE peers (default 256), past
# rxe's max_cqe: "vrb_cq_open: Unable to create verbs CQ", fi_enable EINVAL.
export FI_PROVIDER="verbs;ofi_rxm" FI_UNIVERSE_SIZE=16
mrmon=(env LD_PRELOAD="$preload" MRMON_FI_STATS=1)
uffd=(env FI_MR_CACHE_MONITOR=userfaultfd)
memhooks=(env FI_MR_CACHE_MONITOR=memhooks)
stats=(FI_LOG_LEVEL=info FI_LOG_SUBSYS=mr)

run fabric-churn-mrmon "${mrmon[@]}" "${stats[@]}" "$bin/fabric-churn" churn "$iters"
run fabric-churn-mrmon-raw "${mrmon[@]}" "${stats[@]}" "$bin/fabric-churn" churn "$iters" --raw
run fabric-churn-uffd "${uffd[@]}" "${stats[@]}" "$bin/fabric-churn" churn "$iters"
run fabric-churn-uffd-raw "${uffd[@]}" "${stats[@]}" "$bin/fabric-churn" churn "$iters" --raw
run fabric-churn-memhooks "${memhooks[@]}" "${stats[@]}" "$bin/fabric-churn" churn "$iters"
run fabric-churn-memhooks-raw-control "${memhooks[@]}" "${stats[@]}" "$bin/fabric-churn" \
	churn "$iters" --raw --expect-stale

# Hit cost, side by side in this guest run (emulated time: ratios only).
for round in 1 2; do
	run "fabric-hit-mrmon-$round" "${mrmon[@]}" "$bin/fabric-churn" hit "$hit_iters"
	run "fabric-hit-uffd-$round" "${uffd[@]}" "$bin/fabric-churn" hit "$hit_iters"
	run "fabric-hit-memhooks-$round" "${memhooks[@]}" "$bin/fabric-churn" hit "$hit_iters"
done
exit $status
