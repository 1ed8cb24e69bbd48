#!/usr/bin/env bash
# The libraries' I/O is not the program's: tests/prof/bpf-io.c creates a
# cache with the bpf monitor (libbpf reads the kernel's BTF in large reads)
# and makes 4 reads of 64 KiB itself.  The simulated cache must see those
# 4 only, and the report count the rest apart.  Negative control:
# --library-io counts everything as the program's, so more than 4.
. "$(dirname "$0")/lib.sh"
W=$B/tests/prof/bpf-io
[ -x "$W" ] || fail "$W is not built"
"$PROF" -q -t "$WORK/r.txt" -o "$WORK/r.json" -- "$W"
rc=$?
[ $rc = 77 ] && skip "the bpf monitor cannot start here"
[ $rc = 0 ] || fail "mrc-prof failed on bpf-io (exit $rc)"
sed -n '/Simulated/,/^$/p' "$WORK/r.txt"
json() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['simulated_cache'][sys.argv[2]])" "$@"; }
reads=$(json "$WORK/r.json" io_reads) lib=$(json "$WORK/r.json" library_io_calls)
[ "$reads" = 4 ] || fail "program reads: $reads, expected 4 (the libraries' counted as the program's?)"
[ "$lib" -gt 0 ] || fail "no library I/O found: libbpf's BTF reads should be"
grep -q "not the program's: $lib reads/writes" "$WORK/r.txt" || fail "the text report does not say what was left out"
echo "ok: 4 reads of the program's, $lib of the libraries' set apart"
"$PROF" -q --library-io -o "$WORK/all.json" -- "$W" || fail "mrc-prof --library-io failed"
all=$(json "$WORK/all.json" io_reads)
[ "$all" -gt 4 ] || fail "control: --library-io gives $all reads: the libraries' I/O is not traced at all"
echo "ok: control: --library-io counts $all reads"
