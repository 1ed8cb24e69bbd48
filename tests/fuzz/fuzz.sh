#!/usr/bin/env bash
# Run the cache fuzzer for FUZZ_TIME seconds with one monitor over a copy of
# the corpus (new inputs it finds are kept in the build folder, not in the
# repository).  fuzz.sh MONITOR [expect-crash]
set -u
monitor=$1 expect=${2:-clean}
corpus=$(dirname "$0")/corpus/cache
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$corpus"/* "$work"/ 2>/dev/null
cd "$work" || exit 1
MRCACHE_FUZZ_MONITOR=$monitor "$FUZZ" -max_total_time="$FUZZ_TIME" \
	-print_final_stats=1 "$work" >fuzz.log 2>&1
rc=$?
grep -E "fuzz-cache:|^Done|ERROR" fuzz.log | head -5
if grep -q "cannot create the cache" fuzz.log; then
	echo "monitor $monitor cannot start here"
	exit 77
fi
if [ "$expect" = crash ]; then
	grep -q "STALE" fuzz.log && exit 0
	echo "negative control: the fuzzer did not detect the broken monitor"
	exit 1
fi
[ $rc -eq 0 ] || tail -40 fuzz.log
exit $rc
