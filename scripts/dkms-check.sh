#!/usr/bin/env bash
# DKMS as a cluster would run it, in a scratch tree: `make install-dkms`
# into DIR, then `dkms add` and `dkms build` (dkms's own --sourcetree and
# --dkmstree, so nothing outside DIR changes) for every kernel whose
# headers are installed; each built module must carry that kernel's
# vermagic.  One result line per kernel, and a control: a source tree with
# a broken file must fail to build.
#   dkms-check.sh --results FILE --work DIR --version V [--kernels GLOB]
# --kernels: the header directories' names after linux-headers- (default
# every *-amd64; CI leaves out the RT flavours, whose module builds
# kmod-lint checks: what DKMS adds, its own build path, is the same).
set -u
# shellcheck source=scripts/check-lib.sh
. "$(dirname "$0")/check-lib.sh"
version= kernels='*-amd64'
check_init dkms "version kernels" "$@"
if ! command -v dkms >/dev/null; then
	result SKIP build "dkms not installed (scripts/deps.sh installs it)"
	exit 0
fi
check_fresh_work
make -s -C "$src" install-dkms DESTDIR="$work/root" >"$work/install.log" 2>&1 ||
	{ result FAIL install; cat "$work/install.log"; exit 1; }
tree=$work/root/usr/src
dk() { dkms --sourcetree "$1" --dkmstree "$2" "${@:3}"; }

build_all() {	# SOURCETREE DKMSTREE [max kernels] -> one line per kernel
	local st=$1 dt=$2 max=${3:-99} kdir kver ko
	mkdir -p "$dt"
	dk "$st" "$dt" add "mrmon/$version" >"$dt/add.log" 2>&1 || { echo "add failed"; return; }
	# shellcheck disable=SC2086 # $kernels is a glob
	for kdir in $(ls -d /usr/src/linux-headers-$kernels 2>/dev/null | head -n "$max"); do
		[ -d "$kdir" ] || continue
		kver=${kdir#/usr/src/linux-headers-}
		if dk "$st" "$dt" build "mrmon/$version" -k "$kver" >"$dt/build-$kver.log" 2>&1; then
			ko=$(find "$dt/mrmon/$version/$kver" -name 'mrmon.ko*' | head -n1)
			if [ -n "$ko" ] && modinfo -F vermagic "$ko" | grep -q "^$kver "; then
				echo "ok $kver $ko"
			else
				echo "bad $kver (no module, or the wrong vermagic)"
			fi
		else
			echo "bad $kver (dkms build failed: $dt/build-$kver.log)"
		fi
	done
}

while read -r verdict kver rest; do
	case "$verdict" in
	ok) result PASS "build-$kver"; mkdir -p "$work/modules/$kver"; cp "$rest" "$work/modules/$kver/" ;;
	bad) result FAIL "build-$kver" "$rest"; tail -20 "$work/dkms/build-$kver.log" 2>/dev/null ;;
	*) result FAIL build "$verdict $kver $rest" ;;
	esac
done < <(build_all "$tree" "$work/dkms")

# The control: the same tree with a syntax error must not build.
cp -r "$tree" "$work/broken"
echo 'this is not C;' >>"$work/broken/mrmon-$version/mrmon_main.c"
if build_all "$work/broken" "$work/dkms-broken" 1 | grep -q '^ok '; then
	result FAIL control "a broken source tree built"
else
	result PASS control
fi
exit $status
