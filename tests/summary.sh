#!/usr/bin/env bash
# Add up every suite's results: the last line is the project's verdict.
set -u
f=${1:?results file}
[ -f "$f" ] || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
pass=$(grep -c '^PASS ' "$f"); fail=$(grep -c '^FAIL ' "$f"); skip=$(grep -c '^SKIP ' "$f")
if [ "$fail" -gt 0 ]; then
	echo "failed:"; grep '^FAIL ' "$f" | sed 's/^FAIL /  /'
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
