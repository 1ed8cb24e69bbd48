#!/usr/bin/env bash
# Every program of examples/ builds against fresh installs, with -Werror
# and --as-needed, both ways: its Makefile (pkg-config) against
# `make install prefix=DIR`, its CMakeLists.txt (find_package) against a
# DESTDIR tree laid out as the packages are (prefix /usr, multiarch
# libdir; the CMake files find it relative to themselves).  Each runs:
# exit 0, or 77 when this machine lacks what it needs (no RDMA device).
# monitor-choice also shows the environment overriding the program's
# choice, and MRCACHE_FLAG_NO_ENV keeping it.
. "$(dirname "$0")/lib.sh"
command -v cmake >/dev/null || skip "no cmake"
prefix=$scratch/prefix root=$scratch/root
install_tree "" prefix="$prefix"
install_tree "$root" prefix=/usr libdir=/usr/lib/$ma
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
unset MRCACHE_MONITOR LD_PRELOAD
bad=0

run() {	# DIR PROGRAM [ARGS...]
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	echo "$out" | sed "s|^|    |"
	case $rc in
	0) echo "ok   ${*#$scratch/}" ;;
	77) echo "skip ${*#$scratch/}" ;;
	*) echo "FAIL ${*#$scratch/} (exit $rc)"; bad=1 ;;
	esac
}

for dir in "$src"/examples/*/; do
	name=$(basename "$dir")
	for how in make cmake; do
		w=$scratch/$how/$name
		mkdir -p "$w" && cp "$dir"/* "$w/"
		if [ $how = make ]; then
			export LD_LIBRARY_PATH=$prefix/lib
			make -s -C "$w" CFLAGS="-O2 -Wall -Wextra -Wno-unused-parameter -Werror" LDFLAGS=-Wl,--as-needed \
				>"$w.log" 2>&1 && prog=$w/$name
		else
			export LD_LIBRARY_PATH=$root/usr/lib/$ma
			cmake -S "$w" -B "$w/build" -DCMAKE_PREFIX_PATH="$root/usr" \
				-DCMAKE_C_FLAGS="-Wall -Wextra -Wno-unused-parameter -Werror" \
				-DCMAKE_EXE_LINKER_FLAGS=-Wl,--as-needed >"$w.log" 2>&1 &&
				cmake --build "$w/build" >>"$w.log" 2>&1 && prog=$w/build/$name
		fi
		if [ $? -ne 0 ]; then
			echo "FAIL $how $name: does not build"; sed 's/^/    /' "$w.log"; bad=1; continue
		fi
		case $name in
		monitor-choice)
			run "$prog" hooks --no-env
			[ "$("$prog" none --no-env)" ] && "$prog" hooks --no-env | grep -q 'running hooks' ||
				{ echo "FAIL $how: hooks not running"; bad=1; }
			MRCACHE_MONITOR=hooks "$prog" none | grep -q 'running hooks' ||
				{ echo "FAIL $how: MRCACHE_MONITOR=hooks did not override"; bad=1; }
			MRCACHE_MONITOR=hooks "$prog" none --no-env | grep -q 'running none' ||
				{ echo "FAIL $how: --no-env did not keep the program's choice"; bad=1; }
			;;
		*) run "$prog" ;;
		esac
	done
done
[ $bad -eq 0 ] || fail "examples"
echo PASS
