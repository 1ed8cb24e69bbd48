#!/usr/bin/env bash
# python3 with four threads allocating and freeing 300 KB objects: glibc's
# per-thread arenas trim with madvise and grow with mmap while the threads
# stop concurrently; mrc-prof counts what strace -f -c counts.
. "$(dirname "$0")/lib.sh"
need strace setarch
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed (scripts/deps.sh)"
cat >"$WORK/t.py" <<'PY'
import threading
def work():
    for i in range(200):
        b = [bytearray(300000) for _ in range(3)]
ts = [threading.Thread(target=work) for i in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
PY
agree python3-threads /usr/bin/python3 "$WORK/t.py"
grep -q '^madvise [1-9]' "$WORK/python3-threads.prof" || fail "expected madvise calls from the arenas"
