#!/usr/bin/env bash
# Negative control for the strace agreement tests: the comparison must
# catch a miscount.  (1) mrc-prof told to record only the first process
# misses gcc's cc1 and as; (2) one munmap added to a correct count.
. "$(dirname "$0")/lib.sh"
need gcc strace setarch
echo 'int main(void) { return 0; }' >"$WORK/t.c"
cmd="gcc -O2 -c $WORK/t.c -o $WORK/t.o"
prof_counts "$WORK/first.prof" --only-first -- $(clean_env) $cmd
strace_counts "$WORK/all.strace" $(clean_env) $cmd
if compare "$WORK/first.prof" "$WORK/all.strace"; then
	fail "a run that skipped gcc's children agreed with strace -f: the comparison is blind"
fi
echo "caught: --only-first misses the children's calls"

prof_counts "$WORK/all.prof" -- $(clean_env) $cmd
compare "$WORK/all.prof" "$WORK/all.strace" || fail "the full run should agree"
awk '$1 == "munmap" { $2 = $2 + 1 } { print }' "$WORK/all.prof" >"$WORK/off.prof"
if compare "$WORK/off.prof" "$WORK/all.strace"; then
	fail "a count off by one agreed with strace: the comparison is blind"
fi
echo "caught: one munmap too many"
