#!/usr/bin/env bash
# Build the debug guest kernel (docs/mrmon.md "Debug kernel"): Debian's
# linux-source-6.12, x86_64_defconfig plus tests/guest/debug-kernel.config
# (KASAN, lockdep, DEBUG_ATOMIC_SLEEP, DEBUG_VM, lockup and hung-task
# detectors), into a guest cache laid out as tests/guest/fetch-kernel.sh
# lays out Debian's images:
#   CACHE/img/boot/vmlinuz-KVER, CACHE/img/lib/modules/KVER   the image
#   CACHE/obj          the build tree, which mrmon is built against (CACHE/kdir)
#   CACHE/key          hash of the fragment and the source package version
#   CACHE/build-time   seconds the last build took, CACHE/build.log its log
#   CACHE/kver         written last
# A cache whose key matches is kept: only a changed fragment (or a new
# linux-source upload) rebuilds, and then incrementally in CACHE/obj.
#   debug-kernel.sh CACHE        (JOBS=2 by default, run under nice)
set -euo pipefail
cache=$(realpath -m "$1")
src_tree=$(cd "$(dirname "$0")/.." && pwd)
fragment=$src_tree/tests/guest/debug-kernel.config
tarball=/usr/src/linux-source-6.12.tar.xz
jobs=${JOBS:-2}
mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9

if [ ! -f "$tarball" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "debug-kernel: install linux-source-6.12 as root" >&2; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends linux-source-6.12 >/dev/null
fi
version=$(dpkg-query -W -f '${Version}' linux-source-6.12)
key=$( (cat "$fragment"; echo "linux-source-6.12 $version") | sha256sum | cut -d' ' -f1)
if [ -s "$cache/kver" ] && [ "$(cat "$cache/key" 2>/dev/null)" = "$key" ] &&
	[ -f "$cache/img/boot/vmlinuz-$(cat "$cache/kver")" ]; then
	exit 0
fi
rm -f "$cache/kver"

src=$cache/linux-source-6.12
if [ "$(cat "$cache/source-version" 2>/dev/null)" != "$version" ]; then
	rm -rf "$src" "$cache/obj"
	tar -C "$cache" -xf "$tarball"
	echo "$version" >"$cache/source-version"
fi
obj=$cache/obj
mkdir -p "$obj"
kmake() { nice make -C "$src" O="$obj" "$@"; }

# defconfig, the fragment appended (a later assignment wins), then the
# dependencies resolved.
kmake -s x86_64_defconfig
cat "$fragment" >>"$obj/.config"
kmake -s olddefconfig 2>"$cache/config.log"
missing=0
while IFS= read -r line; do
	case $line in
	CONFIG_*=*) grep -qxF "$line" "$obj/.config" || { echo "debug-kernel: '$line' did not survive olddefconfig" >&2; missing=1; } ;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }; sym=${sym%% *}
		! grep -q "^$sym=" "$obj/.config" || { echo "debug-kernel: $sym is still set" >&2; missing=1; } ;;
	esac
done <"$fragment"
[ "$missing" = 0 ] || exit 1

echo "debug-kernel: building in $obj with -j$jobs (log $cache/build.log)"
start=$(date +%s)
kmake -j"$jobs" bzImage modules >"$cache/build.log" 2>&1 ||
	{ tail -n 30 "$cache/build.log" >&2; exit 1; }
echo $(( $(date +%s) - start )) >"$cache/build-time"
kver=$(kmake -s kernelrelease)
rm -rf "$cache/img"
mkdir -p "$cache/img/boot"
kmake -s INSTALL_MOD_PATH="$cache/img" INSTALL_MOD_STRIP=1 modules_install >>"$cache/build.log" 2>&1
cp "$obj/arch/x86/boot/bzImage" "$cache/img/boot/vmlinuz-$kver"
echo "$obj" >"$cache/kdir"
echo "linux-source-6.12 $version" >"$cache/pkg"
echo "$key" >"$cache/key"
echo "$kver" >"$cache/kver"
echo "debug-kernel: $kver built in $(cat "$cache/build-time") s"
