#!/usr/bin/env bash
# xz compressing a few MiB (its large dictionary buffers).
. "$(dirname "$0")/lib.sh"
need xz strace setarch
seq 1 400000 >"$WORK/x.txt"
agree xz xz -T1 -3 -k -f "$WORK/x.txt"
