#!/usr/bin/env bash
# Runs a command on another cluster node, as ssh would: rsh.sh HOST CMD...
# Open MPI's remote launch agent (--mca plm_rsh_agent) in the cluster
# suites, and how they start servers and read stacks on the peer.  The
# peer's serve.sh runs the command; its output comes back as it is
# written, and rsh.sh exits with the command's status (255: no answer).
set -u
host=${1:?host}
shift
rc=255
shopt -s lastpipe	# the loop below runs in this shell: it sets rc
printf '%s\n' "$*" | busybox nc "$host" "${CLUSTER_PORT:-7000}" |
while IFS= read -r line; do
	case $line in
	__cluster_rc=*) rc=${line#__cluster_rc=} ;;
	*) printf '%s\n' "$line" ;;
	esac
done
exit "$rc"
