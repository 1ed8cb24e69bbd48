#!/usr/bin/env bash
# check-bench: every workload of mrc-bench once with tiny sizes (a few
# seconds in all), plus the two controls that show the benchmark measures
# what it claims: a cache without a monitor must keep regions that were
# unmapped (invalidate: re-registered 0) and must be caught reading through
# stale pins (churn: stale reads > 0), while no cache at all never is.
# The bpf monitor is left out: loading and verifying its programs takes
# seconds to tens of seconds per process here (`make bench` includes it).
#   smoke.sh MRC_BENCH RESULTS
set -u
bench=$1 results=$2
logdir=$(dirname "$results")/logs/bench
mkdir -p "$logdir"
pass=0 fail=0
verdict() {	# verdict NAME STATUS(0 pass) [why]
	if [ "$2" -eq 0 ]; then
		echo "PASS bench/$1"; pass=$((pass + 1))
		echo "PASS bench/$1" >>"$results"
	else
		echo "FAIL bench/$1${3:+: $3}"; fail=$((fail + 1))
		echo "FAIL bench/$1" >>"$results"
	fi
}
# column COLUMN PEER LOG: a metric of the first row of PEER in LOG
column() { awk -v p="$2" -v c="$1" '$1 ~ /^[0-9]/ && $2 == p { print $c; exit }' "$3"; }

for w in $("$bench" --list | awk '/^workloads:/ { on = 1; next } /^peers:/ { on = 0 } on { print $1 }'); do
	log=$logdir/$w.log
	timeout -k 5 120 "$bench" --quick --workload "$w" \
		--peers nocache,ucx,none,hooks,uffd,kernel >"$log" 2>&1
	rc=$?
	[ $rc -ne 0 ] && tail -n 20 "$log" | sed 's/^/    | /'
	verdict "$w" $rc "exit $rc"
done

log=$logdir/invalidate.log
none=$(column 7 mrcache/none "$log") bare=$(column 7 nocache "$log")
[ "$none" = 0.000 ] && [ "$bare" = 1.000 ]
verdict invalidate-control $? "re-registered: mrcache/none '$none' (want 0.000), nocache '$bare' (want 1.000)"

log=$logdir/churn.log
none=$(column 5 mrcache/none "$log") bare=$(column 5 nocache "$log")
awk -v n="$none" -v b="$bare" 'BEGIN { exit !(n > 0 && b == 0) }'
verdict churn-stale-control $? "stale reads: mrcache/none '$none' (want > 0), nocache '$bare' (want 0)"

echo "bench: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
