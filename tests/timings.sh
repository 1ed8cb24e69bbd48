#!/usr/bin/env bash
# Print where a run's time went: FILE holds "NAME SECONDS" lines, one per
# suite or stage (Makefile's check, .ci/run); the longest first.
set -u
f=${1:?timings file}
[ -s "$f" ] || exit 0
echo "== time per suite (s) =="
sort -k2,2nr "$f" | awk '{ printf "  %-28s %5d\n", $1, $2; t += $2 } END { printf "  %-28s %5d\n", "total", t }'
