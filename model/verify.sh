#!/usr/bin/env bash
# Verify the invalidation protocol model with Spin (docs/protocol.md).
#   verify.sh [--results FILE] [--work DIR] [--keep] [NAME...]
# Runs, one PASS/FAIL line each (suite "model"):
#   safety          assertions, the invariant, end states (no leak, no deadlock)
#   liveness        ltl "reclaimed" (and the assertions)
#   mutant-*        a field bug: PASS when Spin finds the violation
#   tolerated-*     a variant the protocol makes harmless: PASS when Spin
#                   finds nothing (if it starts failing, the protocol
#                   changed: update docs/protocol.md)
#   early-unwatch   a design that frees a held region's slot at kill: safe
#                   with generations; mutant-same-generation shows it is
#                   not without them
#   pfn-clear       mrmon's PFN-checked CLEAR, against the weaker guarantee
#                   it gives (-DWEAK_GET); pfn-clear-strict shows the strict
#                   one does not hold there; *-weak mutants show the weaker
#                   guarantee still rejects them
# Exhaustive within the bounds in protocol.pml (no COLLAPSE, no BITSTATE);
# MODEL_DEFINES="-DNGET1=2" (say) widens them for a run by hand.
set -u
here=$(cd "$(dirname "$0")" && pwd)
model=$here/protocol.pml
results=/dev/null
work=
keep=0
while [ $# -gt 0 ]; do
	case "$1" in
	--results) results=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	--keep) keep=1; shift ;;
	--) shift; break ;;
	-*) echo "verify.sh: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
for tool in spin "${CC:-cc}"; do
	command -v "$tool" >/dev/null || { echo "verify.sh: $tool not found (scripts/deps.sh)" >&2; exit 1; }
done
if [ -z "$work" ]; then
	work=$(mktemp -d /tmp/mrc-model.XXXXXX)
	[ "$keep" = 1 ] || trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work" "$(dirname "$results")"

# name  kind  expect(ok|violation)  defines
# kind: safety (assertions, end states), liveness (ltl and assertions),
# ltl-only (ltl with assertions ignored, so that the ltl is what fails)
checks=(
	"safety			safety		ok		"
	"liveness		liveness	ok		"
	"mutant-reg-before-watch	safety	violation	-DMUTANT_REG_BEFORE_WATCH"
	"mutant-deferred-invalidate	safety	violation	-DMUTANT_DEFERRED_INVALIDATE"
	"mutant-early-word-check	safety	violation	-DMUTANT_EARLY_WORD_CHECK"
	"mutant-watch-no-wait	safety		violation	-DMUTANT_WATCH_NO_WAIT"
	"mutant-overflow-lost	ltl-only	violation	-DMUTANT_OVERFLOW_LOST"
	"mutant-overflow-lost-end	safety	violation	-DMUTANT_OVERFLOW_LOST"
	"tolerated-same-generation	safety	ok		-DMUTANT_SAME_GENERATION"
	"early-unwatch		safety		ok		-DEARLY_UNWATCH"
	"mutant-same-generation	safety		violation	-DEARLY_UNWATCH -DMUTANT_SAME_GENERATION"
	"tolerated-no-recheck	safety		ok		-DMUTANT_NO_RECHECK"
	"pfn-clear		safety		ok		-DPFN_CLEAR -DWEAK_GET"
	"pfn-clear-strict	safety		violation	-DPFN_CLEAR"
	"mutant-deferred-invalidate-weak	safety	violation	-DMUTANT_DEFERRED_INVALIDATE -DWEAK_GET"
	"mutant-early-word-check-weak	safety	violation	-DMUTANT_EARLY_WORD_CHECK -DWEAK_GET"
)

# Compile the model with $defines in its own directory and run pan there;
# leaves "errors: N" (or "incomplete") in $dir/verdict.  -O0: pan.c
# compiles in 2 s instead of 18 and the searches take seconds either way.
run_pan() {
	local dir=$1 kind=$2 defines=$3 errors
	mkdir -p "$dir"
	cp "$model" "$dir/protocol.pml"
	cd "$dir" || return 1
	start=$(date +%s.%N)
	# shellcheck disable=SC2086
	if ! spin -a $defines ${MODEL_DEFINES:-} protocol.pml >spin.out 2>&1; then
		cp spin.out pan.out
	elif [ "$kind" = safety ]; then
		"${CC:-cc}" -O0 -w -DSAFETY -DNOCLAIM -o pan pan.c >>spin.out 2>&1 &&
			./pan -m200000 -n -w25 >pan.out 2>&1
	else
		"${CC:-cc}" -O0 -w -o pan pan.c >>spin.out 2>&1 &&
			./pan -m400000 -n -w25 -a $([ "$kind" = ltl-only ] && echo -A) >pan.out 2>&1
	fi
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out 2>/dev/null | head -1)
	if grep -q 'Search not completed\|max search depth too small' pan.out 2>/dev/null &&
	   [ "$errors" = 0 ]; then
		errors=incomplete
	fi
	printf '%s %s\n' "${errors:-none}" "$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")" >verdict
}

# Up to MODEL_JOBS searches at once (default 2: the machine has 2 cores;
# the largest search needs about 1.5 GB).
jobs_max=${MODEL_JOBS:-2}
selected=()
for line in "${checks[@]}"; do
	read -r name kind expect defines <<<"$line"
	if [ $# -gt 0 ]; then
		want=0
		for n in "$@"; do [ "$n" = "$name" ] && want=1; done
		[ "$want" = 1 ] || continue
	fi
	selected+=("$line")
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
	(run_pan "$work/$name" "$kind" "$defines") &
done
wait

pass=0 fail=0
for line in "${selected[@]}"; do
	read -r name kind expect defines <<<"$line"
	read -r errors secs <"$work/$name/verdict" 2>/dev/null || { errors=none; secs=?; }
	states=$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$work/$name/pan.out" 2>/dev/null | head -1)
	case "$expect:$errors" in
	ok:0 | violation:[1-9]*) verdict=PASS ;;
	*) verdict=FAIL ;;
	esac
	printf '%-4s model/%s (%ss, %s states, errors %s, expected %s)\n' \
		"$verdict" "$name" "$secs" "${states:-?}" "$errors" "$expect"
	if [ "$verdict" = FAIL ]; then
		fail=$((fail + 1))
		tail -n 20 "$work/$name/pan.out" 2>/dev/null | sed 's/^/    | /'
		[ -f "$work/$name/protocol.pml.trail" ] &&
			echo "    | trail: model/verify.sh --keep --work DIR $name; cd DIR/$name; spin -t -p $defines protocol.pml"
	else
		pass=$((pass + 1))
	fi
	echo "$verdict model/$name" >>"$results"
done
echo "model: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
