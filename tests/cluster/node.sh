#!/usr/bin/env bash
# Sourced by node0.sh and node1.sh, which run inside the two guests of
# tests/cluster/run.sh (each a tests/guest/run.sh guest with one vCPU and
# one virtio NIC on the link between them).  A node gets a name, a
# link-local address on eth0, /etc/hosts naming both nodes, and a Soft-RoCE
# device on eth0: two network stacks, two rxe devices, one wire.
set -u
CLUSTER_ADDRS=(169.254.0.1 169.254.0.2)
export CLUSTER_PORT=7000
export PATH=$GUEST_SRC/tests/cluster:$PATH
logs=$GUEST_RESDIR/cluster
mkdir -p "$logs"
result() { echo "$1 cluster/$2" >>"$GUEST_RESULTS"; echo "$1 cluster/$2"; }

# node_setup INDEX: hostname, address, hosts file, rxe0 on eth0.
node_setup() {
	local i=$1 log=$logs/setup.log
	{
		# devtmpfs has no /dev/fd: bash's <(...) and some tools want it.
		ln -sfn /proc/self/fd /dev/fd &&
		hostname "node$i" &&
		printf '127.0.0.1 localhost\n%s node0\n%s node1\n' "${CLUSTER_ADDRS[@]}" >/tmp/hosts &&
		mount --bind /tmp/hosts /etc/hosts &&
		/bin/ip link set lo up &&
		/bin/ip addr add "${CLUSTER_ADDRS[$i]}/16" dev eth0 &&
		/bin/ip link set eth0 up &&
		rdma link add rxe0 type rxe netdev eth0 &&
		rdma link show
	} >"$log" 2>&1
	local rc=$?
	if [ $rc -eq 0 ]; then
		result PASS "node$i-setup"
	else
		result FAIL "node$i-setup"
		sed 's/^/    | /' "$log"
	fi
	return $rc
}

# node_stacks PROGRAM: the user and kernel stacks of every thread of every
# process of that name on this node (what a hang is diagnosed from).
node_stacks() {
	local pid t
	for pid in $(pgrep -x "$1"); do
		echo "--- $(hostname) $1 pid $pid: eu-stack"
		eu-stack -p "$pid" 2>&1 | head -200
		for t in /proc/"$pid"/task/*; do
			echo "--- $(hostname) pid $pid tid ${t##*/} ($(cat "$t/comm")) kernel stack, wchan $(cat "$t/wchan")"
			cat "$t/stack"
		done
	done
}
