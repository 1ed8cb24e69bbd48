#!/usr/bin/env bash
# The second cluster node: sets itself up, then serves node0's commands
# (serve.sh behind busybox nc) until node0 says it is done or stops
# answering.  What node0 runs here is logged and judged on node0.
. "$GUEST_SRC/tests/cluster/node.sh"
node_setup 1 || exit 1
busybox nc -ll -p "$CLUSTER_PORT" -e "$GUEST_SRC/tests/cluster/serve.sh" &
server=$!
result PASS node1-serve
lost=0
while [ ! -e /tmp/cluster-done ] && [ $lost -lt 6 ]; do
	sleep 5
	# node0 boots at the same time; it is gone once it stops answering.
	if [ -e /tmp/cluster-seen ] && ! busybox ping -c 1 -W 3 "${CLUSTER_ADDRS[0]}" >/dev/null 2>&1; then
		lost=$((lost + 1))
	else
		lost=0
	fi
done
kill "$server"
if [ -e /tmp/cluster-done ]; then
	result PASS node1-done
else
	result FAIL node1-done
	echo "    | node0 stopped answering before it said it was done"
	exit 1
fi
