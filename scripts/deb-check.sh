#!/usr/bin/env bash
# The Debian packages as CI builds them (docs/install.md): the tree's files
# copied to WORK/src (dpkg-buildpackage writes the .debs to the parent
# directory), `dpkg-buildpackage -us -uc -b` there, lintian on the result,
# then every package unpacked into one throw-away root whose files are
# checked: the libraries, header, .pc and CMake files, man pages, tools and
# the DKMS tree where they belong, nothing in /usr/include/linux/, every
# symlink resolved, and a program built against that root with pkg-config.
#   deb-check.sh --results FILE --work DIR
set -u
# shellcheck source=scripts/check-lib.sh
. "$(dirname "$0")/check-lib.sh"
check_init deb "" "$@"
for tool in dpkg-buildpackage dh lintian dh_dkms; do
	command -v "$tool" >/dev/null || { result SKIP build "$tool not installed (scripts/deps.sh installs it)"; exit 0; }
done
check_fresh_work && mkdir -p "$work/src"
version=$(make -s -C "$src" print-version)
tree=$work/src/mrcache-$version

# The tracked files and the new ones not ignored: what a clone would have
# (tracked files deleted in the work tree stay out).
(cd "$src" && git ls-files -z -co --exclude-standard |
	tar -cf - --no-recursion --ignore-failed-read --null -T - 2>/dev/null) |
	(mkdir -p "$tree" && tar -xf - -C "$tree")

start=$SECONDS
# Not the calling make's variables (BUILD=..., RESULTS=...): a clean build.
if (cd "$tree" && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL \
	DEB_BUILD_OPTIONS="nocheck parallel=2" dpkg-buildpackage -us -uc -b) \
	>"$work/build.log" 2>&1; then
	result PASS build "$((SECONDS - start))s, $work/build.log"
else
	result FAIL build "$work/build.log"; tail -30 "$work/build.log"; exit 1
fi
changes=$(ls "$work"/src/mrcache_"$version"_*.changes)

# Errors fail; warnings are listed (docs/install.md says which are expected).
lintian --fail-on error --no-tag-display-limit "$changes" >"$work/lintian.log" 2>&1
lint=$?
grep -E '^[EW]: ' "$work/lintian.log" | sed 's/^/    /'
if [ $lint -eq 0 ]; then
	result PASS lintian "$(grep -c '^W: ' "$work/lintian.log") warnings"
else
	result FAIL lintian "$(grep -c '^E: ' "$work/lintian.log") errors, $work/lintian.log"
fi

root=$work/root
mkdir -p "$root"
for deb in "$work"/src/*.deb; do
	case "$deb" in *-dbgsym_*) continue ;; esac
	dpkg-deb -x "$deb" "$root"
	dpkg-deb -c "$deb" | awk -v p="$(basename "${deb%%_*}")" '{ print p, $6 }' >>"$work/files.txt"
done

# Each expected path, and the package it must come from.
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
expected="libmrcache0 usr/lib/$ma/libmrcache.so.0
libmrcache0 usr/lib/$ma/libmrcache.so.$version
libmrcache-hooks0 usr/lib/$ma/libmrcache-hooks.so.0
libmrcache-hooks0 usr/lib/$ma/libmrcache-hooks.so.$version
libmrcache-fabric0 usr/lib/$ma/libmrcache-fabric.so.0
libmrcache-fabric0 usr/lib/$ma/libmrcache-fabric.so.$version
libmrcache-fabric0 usr/lib/$ma/libmrcache-fabric-preload.so
libmrcache-dev usr/include/mrcache.h
libmrcache-dev usr/include/mrcache/mrmon.h
libmrcache-dev usr/lib/$ma/libmrcache.so
libmrcache-dev usr/lib/$ma/libmrcache.a
libmrcache-dev usr/lib/$ma/libmrcache-hooks.a
libmrcache-dev usr/lib/$ma/pkgconfig/mrcache.pc
libmrcache-dev usr/lib/$ma/pkgconfig/mrcache-hooks.pc
libmrcache-dev usr/lib/$ma/pkgconfig/mrcache-fabric.pc
libmrcache-dev usr/lib/$ma/cmake/mrcache/mrcache-config.cmake
libmrcache-dev usr/lib/$ma/cmake/mrcache/mrcache-config-version.cmake
mrcache-tools usr/bin/mrc-prof
mrcache-tools usr/share/man/man1/mrc-prof.1.gz
mrcache-tools usr/bin/mrc-audit
mrcache-tools usr/lib/$ma/libmrc-audit.so
mrcache-tools usr/share/man/man1/mrc-audit.1.gz
mrcache-tools usr/share/doc/mrcache-tools/mrc-prof.md.gz
mrcache-tools usr/share/doc/mrcache-tools/benchmarks.md.gz
libmrcache-dev usr/share/mrcache/valgrind/mrcache.supp
mrmon-dkms usr/src/mrmon-$version/dkms.conf
mrmon-dkms usr/src/mrmon-$version/include/uapi/linux/mrmon.h
mrmon-dkms lib/udev/rules.d/60-mrmon.rules
mrmon-dkms usr/lib/modules-load.d/mrmon.conf"

# What is wrong with ROOT (unpacked) and LIST (package, path lines).
layout_problems() {
	local root=$1 list=$2 pkg path
	while read -r pkg path; do
		grep -q "^$pkg \./$path\$" "$list" || echo "missing $pkg:$path"
	done <<<"$expected"
	# The uapi header must not land in linux-libc-dev's directory.
	[ ! -e "$root/usr/include/linux" ] || echo "usr/include/linux/ is installed"
	# The module's source, and the DKMS dependency, in mrmon-dkms only.
	grep ' \./usr/src/.' "$list" | grep -v '^mrmon-dkms ' | sed 's/^/misplaced /'
	for deb in "$work"/src/lib*.deb "$work"/src/mrcache-tools_*.deb; do
		dpkg-deb -f "$deb" Depends | grep -q dkms && echo "$(basename "$deb") depends on dkms"
	done
	find "$root" -xtype l -printf 'dangling symlink %P\n'
}
problems=$(layout_problems "$root" "$work/files.txt")
if [ -z "$problems" ]; then result PASS files; else result FAIL files "$(echo $problems)"; fi

# The control: the header in /usr/include/linux/ and a file gone must show.
cp -a "$root" "$work/control" && mkdir -p "$work/control/usr/include/linux" &&
	touch "$work/control/usr/include/linux/mrmon.h"
problems=$(layout_problems "$work/control" <(grep -v 'mrcache-hooks.pc$' "$work/files.txt"))
if [ "$(echo "$problems" | grep -c 'usr/include/linux\|missing libmrcache-dev:.*mrcache-hooks.pc')" = 2 ]; then
	result PASS files-control
else
	result FAIL files-control "the check missed a planted fault: $problems"
fi

# Every tool of the tree is packaged, with its manual page when it has one.
absent=
for dir in "$tree"/tools/*/main.c; do
	t=$(basename "$(dirname "$dir")")
	[ -x "$root/usr/bin/$t" ] || absent+=" $t"
done
for m in "$tree"/man/*.[137]; do
	[ -e "$m" ] || continue
	s=${m##*.}
	[ -e "$root/usr/share/man/man$s/$(basename "$m").gz" ] || absent+=" $(basename "$m")"
done
if [ -z "$absent" ]; then result PASS tools-and-manuals; else result FAIL tools-and-manuals "not packaged:$absent"; fi

# A program against the packaged files alone.
cat >"$work/prog.c" <<'EOC'
#include <mrcache.h>
#include <stdio.h>
int main(void) { printf("%s\n", mrcache_version()); return 0; }
EOC
pc=$root/usr/lib/$ma/pkgconfig
if flags=$(PKG_CONFIG_PATH=$pc PKG_CONFIG_SYSROOT_DIR=$root pkg-config --cflags --libs mrcache) &&
	cc -o "$work/prog" "$work/prog.c" $flags >"$work/prog.log" 2>&1 &&
	[ "$(LD_LIBRARY_PATH=$root/usr/lib/$ma "$work/prog")" = "$version" ]; then
	result PASS link
else
	result FAIL link "$work/prog.log"; cat "$work/prog.log"
fi
# Installed for real with dpkg (root only, and only when none of them is
# installed already: never replace what the machine has), used through the
# system's own paths, then purged.  mrmon-dkms is left out: its postinst
# builds the module for every installed kernel (4 minutes here; done by
# hand, docs/install.md).
libpkgs="libmrcache0 libmrcache-hooks0 libmrcache-fabric0 libmrcache-dev mrcache-tools"
if [ "$(id -u)" != 0 ]; then
	result SKIP install "not root"
elif dpkg-query -W $libpkgs >/dev/null 2>&1; then
	result SKIP install "a package of this name is installed already"
else
	debs=
	for p in $libpkgs; do debs+=" $(ls "$work"/src/${p}_*.deb)"; done
	if dpkg -i $debs >"$work/install.log" 2>&1 &&
		cc -o "$work/prog-sys" "$work/prog.c" $(pkg-config --cflags --libs mrcache) >>"$work/install.log" 2>&1 &&
		[ "$("$work/prog-sys")" = "$version" ] &&
		mrcache-info >>"$work/install.log" 2>&1 && man -w mrcache_get >/dev/null 2>&1; then
		result PASS install "dpkg -i, a program built with the system's pkg-config, mrcache-info, man"
	else
		result FAIL install "$work/install.log"; tail -20 "$work/install.log"
	fi
	dpkg -P $libpkgs >>"$work/install.log" 2>&1 || result FAIL purge "$work/install.log"
	if [ -e /usr/include/mrcache.h ] || ls /usr/lib/*/libmrcache* >/dev/null 2>&1; then
		result FAIL purge "files left after dpkg -P"
	fi
fi
echo "deb-check: $((SECONDS - start))s after the copy"
exit $status
