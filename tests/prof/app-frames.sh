#!/usr/bin/env bash
# Call sites reach the application through libc: tests/prof/app-frames.c's
# 20 mallocs of 40 MiB (malloc -> sysmalloc -> mmap) are attributed, at the
# default depth, to the function that called malloc, shown with its C++
# name demangled.  Negative control: at --depth 2 (the syscall and its
# direct caller, what the default used to be) the function is not reached.
. "$(dirname "$0")/lib.sh"
W=$B/tests/prof/app-frames
[ -x "$W" ] || fail "$W is not built"
fn='mrc::prof::big_alloc(unsigned long)'
calls() {	# calls REPORT: mmap calls whose site names the function
	awk -v f="<- $fn+" '$5 == "mmap" && index($0, f) { n += $1 } END { print n + 0 }' "$1"
}
"$PROF" --top 100 -t "$WORK/default.txt" -- "$W" || fail "mrc-prof failed on app-frames"
"$PROF" --top 100 -d 2 -t "$WORK/d2.txt" -- "$W" || fail "mrc-prof -d 2 failed"
sed -n '/Top call sites/,/^$/p' "$WORK/default.txt"
n=$(calls "$WORK/default.txt")
if ! grep -q "$fn" "$WORK/default.txt" && grep -q '_ZN3mrc4prof9big_allocEm' "$WORK/default.txt"; then
	skip "no C++ demangler at run time (libstdc++.so.6)"
fi
[ "$n" = 20 ] || fail "mmap calls attributed to $fn: $n, expected 20"
echo "ok: 20 mmap calls reach $fn through malloc"
grep -q '_ZN3mrc4prof9big_allocEm' "$WORK/default.txt" && fail "a mangled name is shown"
n2=$(calls "$WORK/d2.txt")
[ "$n2" = 0 ] || fail "control: at --depth 2 the function was reached ($n2 calls): the check cannot tell"
echo "ok: control: --depth 2 stops inside libc (0 calls reach it)"
