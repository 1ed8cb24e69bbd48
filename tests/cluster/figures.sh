#!/usr/bin/env bash
# The figures of docs/mpi.md from one `make check-cluster` run's logs:
# per pattern and monitor, the time per message (rank 0's loop, emulated:
# compare ratios) and registrations per 1,000 messages, both ranks added
# (libfabric's "MR cache stats": searches - hits; with the cache disabled
# every search of the same run under a cache is a registration).
#   figures.sh [LOGDIR (build/cluster/node0/res/cluster)]
set -u
dir=${1:-build/cluster/node0/res/cluster}
field() { grep -aoE "$1 [0-9]+" "$2" | awk '{s += $2} END {print s + 0}'; }
echo "| pattern | monitor | messages | stale | ms per message | vs mrmon | registrations per 1,000 messages |"
echo "|---|---|---|---|---|---|---|"
for p in churn reuse; do
	base=
	searches=0
	for m in mrmon ompi uffd memhooks nocache; do
		log=$dir/mpi-$p-$m.log
		[ -f "$log" ] || continue
		line=$(grep -aoE 'mpi-churn: pattern .*' "$log")
		msgs=$(sed -E 's/.* messages ([0-9]+).*/\1/' <<<"$line")
		stale=$(sed -E 's/.* stale ([0-9]+).*/\1/' <<<"$line")
		ns=$(sed -E 's/.* ns\/msg ([0-9]+).*/\1/' <<<"$line")
		[ -n "$msgs" ] || continue
		if grep -aq 'MR cache stats' "$log"; then
			searches=$(field searches "$log")
			regs=$((searches - $(field hits "$log")))
		else
			regs=$searches
		fi
		base=${base:-$ns}
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$p" "$m" "$msgs" "$stale" \
			"$(awk -v a="$ns" 'BEGIN {printf "%.0f", a / 1e6}')" "$(awk -v a="$ns" -v b="$base" 'BEGIN {printf "%.2f", a / b}')" \
			"$(awk -v r="$regs" -v m="$msgs" 'BEGIN {printf "%.0f", 1000 * r / m}')"
	done
done
