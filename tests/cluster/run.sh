#!/usr/bin/env bash
# Host side of `make check-cluster` (tests/guest/README.md, "Cluster"):
# two guests of tests/guest/run.sh, one vCPU each, whose virtio NICs are
# joined by QEMU's socket netdev over a TCP connection on 127.0.0.1 (the
# only host address used; inside, link-local 169.254.0.1 and .2).  node0
# runs tests/cluster/node0.sh, which drives the tests; node1 runs
# node1.sh, which serves node0's commands.  Each guest's result lines
# ("guest/NAME", "cluster/NAME") and kernel-log verdict are added to the
# results file as "cluster/nodeN/NAME" and "cluster/NAME".
#   run.sh --cache DIR --out DIR --build DIR --kmod DIR --results FILE
#          [--modules "m1 m2"] [--mem 1G] [--timeout S] [--iters N] [--subset all|ci|audit]
# --iters: the churn iterations of node0.sh (12); --subset ci: only the
# tests of CI's stage, audit: only the jobs under mrc-audit (node0.sh says
# which).  Both are handed over in
# $out/cluster.env, which node0 reads from its results share's parent.
set -u
cache= out= build= kmod= results= modules= mem=1G timeout_s=2400 iters=12 subset=all
while [ $# -gt 0 ]; do
	case "$1" in
	--cache) cache=$2 ;; --out) out=$2 ;; --build) build=$2 ;; --kmod) kmod=$2 ;;
	--results) results=$2 ;; --modules) modules=$2 ;; --mem) mem=$2 ;;
	--timeout) timeout_s=$2 ;; --iters) iters=$2 ;; --subset) subset=$2 ;;
	*) echo "cluster: unknown option $1" >&2; exit 2 ;;
	esac
	shift 2
done
src=$(cd "$(dirname "$0")/../.." && pwd)
out=$(realpath -m "$out")
mkdir -p "$out" "$(dirname "$results")"
case $subset in all|ci|audit) ;; *) echo "cluster: unknown subset $subset" >&2; exit 2 ;; esac
printf 'CLUSTER_ITERS=%s\nCLUSTER_SUBSET=%s\n' "$iters" "$subset" >"$out/cluster.env"

# A free port for the link (QEMU listens on it in node0).
port=
for p in $(seq $((40000 + $$ % 10000)) $((40000 + $$ % 10000 + 50))); do
	if [ -z "$(ss -Hltn "sport = :$p" 2>/dev/null)" ]; then port=$p; break; fi
done
[ -n "$port" ] || { echo "FAIL cluster/setup: no free port"; echo "FAIL cluster/setup" >>"$results"; exit 1; }

# node INDEX NETDEV-OPTION: one guest; its results go to $out/nodeN.results.
node() {
	: >"$out/node$1.results"
	bash "$src/tests/guest/run.sh" --cache "$cache" --out "$out/node$1" --build "$build" \
		--kernel 6.1 --kmod "$kmod" --results "$out/node$1.results" --modules "$modules" \
		--suites "$src/tests/cluster/node$1.sh" --mem "$mem" --timeout "$timeout_s" --smp 1 \
		--net "-netdev socket,id=link,$2 -device virtio-net-pci,netdev=link,mac=52:54:00:a9:fe:0$1" \
		>"$out/node$1.log" 2>&1
}

echo "cluster: two guests linked over 127.0.0.1:$port; logs $out/node{0,1}/"
start=$(date +%s)
node 0 "listen=127.0.0.1:$port" &
pid0=$!
for _ in $(seq 120); do
	[ -n "$(ss -Hltn "sport = :$port" 2>/dev/null)" ] && break
	sleep 1
done
node 1 "connect=127.0.0.1:$port" &
pid1=$!
wait "$pid0"
rc0=$?
wait "$pid1"
rc1=$?
echo "cluster: both guests done after $(( $(date +%s) - start ))s (node0 $rc0, node1 $rc1)"

for i in 0 1; do
	grep -aE '^(PASS|FAIL|SKIP|    \|)' "$out/node$i.log" | sed -E "s#^(PASS|FAIL|SKIP) guest/#\1 cluster/node$i/#"
	sed -E "s#^(PASS|FAIL|SKIP) guest/#\1 cluster/node$i/#" "$out/node$i.results" >>"$results"
done
[ $rc0 -eq 0 ] && [ $rc1 -eq 0 ]
