#!/usr/bin/env bash
# The first cluster node drives the tests (docs/mpi.md): fi_pingpong and
# Open MPI jobs across the link, with one rank or server on each node.
. "$GUEST_SRC/tests/cluster/node.sh"
# CLUSTER_ITERS (tests/cluster/run.sh --iters): the churn runs' iterations.
# CLUSTER_SUBSET=ci (--subset ci, `make check-cluster-ci`): CI's stage,
# both fi_pingpong runs, the churn under mrmon with and without --raw and
# the memhooks control that must see stale data; the other jobs are left
# to `make check-cluster`.  CLUSTER_SUBSET=audit (--subset audit): only
# the jobs under mrc-audit (audit.sh), which the full run ends with.
CLUSTER_ITERS=12
CLUSTER_SUBSET=all
. "$GUEST_RESDIR/../../cluster.env"
iters=$CLUSTER_ITERS
node_setup 0 || exit 1

# node1 boots at the same time: wait for its command server.
for _ in $(seq 60); do
	rsh.sh node1 touch /tmp/cluster-seen >>"$logs/peer-wait.log" 2>&1 && break
	echo "(exit $?)" >>"$logs/peer-wait.log"
	sleep 2
done
if ! rsh.sh node1 true >>"$logs/peer-wait.log" 2>&1; then
	busybox ping -c 2 node1 >>"$logs/peer-wait.log" 2>&1
	sed 's/^/    | /' "$logs/peer-wait.log" | tail -n 8
	result FAIL node1-reachable
	exit 1
fi
result PASS node1-reachable

status=0
finish() {
	rsh.sh node1 touch /tmp/cluster-done >/dev/null
	exit $status
}

# judge NAME RC LOG: a result line and the log's interesting lines.
judge() {
	case $2 in
	0) result PASS "$1" ;;
	77) result SKIP "$1" ;;
	*) result FAIL "$1"; status=1 ;;
	esac
	grep -aE '(^|>:)(mpi-churn|mrmon-fi|bytes| *[0-9]+[kmg]? |== |\()|MR cache stats|memory monitor|hang|Error|error|ORTE|PMIx' "$3" |
		head -30 | sed 's/^/    | /'
}

# watched NAME LIMIT PROGRAM CMD...: runs CMD; if it has not ended after
# LIMIT seconds, logs the stacks of PROGRAM on both nodes, then ends it.
watched() {
	local name=$1 limit=$2 prog=$3 log=$logs/$1.log start pid rc waited=0
	shift 3
	start=$(date +%s)
	"$@" >"$log" 2>&1 </dev/null &
	pid=$!
	while kill -0 "$pid" 2>/dev/null && [ $waited -lt "$limit" ]; do
		sleep 2
		waited=$((waited + 2))
	done
	if kill -0 "$pid" 2>/dev/null; then
		{
			echo "== hang: still running after ${limit}s; stacks of $prog"
			node_stacks "$prog"
			rsh.sh node1 ". $GUEST_SRC/tests/cluster/node.sh; node_stacks $prog"
		} >>"$log" 2>&1
		kill "$pid"
		sleep 5
		kill -9 "$pid" 2>/dev/null
		rsh.sh node1 "pkill -9 -x $prog; pkill -9 -x orted" >/dev/null 2>&1
		pkill -9 -x "$prog"
	fi
	wait "$pid"
	rc=$?
	echo "($(( $(date +%s) - start ))s, exit $rc)" >>"$log"
	judge "$name" "$rc" "$log"
}

preload=$GUEST_BUILD/libmrcache-fabric-preload.so
churn=$GUEST_BUILD/cluster/mpi-churn
# ofi_rxm sizes its verbs CQ for FI_UNIVERSE_SIZE peers (default 256),
# beyond rxe's max_cqe (docs/libfabric.md).
export FI_UNIVERSE_SIZE=16

# fi_pingpong (libfabric-bin): server on node1, client here, every size,
# data checked (-c); then the same with libmrcache-fabric preloaded on both
# sides.  The transfers (size, count) must be the same.
pingpong() {	# NAME [ENV...]
	local name=$1 pp="fi_pingpong -p 'verbs;ofi_rxm' -e rdm -I 5 -c"
	shift
	rsh.sh node1 "env FI_UNIVERSE_SIZE=16 $* $pp" >"$logs/$name-server.log" 2>&1 &
	sleep 3
	watched "$name" 240 fi_pingpong env "$@" fi_pingpong -p "verbs;ofi_rxm" -e rdm -I 5 -c node1
	wait
	sed 's/^/server: /' "$logs/$name-server.log" >>"$logs/$name.log"
}
table() { grep -aE '^ *[0-9]+[kmg]? +[0-9]+ ' "$logs/$1.log" | awk '{print $1, $2, $3, $4}'; }
if [ "$CLUSTER_SUBSET" != audit ]; then
	pingpong pingpong-verbs
	pingpong pingpong-verbs-mrmon LD_PRELOAD="$preload" MRMON_FI_STATS=1
	if [ -n "$(table pingpong-verbs)" ] && [ "$(table pingpong-verbs)" = "$(table pingpong-verbs-mrmon)" ]; then
		result PASS pingpong-same-results
	else
		result FAIL pingpong-same-results
		status=1
	fi
fi

export OMPI_MCA_plm_rsh_agent=$GUEST_SRC/tests/cluster/rsh.sh
mpirun=(mpirun --allow-run-as-root -np 2 --bind-to none --tag-output
	--mca oob_tcp_if_include eth0 --mca btl self --mca pml cm --mca mtl ofi
	-x FI_UNIVERSE_SIZE -x FI_LOG_LEVEL=info -x FI_LOG_SUBSYS=mr)
verbs=(--mca mtl_ofi_provider_include "verbs;ofi_rxm" -x FI_PROVIDER="verbs;ofi_rxm")
tcp=(--mca mtl_ofi_provider_include "tcp;ofi_rxm" -x FI_PROVIDER="tcp;ofi_rxm")
two=(-H node0,node1 --map-by node)
# The monitors of libfabric's MR cache.  Open MPI 4.1.4 imports its own
# (its memory patcher, opal/mca/common/ofi) unless we imported first (the
# preload) or its patcher is off (^patcher): only then does
# FI_MR_CACHE_MONITOR choose (docs/mpi.md).
mrmon=(-x LD_PRELOAD="$preload" -x MRMON_FI_STATS=1)
ompi=()
uffd=(--mca memory ^patcher -x FI_MR_CACHE_MONITOR=userfaultfd)
memhooks=(--mca memory ^patcher -x FI_MR_CACHE_MONITOR=memhooks)
nocache=(--mca memory ^patcher -x FI_MR_CACHE_MONITOR=disabled)

if [ "$CLUSTER_SUBSET" = ci ]; then
	watched mpi-churn-mrmon 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" "${mrmon[@]}" \
		"$churn" --iters "$iters"
	watched mpi-churn-mrmon-raw 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" \
		"${mrmon[@]}" "$churn" --iters "$iters" --raw
	watched mpi-churn-memhooks-raw-control 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" \
		"${memhooks[@]}" "$churn" --iters "$iters" --raw --expect-stale
	finish
fi
if [ "$CLUSTER_SUBSET" = audit ]; then
	. "$GUEST_SRC/tests/cluster/audit.sh"
	finish
fi

# The earlier hang (docs/mpi.md): both ranks on one node, and the tcp
# provider across the link (6 iterations: 4 KiB to 4 MiB).
watched mpi-onenode-mrmon 300 mpi-churn "${mpirun[@]}" "${verbs[@]}" -H node0:2 "${mrmon[@]}" \
	"$churn" --iters 6
watched mpi-tcp-mrmon 300 mpi-churn "${mpirun[@]}" "${tcp[@]}" "${two[@]}" "${mrmon[@]}" \
	"$churn" --iters 6

# The churn and reuse patterns under each monitor, and the controls.
for m in mrmon ompi uffd memhooks nocache; do
	declare -n cfg=$m
	watched "mpi-churn-$m" 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" "${cfg[@]}" \
		"$churn" --iters "$iters"
	watched "mpi-reuse-$m" 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" "${cfg[@]}" \
		"$churn" --iters "$iters" --reuse
	unset -n cfg
done
watched mpi-churn-mrmon-raw 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" "${mrmon[@]}" \
	"$churn" --iters "$iters" --raw
# MPI_Put/MPI_Get: osc rdma finds no BTL that reaches the peer with
# --mca btl self (nor with btl ofi); osc pt2pt carries RMA over the MTL.
watched mpi-churn-mrmon-rma 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" "${mrmon[@]}" \
	--mca osc pt2pt "$churn" --iters "$iters" --rma
watched mpi-churn-memhooks-raw-control 600 mpi-churn "${mpirun[@]}" "${verbs[@]}" "${two[@]}" \
	"${memhooks[@]}" "$churn" --iters "$iters" --raw --expect-stale
. "$GUEST_SRC/tests/cluster/audit.sh"
finish
