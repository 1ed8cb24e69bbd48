#!/usr/bin/env bash
# make install puts down every library the build made, the headers (the
# module's uapi header as <mrcache/mrmon.h>, never in include/linux/), the
# pkg-config and CMake files, every tool and manual page and the licenses;
# make uninstall removes all of it.  Control: an uninstall that forgets
# the licenses leaves files, and the check sees them.
. "$(dirname "$0")/lib.sh"
root=$scratch/root
vars=(prefix=/usr libdir=/usr/lib/$ma)
install_tree "$root" "${vars[@]}"
L=usr/lib/$ma
bad=0

expected=(usr/include/mrcache.h usr/include/mrcache/mrmon.h
	$L/pkgconfig/mrcache.pc $L/pkgconfig/mrcache-hooks.pc
	$L/cmake/mrcache/mrcache-config.cmake $L/cmake/mrcache/mrcache-config-version.cmake)
# Every library the build made: a shared one as NAME.so.$version (a file)
# with its soname link NAME.so.0 and development link NAME.so.
for f in "$build"/lib*.so.* "$build"/lib*.a "$build"/lib*-preload.so "$build"/libmrc-audit.so; do
	[ -e "$f" ] || continue
	n=$(basename "$f")
	expected+=("$L/$n")
	case $n in *.so.*)
		expected+=("$L/${n%.so.*}.so" "$L/${n%.so.*}.so.$version")
		[ -L "$root/$L/$n" ] && [ "$(readlink "$root/$L/$n")" = "${n%.so.*}.so.$version" ] &&
			[ -f "$root/$L/${n%.so.*}.so.$version" ] && [ ! -L "$root/$L/${n%.so.*}.so.$version" ] ||
			{ echo "$L/$n: not a link to the file ${n%.so.*}.so.$version"; bad=1; }
		;;
	esac
done
[ -e "$build/libmrcache-fabric.so.0" ] &&
	expected+=(usr/include/mrcache/mrmon_fi.h $L/pkgconfig/mrcache-fabric.pc)
for m in "$src"/tools/*/main.c; do
	expected+=("usr/bin/$(basename "$(dirname "$m")")")
done
for m in "$src"/man/*.[137]; do
	[ -e "$m" ] && expected+=("usr/share/man/man${m##*.}/$(basename "$m")")
done
for l in "$src"/LICENSE* "$src"/docs/mrc-prof.md "$src"/docs/benchmarks.md; do
	expected+=("usr/share/doc/mrcache/$(basename "$l")")
done
expected+=(usr/share/mrcache/valgrind/mrcache.supp)

for f in "${expected[@]}"; do
	[ -e "$root/$f" ] || { echo "not installed: $f"; bad=1; }
done
[ ! -e "$root/usr/include/linux" ] || { echo "installed into include/linux/: $(ls "$root/usr/include/linux")"; bad=1; }
dangling=$(find "$root" -xtype l)
[ -z "$dangling" ] || { echo "dangling links: $dangling"; bad=1; }
echo "$((${#expected[@]})) files checked"

# pkg-config reads them: the version, and the hooks before libmrcache,
# kept under --as-needed.
pc() { PKG_CONFIG_PATH=$root/$L/pkgconfig PKG_CONFIG_SYSROOT_DIR=$root pkg-config "$@"; }
[ "$(pc --modversion mrcache)" = "$version" ] || { echo "pkg-config mrcache: not version $version"; bad=1; }
hooks=$(pc --libs mrcache-hooks) || bad=1
echo "pkg-config --libs mrcache-hooks: $hooks"
[[ $hooks =~ --no-as-needed[^\ ]*\ -lmrcache-hooks\ -Wl,--pop-state.*\ -lmrcache( |$) ]] ||
	{ echo "mrcache-hooks.pc: not -Wl,--push-state,--no-as-needed... -lmrcache-hooks -Wl,--pop-state ... -lmrcache"; bad=1; }

# The control: an uninstall without the licenses must leave them behind.
tree_make uninstall DESTDIR="$root" "${vars[@]}" INSTALL_DOCS= >/dev/null 2>&1
left=$(files_under "$root")
if [ -z "$left" ]; then
	echo "control: an uninstall that keeps the licenses left nothing"; bad=1
fi
install_tree "$root" "${vars[@]}"
tree_make uninstall DESTDIR="$root" "${vars[@]}" >/dev/null 2>&1 || { echo "make uninstall failed"; bad=1; }
left=$(files_under "$root")
[ -z "$left" ] || { echo "left after make uninstall:"; echo "$left"; bad=1; }
[ $bad -eq 0 ] || fail "install layout"
echo "PASS"
