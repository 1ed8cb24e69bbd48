#!/usr/bin/env bash
# The bpf monitor on the guest's Debian kernel, which allows fentry/fexit:
# the zap variant (forced, so a fallback cannot hide a failure) runs the
# monitor-guarantee tests and the bpf-only tests; the syscall variant (the
# host CI runs it in full) only the bpf-only ones, to check its CO-RE
# relocations on this older kernel; then the zap variant's cost figures
# (TCG: compare ratios only).
set -u
b=$GUEST_BUILD/tests
[ -e "$b/test-bpf-raw-munmap" ] || { echo "no library tests built"; exit 0; }
run() {
	local variant=$1; shift
	MRCACHE_MONITOR=bpf MRCACHE_BPF_VARIANT=$variant \
	MRC_TEST_LOGDIR=$GUEST_RESDIR/logs/guest-bpf-$variant \
		bash "$GUEST_SRC/tests/run.sh" --suite guest-bpf-$variant \
		--results "$GUEST_RESULTS" --timeout "${GUEST_TEST_TIMEOUT:-300}" "$@"
}
status=0
run zap "$b"/test-guarantee-* "$b"/test-bpf-* || status=1
run syscall "$b"/test-bpf-truncate "$b"/test-bpf-hugetlb-truncate "$b"/test-bpf-raw-munmap "$b"/test-bpf-no-spurious \
	"$b"/test-bpf-fresh-map "$b"/test-bpf-uring-ftruncate || status=1
if [ -x "$GUEST_BUILD/tools/mrc-bpf-bench" ]; then
	echo "== mrc-bpf-bench (zap variant, guest $(uname -r))"
	MRCACHE_BPF_VARIANT=zap "$GUEST_BUILD/tools/mrc-bpf-bench" -n 1001 -c 10,100000 2>&1 |
		sed 's/^/    | /'
fi
exit $status
