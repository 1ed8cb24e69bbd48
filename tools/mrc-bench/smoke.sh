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

# Equal allocator state: churn-fixed pins glibc's mmap threshold in every
# worker, so a 1 MiB malloc is mmapped in every row (column 6).  Control:
# with the threshold raised to 4 MiB from the environment, the probe must
# see heap blocks in every row of churn, while churn-fixed still pins it.
# all_col COLUMN VALUE LOG: every peer row of LOG has VALUE there.
all_col() { awk -v c="$1" -v v="$2" '$1 ~ /^[0-9]/ && NF >= c { n++; if ($c != v) bad++ }
	END { exit !(n > 0 && !bad) }' "$3"; }
all_col 6 1.000 "$logdir/churn-fixed.log"
verdict churn-fixed-alloc-state $? "1 MiB malloc not mmapped in every row of churn-fixed"
log=$logdir/churn-env-threshold.log
MALLOC_MMAP_THRESHOLD_=4194304 timeout -k 5 120 "$bench" --quick --workload churn,churn-fixed \
	--peers nocache,hooks >"$log" 2>&1
awk '/^== churn:/ { on = 1; next } /^== / { on = 0 } on' "$log" >"$log.default"
awk '/^== churn-fixed:/ { on = 1; next } /^== / { on = 0 } on' "$log" >"$log.fixed"
all_col 6 0.000 "$log.default" && all_col 6 1.000 "$log.fixed"
verdict churn-alloc-state-control $? "MALLOC_MMAP_THRESHOLD_=4M: want 1M mmap 0.000 in churn, 1.000 in churn-fixed"

# Plain units: no value of any table in an exponent form (1.506e+05).
! grep -hE '^[0-9]+ .*[0-9]e[+-][0-9]' "$logdir"/*.log
verdict plain-units $? "a table value with an exponent"

# A configuration with stale reads is INVALID on the plot (a hatched bar
# and its label) and not ranked; control: without such a peer the plot
# has no hatched bar.
svgdir=$logdir/svg
rm -rf "$svgdir" "$svgdir-ok"
timeout -k 5 120 "$bench" --quick --workload churn --peers nocache,none --svg "$svgdir" \
	>"$logdir/churn-svg.log" 2>&1
timeout -k 5 120 "$bench" --quick --workload churn --peers nocache,hooks --svg "$svgdir-ok" \
	>"$logdir/churn-svg-ok.log" 2>&1
grep -q 'url(#hatch)' "$svgdir/bench-churn.svg" && grep -q 'INVALID' "$svgdir/bench-churn.svg" &&
	grep -q 'not ranked: mrcache/none' "$logdir/churn-svg.log" &&
	! grep -q 'url(#hatch)' "$svgdir-ok/bench-churn.svg"
verdict invalid-marked $? "mrcache/none's stale reads not marked INVALID (or a valid peer hatched)"

echo "bench: $pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
