#!/usr/bin/env bash
# Guest suite: mrmon beside kdreg2 (bench-kdreg2.c), when the host built
# the peer (make guest-bench KDREG2_SRC=DIR, mk/kdreg2.mk); else SKIP with
# the reason.  Output in $GUEST_RESDIR/logs/bench-kdreg2.txt.
set -u
dir=$GUEST_BUILD/kdreg2
log=$GUEST_RESDIR/logs/bench-kdreg2.txt
mkdir -p "$GUEST_RESDIR/logs"
if [ ! -x "$dir/bench-kdreg2" ] || [ ! -f "$dir/kdreg2.ko" ]; then
	echo "kdreg2 peer skipped: not built (make guest-bench KDREG2_SRC=DIR builds it)" | tee "$log"
	echo "SKIP guest/bench-kdreg2" >>"$GUEST_RESULTS"
	exit 0
fi
{
	echo "== bench-kdreg2: mrmon beside kdreg2 $(cat "$dir/commit") (kernel $(uname -r), TCG)"
	grep -q '^kdreg2 ' /proc/modules || insmod "$dir/kdreg2.ko"
	for i in 1 2 3 4 5; do [ -e /dev/kdreg2 ] && break; sleep 1; done
	"$dir/bench-kdreg2" "${BENCH_KDREG2_ROUNDS:-7}"
	echo "rc=$?"
} 2>&1 | tee "$log"
if grep -q '^rc=0$' "$log"; then
	echo "PASS guest/bench-kdreg2" >>"$GUEST_RESULTS"
else
	echo "FAIL guest/bench-kdreg2" >>"$GUEST_RESULTS"
fi
