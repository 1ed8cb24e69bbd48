#!/usr/bin/env bash
# A program with known VM activity (tests/prof/vm-workload.c: threads, a
# forked child, shm, mremap, madvise, large I/O): mrc-prof finds each call
# at its symbolized call site with the exact count, agrees with strace,
# and its simulated cache sees the I/O buffer invalidated by munmap.
. "$(dirname "$0")/lib.sh"
need strace setarch
W=$B/tests/prof/vm-workload
[ -x "$W" ] || fail "$W is not built"
"$PROF" -t "$WORK/report.txt" -o "$WORK/report.json" --top 100 -- "$W" \
	|| fail "mrc-prof failed on vm-workload"
cat "$WORK/report.txt"

# site_calls SYSCALL FUNCTION: calls of SYSCALL whose caller is FUNCTION.
site_calls() {
	awk -v s="$1" -v f="$2" '$5 == s && index($0, "<- " f "+") { n += $1 } END { print n + 0 }' \
		"$WORK/report.txt"
}
site_inval() {
	awk -v s="$1" -v f="$2" '$5 == s && index($0, "<- " f "+") { n += $4 } END { print n + 0 }' \
		"$WORK/report.txt"
}
check() {
	[ "$3" = "$4" ] || fail "$1 from $2: $3 calls, expected $4"
	echo "ok: $1 from $2: $3"
}
check munmap workload_mmaps "$(site_calls munmap workload_mmaps)" 75
check mmap workload_mmaps "$(site_calls mmap workload_mmaps)" 75
check mremap workload_mremap "$(site_calls mremap workload_mremap)" 5
check madvise workload_madvise "$(site_calls madvise workload_madvise)" 7
check shmat workload_shm "$(site_calls shmat workload_shm)" 2
check shmdt workload_shm "$(site_calls shmdt workload_shm)" 2
check "invalidated by munmap" workload_io "$(site_inval munmap workload_io)" 2
grep -q '"uses": 9,' "$WORK/report.json" || fail "expected 9 buffer uses (5 reads, 4 writes)"
grep -q '"hits": 7,' "$WORK/report.json" || fail "expected 7 hits on the I/O buffer"
grep -q '"misses": 2,' "$WORK/report.json" || fail "expected 2 misses (first use, use after munmap)"
grep -q '"processes": 2,' "$WORK/report.json" || fail "expected 2 processes (the fork)"
agree vm-workload "$W"
