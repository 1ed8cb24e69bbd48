#!/usr/bin/env bash
# Run test programs one by one: exit 0 pass, 77 skip, anything else (or a
# timeout) fail.  Prints one line per test and appends "RESULT suite/name"
# to the results file so several suites add up to one summary.
#   run.sh --suite NAME --results FILE [--timeout SECONDS] [--before CMD] PROGRAM...
# --before: a shell command run before each program (the module suite
# restores mrmon's parameters with it).
set -u
suite=host results=/dev/null timeout_s=300 before=
while [ $# -gt 0 ]; do
	case "$1" in
	--suite) suite=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--timeout) timeout_s=$2; shift 2 ;;
	--before) before=$2; shift 2 ;;
	--) shift; break ;;
	*) break ;;
	esac
done
mkdir -p "$(dirname "$results")"
logdir=${MRC_TEST_LOGDIR:-$(dirname "$results")/logs/$suite}
mkdir -p "$logdir"
pass=0 fail=0 skip=0
for prog in "$@"; do
	name=$(basename "$prog")
	log=$logdir/$name.log
	[ -z "$before" ] || eval "$before"
	# $EPOCHREALTIME, not date(1) and bc(1): three forks per test cost
	# over a minute of the guest's emulated time across the suites.
	start=${EPOCHREALTIME//[.,]/}
	timeout -k 5 "$timeout_s" "$prog" >"$log" 2>&1 </dev/null
	rc=$?
	tenths=$(( (${EPOCHREALTIME//[.,]/} - start + 50000) / 100000 ))
	secs=$((tenths / 10)).$((tenths % 10))
	case $rc in
	0) verdict=PASS; pass=$((pass + 1)) ;;
	77) verdict=SKIP; skip=$((skip + 1)) ;;
	124|137) verdict=FAIL; fail=$((fail + 1)); echo "timeout after ${timeout_s}s" >>"$log" ;;
	*) verdict=FAIL; fail=$((fail + 1)) ;;
	esac
	printf '%-4s %s/%s (%ss)\n' "$verdict" "$suite" "$name" "$secs"
	if [ "$verdict" = FAIL ]; then
		tail -n 25 "$log" | sed 's/^/    | /'
	elif [ "$verdict" = SKIP ]; then
		tail -n 1 "$log" | sed 's/^/    | /'
	fi
	echo "$verdict $suite/$name" >>"$results"
done
echo "$suite: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
