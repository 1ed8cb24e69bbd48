#!/usr/bin/env bash
# Record and replay: a replayed trace reports exactly what the live run
# did; configurations change the simulated cache (a cache with no monitor
# serves the stale registration; a one-region limit evicts); plots are
# written; a damaged trace or a bad configuration is refused.
. "$(dirname "$0")/lib.sh"
W=$B/tests/prof/vm-workload
[ -x "$W" ] || fail "$W is not built"
"$PROF" -q -r "$WORK/t.trace" -o "$WORK/live.json" -- "$W" || fail "record failed"
"$PROF" replay -q -o "$WORK/replay.json" "$WORK/t.trace" || fail "replay failed"
diff -u "$WORK/live.json" "$WORK/replay.json" || fail "replay reports differently from the live run"
echo "ok: replay report identical to the live one"
if [ -x /usr/bin/python3 ]; then
	/usr/bin/python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$WORK/live.json" \
		|| fail "the JSON report does not parse"
	echo "ok: the JSON report parses"
fi

"$PROF" replay -q -o "$WORK/conf.json" -s "$WORK/plot" \
	-c kernel:monitor=kernel -c none:monitor=none -c tiny:max_regions=1 \
	-c uring:backend=uring,monitor=hooks "$WORK/t.trace" || fail "replay with configs failed"
# field CONFIG KEY: a number from one configuration's JSON object.
field() {
	awk -v c="\"name\": \"$1\"" -v k="\"$2\":" 'index($0, c) { in_c = 1 }
		in_c && index($0, k) { gsub(/[^0-9.]/, "", $2); print $2; exit }' "$WORK/conf.json"
}
[ "$(field kernel stale_hits)" = 0 ] || fail "a monitored cache served a stale registration"
[ "$(field none stale_hits)" = 1 ] || fail "without a monitor the reused address must hit stale"
[ "$(field tiny peak_regions)" = 1 ] || fail "max_regions=1 kept more than one region"
[ "$(field kernel register_ns)" != "$(field uring register_ns)" ] || fail "backend cost model ignored"
echo "ok: monitor none -> 1 stale hit; max_regions=1 respected; backend costs differ"
for p in timeline latency costs; do
	f="$WORK/plot-$p.svg"
	[ -s "$f" ] && head -c 5 "$f" | grep -q '<?xml' && tail -1 "$f" | grep -q '</svg>' \
		|| fail "$f is not a complete SVG"
	if command -v xmllint >/dev/null; then xmllint --noout "$f" || fail "$f is not well-formed"; fi
done
echo "ok: plots written"

head -c 100 "$WORK/t.trace" >"$WORK/cut.trace"
"$PROF" replay -q "$WORK/cut.trace" 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && grep -q "not a valid" "$WORK/err" || fail "a truncated trace was not refused (rc $rc)"
"$PROF" replay -q -c 'x:monitor=psychic' "$WORK/t.trace" 2>"$WORK/err"; rc=$?
[ $rc = 2 ] && grep -q "bad value for monitor" "$WORK/err" || fail "a bad config was not refused"
echo "ok: damaged trace and bad config refused"
