#!/usr/bin/env bash
# Verify the invalidation protocol model with Spin (docs/protocol.md).
#   verify.sh [--results FILE] [--work DIR] [--keep] [NAME...]
# Runs, one PASS/FAIL line each (suite "model"):
#   code-refs       every @code reference of protocol.pml names a file and a
#                   function that exist, and lines inside that function
#                   (coderefs.sh)
#   code-refs-control  coderefs.sh on copies of the model with a bogus
#                   function, a range outside its function, a missing file
#                   and a malformed reference: PASS when it rejects each
#   safety          assertions (the get property, W, K), end states (no
#                   leak, no deadlock)
#   liveness        ltl "reclaimed" (and the assertions)
#   mutant-*        a field bug or a broken order: PASS when Spin finds the
#                   violation (*-lib: with K left out, so the library's own
#                   properties are what fail)
#   tolerated-*     a variant the protocol makes harmless: PASS when Spin
#                   finds nothing (if it starts failing, the protocol
#                   changed: update docs/protocol.md)
#   early-unwatch   a design that frees a held region's slot at kill: safe
#                   with generations; mutant-same-generation-early-unwatch
#                   shows it is not without them
# Exhaustive within the bounds in protocol.pml (COLLAPSE is lossless; no
# BITSTATE, no hash compaction); MODEL_DEFINES="-DNGET1=2" (say) widens
# them for a run by hand.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
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
# kind: coderefs, coderefs-control (no Spin), safety (assertions, end
# states), liveness (ltl and assertions), ltl-only (ltl with assertions
# ignored, so that the ltl is what fails).  The long searches come first,
# so that two jobs at a time finish together.
checks=(
	"code-refs		coderefs	ok		"
	"code-refs-control	coderefs-control	ok	"
	"liveness		liveness	ok		"
	"safety			safety		ok		"
	"early-unwatch		safety		ok		-DEARLY_UNWATCH"
	"tolerated-slot-reuse-early	safety	ok		-DMUTANT_SLOT_REUSE_EARLY"
	"tolerated-unwatch-remove-first-lib	safety	ok	-DMUTANT_UNWATCH_REMOVE_FIRST -DNO_KERNEL_CHECK"
	"mutant-unwatch-remove-first	safety	violation	-DMUTANT_UNWATCH_REMOVE_FIRST"
	"mutant-unwatch-stale-free	safety	violation	-DMUTANT_UNWATCH_STALE_FREE"
	"mutant-watch-no-active-check	safety	violation	-DMUTANT_WATCH_NO_ACTIVE_CHECK"
	"mutant-watch-no-active-check-lib	safety	violation	-DMUTANT_WATCH_NO_ACTIVE_CHECK -DNO_KERNEL_CHECK"
	"mutant-watch-split-lock	safety	violation	-DMUTANT_WATCH_SPLIT_LOCK"
	"mutant-watch-split-lock-lib	safety	violation	-DMUTANT_WATCH_SPLIT_LOCK -DNO_KERNEL_CHECK"
	"mutant-trust-not-armed	safety	violation	-DMUTANT_TRUST_NOT_ARMED"
	"mutant-no-recheck	safety		violation	-DMUTANT_NO_RECHECK"
	"mutant-reg-before-watch	safety	violation	-DMUTANT_REG_BEFORE_WATCH"
	"mutant-deferred-invalidate	safety	violation	-DMUTANT_DEFERRED_INVALIDATE"
	"mutant-deferred-invalidate-lib	safety	violation	-DMUTANT_DEFERRED_INVALIDATE -DNO_KERNEL_CHECK"
	"mutant-early-word-check	safety	violation	-DMUTANT_EARLY_WORD_CHECK"
	"mutant-reclaim-misses-slot	safety	violation	-DMUTANT_RECLAIM_MISSES_SLOT"
	"mutant-slot-after-check	safety	violation	-DMUTANT_SLOT_AFTER_CHECK"
	"mutant-lost-foreign-clear	safety	violation	-DMUTANT_LOST_FOREIGN_CLEAR"
	"mutant-overflow-lost	ltl-only	violation	-DMUTANT_OVERFLOW_LOST"
	"mutant-overflow-lost-end	safety	violation	-DMUTANT_OVERFLOW_LOST"
	"mutant-same-generation	safety		violation	-DMUTANT_SAME_GENERATION"
	"mutant-same-generation-early-unwatch	safety	violation	-DEARLY_UNWATCH -DMUTANT_SAME_GENERATION"
)

# "ERRORS WALL CPU" into $1/verdict: CPU is what this job's children
# used (the machine may be shared, so wall time alone says little).
verdict() {
	local cpu
	times >"$1/times"	# not in $(...): that would be a child of its own
	cpu=$(tail -1 "$1/times" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } } END { printf "%.1f", s }')
	printf '%s %s %s\n' "$2" "$(printf '%.1f' "$(echo "$(date +%s.%N) - $start" | bc)")" "$cpu" >"$1/verdict"
}

# The code references: "errors: N" like pan's, N the broken ones.
run_coderefs() {
	local dir=$1 n
	mkdir -p "$dir"
	start=$(date +%s.%N)
	bash "$here/coderefs.sh" --root "$root" "$model" >"$dir/pan.out" 2>&1
	n=$(sed -n 's/.*, \([0-9]*\) broken$/\1/p' "$dir/pan.out")
	echo "errors: ${n:-none}" >>"$dir/pan.out"
	verdict "$dir" "${n:-none}"
}

# The negative control: coderefs.sh must reject each of these corruptions
# of the first @code reference, for the right reason; "errors: N" counts
# the ones it let through.
run_coderefs_control() {
	local dir=$1 first missed=0 name sub why
	mkdir -p "$dir"
	start=$(date +%s.%N)
	: >"$dir/pan.out"
	first=$(grep -m1 -o '/\* @code [^ ]* \*/' "$model" | cut -d' ' -f3)
	for name in bogus-function range-outside missing-file malformed; do
		case $name in
		bogus-function)
			sub="s|@code ${first%%:*}:[A-Za-z_0-9]*:|@code ${first%%:*}:mrc_no_such_function:|"
			why="no definition of mrc_no_such_function" ;;
		range-outside)
			sub="s|@code \(${first%:*}\):[0-9-]*|@code \1:1-1|"
			why="lines 1-1 are not within" ;;
		missing-file)
			sub="s|@code ${first%%:*}:|@code ${first%%:*}.gone:|"
			why="no such file" ;;
		malformed)
			sub="s|@code ${first} \*/|@code ${first} (a comment) */|"
			why="alone on its line" ;;
		esac
		sed "0,\|@code ${first} |{$sub}" "$model" >"$dir/$name.pml"
		if cmp -s "$model" "$dir/$name.pml"; then
			echo "$name: the corruption did not apply" >>"$dir/pan.out"
			missed=$((missed + 1))
		elif bash "$here/coderefs.sh" --root "$root" "$dir/$name.pml" >"$dir/$name.out" 2>&1; then
			echo "$name: accepted" >>"$dir/pan.out"
			missed=$((missed + 1))
		elif ! grep -q "$why" "$dir/$name.out"; then
			echo "$name: rejected, but not because of it: $(head -1 "$dir/$name.out")" >>"$dir/pan.out"
			missed=$((missed + 1))
		else
			echo "$name: rejected: $(grep -m1 "$why" "$dir/$name.out")" >>"$dir/pan.out"
		fi
	done
	echo "errors: $missed" >>"$dir/pan.out"
	verdict "$dir" "$missed"
}

# Compile the model with $defines in its own directory and run pan there;
# leaves "errors: N" (or "incomplete") in $dir/verdict.  -O0: pan.c
# compiles in 2 s instead of 12 with -O2, which saves no more than that
# on the longest search.  COLLAPSE: a third of the memory, lossless.
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
		"${CC:-cc}" -O0 -w -DSAFETY -DNOCLAIM -DCOLLAPSE -o pan pan.c >>spin.out 2>&1 &&
			./pan -m200000 -n -w25 >pan.out 2>&1
	else
		"${CC:-cc}" -O0 -w -DCOLLAPSE -o pan pan.c >>spin.out 2>&1 &&
			./pan -m400000 -n -w25 -a $([ "$kind" = ltl-only ] && echo -A) >pan.out 2>&1
	fi
	errors=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' pan.out 2>/dev/null | head -1)
	if grep -q 'Search not completed\|max search depth too small' pan.out 2>/dev/null &&
	   [ "$errors" = 0 ]; then
		errors=incomplete
	fi
	verdict . "${errors:-none}"
}

# Up to MODEL_JOBS searches at once (default 2: the machine has 2 cores;
# the largest search needs about 1.2 GB).
jobs_max=${MODEL_JOBS:-2}
suite_start=$(date +%s)
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
	case $kind in
	coderefs) (run_coderefs "$work/$name") & ;;
	coderefs-control) (run_coderefs_control "$work/$name") & ;;
	*) (run_pan "$work/$name" "$kind" "$defines") & ;;
	esac
done
wait

pass=0 fail=0
for line in "${selected[@]}"; do
	read -r name kind expect defines <<<"$line"
	read -r errors secs cpu <"$work/$name/verdict" 2>/dev/null || { errors=none; secs=?; cpu=?; }
	total_cpu=$(echo "${total_cpu:-0} + ${cpu/\?/0}" | bc)
	case $kind in
	coderefs) states="$(sed -n 's/^coderefs: \([0-9]*\) @code.*/\1/p' "$work/$name/pan.out" 2>/dev/null) references," ;;
	coderefs-control) states="4 corruptions," ;;
	*) states="$(sed -n 's/^ *\([0-9.e+]*\) states, stored.*/\1/p' "$work/$name/pan.out" 2>/dev/null | head -1) states," ;;
	esac
	case "$expect:$errors" in
	ok:0 | violation:[1-9]*) verdict=PASS ;;
	*) verdict=FAIL ;;
	esac
	printf '%-4s model/%s (%ss, %ss CPU, %s errors %s, expected %s)\n' \
		"$verdict" "$name" "$secs" "$cpu" "$states" "$errors" "$expect"
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
echo "model: $pass passed, $fail failed ($(date -u -d @"$(($(date +%s) - suite_start))" +%Mm%Ss) wall, $(printf %.1f "${total_cpu:-0}")s CPU)"
[ "$fail" -eq 0 ]
