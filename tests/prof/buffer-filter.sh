#!/usr/bin/env bash
# The seccomp filter compares the I/O length in the kernel: vm-workload's
# nine 64 KiB reads and writes are buffers at --buffer-min 64K exactly and
# at 16K, none at one byte more than 64K, and -b 0 traces no I/O at all.
. "$(dirname "$0")/lib.sh"
W=$B/tests/prof/vm-workload
[ -x "$W" ] || fail "$W is not built"
uses() {
	"$PROF" -q -o "$WORK/r.json" -b "$1" -- "$W" || fail "mrc-prof -b $1 failed"
	awk '/"io_reads"|"io_writes"/ { gsub(/[^0-9]/, ""); n += $0 } END { print n + 0 }' "$WORK/r.json"
}
[ "$(uses 16K)" = 9 ] || fail "-b 16K: expected 9 buffer uses"
[ "$(uses 65536)" = 9 ] || fail "-b 65536: the 64 KiB calls must be traced"
[ "$(uses 65537)" = 0 ] || fail "-b 65537: no call is that large"
[ "$(uses 0)" = 0 ] || fail "-b 0: I/O must not be traced"
grep -q '"buffer_min": 0,' "$WORK/r.json" || fail "-b 0 not recorded"
echo "ok: 9, 9, 0, 0 buffer uses at 16K, 64K, 64K+1, off"
