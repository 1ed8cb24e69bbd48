#!/usr/bin/env bash
# Soak (outside CI): runs tests/test-stress-remap over and over for
# MINUTES, every monitor that starts here plus `none` (the negative
# control, which must see stale results), and adds up its per-run totals:
# replacements of watched pages, oracle checks, stale results.  Any stale
# result under a real monitor, any error, or a failed run fails the soak.
#   scripts/soak.sh [-b BUILD] [-m MINUTES] [-M "hooks uffd bpf kernel"]
# Each run is ~1.5 s per monitor (3 reader threads and a replacing thread).
# In the QEMU guest the same script drives the kernel monitor
# (docs/soak.md).
set -u
build=build minutes=5 monitors="hooks uffd bpf kernel"
while getopts b:m:M: o; do
	case $o in
	b) build=$OPTARG ;; m) minutes=$OPTARG ;; M) monitors=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD] [-m MINUTES] [-M MONITORS]" >&2; exit 2 ;;
	esac
done
prog=$build/tests/test-stress-remap
[ -x "$prog" ] || { echo "soak: $prog not built (make BUILD=$build tests)" >&2; exit 2; }
log=$(mktemp) errlog=$(mktemp)
trap 'rm -f "$log" "$errlog"' EXIT
end=$(( $(date +%s) + minutes * 60 ))
runs=0 failed=0
while [ "$(date +%s)" -lt "$end" ]; do
	for m in $monitors; do
		# The program always runs `none` first, then MRCACHE_MONITOR.
		MRCACHE_MONITOR=$m "$prog" >>"$log" 2>>"$errlog" || failed=$((failed + 1))
		runs=$((runs + 1))
	done
done
echo "soak: $runs runs in $minutes min, $failed failed"
printf '%-8s %6s %12s %12s %12s %8s %6s\n' monitor runs replacements checks inconclusive stale errors
awk '$2 ~ /^[0-9]+$/ && $3 == "replacements," {
	m = $1; n[m]++; rep[m] += $2; chk[m] += $4; inc[m] += $(NF-5); st[m] += $(NF-3); err[m] += $(NF-1)
} $2 == "SKIP" { skip[$1]++ }
END {
	for (m in n) printf "%-8s %6d %12d %12d %12d %8d %6d\n", m, n[m], rep[m], chk[m], inc[m], st[m], err[m]
	for (m in skip) if (!(m in n)) printf "%-8s skipped (cannot start here)\n", m
}' "$log" | sort
bad=$(awk '$2 ~ /^[0-9]+$/ && $3 == "replacements," && (($1 != "none" && $(NF-3) > 0) || $(NF-1) > 0) { b++ }
	$1 == "none" && $3 == "replacements," && $(NF-3) == 0 { b++ } END { print b + 0 }' "$log")
# What the failed runs said (a monitor that cannot start is not an error).
grep -v 'cannot start' "$errlog" | sort | uniq -c | sed 's/^/stderr: /' | head -20
[ "$failed" = 0 ] && [ "$bad" = 0 ]
