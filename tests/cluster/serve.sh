#!/bin/sh
# The command server of a cluster node (node.sh starts it under
# `busybox nc -ll -e`): one connection, one command.  Reads one line, runs
# it with sh, sends its output back and then its exit status as the last
# line, "__cluster_rc=N", which rsh.sh turns back into its own.
IFS= read -r cmd || exit 1
sh -c "$cmd" </dev/null 2>&1
echo "__cluster_rc=$?"
