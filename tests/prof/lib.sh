# Shared by mrc-prof's tests (sourced).  MRC_TEST_BUILD is the build dir.
set -u
B=${MRC_TEST_BUILD:?MRC_TEST_BUILD is not set}
PROF=$B/tools/mrc-prof
SYSCALLS="mmap munmap mremap madvise brk shmat shmdt"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mrc-prof-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

need() {
	for p in "$@"; do command -v "$p" >/dev/null 2>&1 || skip "$p is not installed (scripts/deps.sh)"; done
}

# The traced command runs with a fixed environment, the same under both
# tracers: counts depend on the environment's size.
clean_env() { echo env -i PATH=/usr/bin:/bin HOME="$WORK" LC_ALL=C PYTHONHASHSEED=0; }

# strace_counts OUT CMD...: strace -f -c of CMD, as "<syscall> <calls>".
strace_counts() {
	local out=$1; shift
	setarch -R strace -f -c -o "$out.raw" -e trace="${SYSCALLS// /,}" -- "$@" \
		>"$out.stdout" 2>"$out.stderr" || fail "strace run of $* failed: $(tail -3 "$out.stderr")"
	for s in $SYSCALLS; do
		awk -v s="$s" '$NF == s { n = $4 } END { print s, n + 0 }' "$out.raw"
	done >"$out"
}

# prof_counts OUT [OPTIONS] -- CMD...: mrc-prof's counts of the same run.
prof_counts() {
	local out=$1; shift
	"$PROF" --no-aslr -q --counts "$out" "$@" >"$out.stdout" 2>"$out.stderr" \
		|| fail "mrc-prof run failed: $(tail -3 "$out.stderr")"
}

# compare A B: print both, return non-zero if any syscall count differs.
compare() {
	local rc=0
	printf '%-8s %10s %10s\n' syscall mrc-prof strace
	for s in $SYSCALLS; do
		a=$(awk -v s="$s" '$1 == s { print $2 }' "$1")
		b=$(awk -v s="$s" '$1 == s { print $2 }' "$2")
		printf '%-8s %10s %10s%s\n' "$s" "${a:-?}" "${b:-?}" "$([ "${a:-x}" = "${b:-y}" ] || echo '   <- differs')"
		[ "${a:-x}" = "${b:-y}" ] || rc=1
	done
	return $rc
}

# agree NAME CMD...: the counts of mrc-prof and strace -f -c agree.
agree() {
	local name=$1; shift
	# A test whose command changes its inputs defines prepare() to reset them.
	declare -F prepare >/dev/null && prepare
	prof_counts "$WORK/$name.prof" -- $(clean_env) "$@"
	declare -F prepare >/dev/null && prepare
	strace_counts "$WORK/$name.strace" $(clean_env) "$@"
	compare "$WORK/$name.prof" "$WORK/$name.strace" || fail "$name: counts differ from strace -f -c"
	total=$(awk '{ n += $2 } END { print n + 0 }' "$WORK/$name.prof")
	[ "$total" -gt 0 ] || fail "$name: no VM call seen at all"
	echo "$name: $total VM calls, same counts as strace -f -c"
}
