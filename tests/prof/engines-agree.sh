#!/usr/bin/env bash
# The simulated cache (engine sim) and the real libmrcache replaying the
# same trace (engine libmrcache) count the same hits, misses, merges,
# evictions, invalidations and deregistrations, with and without limits,
# on tests/prof/io-mix.c (overlapping reads into buffers that are
# unmapped, remapped, grown and discarded).  Without limits the counts
# are equal.  With limits they agree within 1% of the uses: the library's
# LRU is exact to an epoch (regions put between two misses tie, and its
# heap breaks the tie), the simulator's to the put, so an eviction can pick
# another of the tied regions.  Negative control: max_regions 4 and 5 must
# differ by more than that tolerance.
. "$(dirname "$0")/lib.sh"
M=$B/tests/prof/io-mix
[ -x "$M" ] || fail "$M is not built"
"$PROF" -q -r "$WORK/mix.trace" -- "$M" || fail "recording io-mix failed"

# counts NAME: the result fields of configuration NAME, one per line.
counts() {
	awk -v c="\"name\": \"$1\"" 'index($0, c) { f = 1; next }
		f && /"name"/ { exit }
		f && /"(uses|hits|misses|uncached|registrations|deregistrations|deregistered_[a-z]*|invalidated_[a-z]*|vm_calls_invalidating|peak_regions|peak_bytes)"/' \
		"$WORK/r.json"
}
"$PROF" replay -q -o "$WORK/r.json" \
	-c s:engine=sim -c l:engine=libmrcache \
	-c s4:engine=sim,max_regions=4 -c l4:engine=libmrcache,max_regions=4 \
	-c sb:engine=sim,max_bytes=512K -c lb:engine=libmrcache,max_bytes=512K \
	-c l5:engine=libmrcache,max_regions=5 "$WORK/mix.trace" || fail "replay failed"
# within A B: the largest difference of a count between files A and B,
# in uses (1 is 100%), times 1000.
within() {
	awk -F'[:,]' 'NR == FNR { a[FNR] = $2; next }
		/"uses"/ { uses = $2 }
		{ d = a[FNR] - $2; if (d < 0) d = -d; if (d > max) max = d }
		END { print (uses ? int(1000 * max / uses) : 1000) }' "$1" "$2"
}
for pair in "s l" "s4 l4" "sb lb"; do
	set -- $pair
	counts "$1" >"$WORK/$1"; counts "$2" >"$WORK/$2"
	[ "$(grep -c . "$WORK/$1")" -ge 10 ] || fail "configuration $1: fields missing"
	if [ "$pair" = "s l" ]; then
		diff -u "$WORK/$1" "$WORK/$2" || fail "engines disagree: $1 vs $2"
	elif [ "$(within "$WORK/$1" "$WORK/$2")" -gt 10 ]; then
		diff -u "$WORK/$1" "$WORK/$2"
		fail "engines disagree by more than 1% of the uses: $1 vs $2"
	fi
	echo "ok: $1 and $2 agree: $(tr -s ' \n' ' ' <"$WORK/$1" | cut -c1-120)..."
done
counts l5 >"$WORK/l5"
if [ "$(within "$WORK/s4" "$WORK/l5")" -le 10 ]; then
	fail "max_regions 4 and 5 agree within the tolerance: the comparison is blind"
fi
echo "caught: max_regions=4 (sim) and max_regions=5 (libmrcache) differ by more than 1%"
