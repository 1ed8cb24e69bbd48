#!/usr/bin/env bash
# Fetch a guest kernel: a Debian 12 image fetched with `apt-get download`,
# unpacked into CACHE (never installed on the host), with modules.dep; and
# the matching headers installed on the host so the module builds.
# KERNEL picks the line:
#   6.1      the image linux-image-amd64 depends on (the default)
#   6.1-rt   the newest linux-image-6.1.0-N-rt-amd64-unsigned
#   6.12     the newest linux-image-6.12.N+deb12-amd64-unsigned
#   6.12-rt  the newest linux-image-6.12.N+deb12-rt-amd64-unsigned
#   debug-6.12  not Debian's image: built here from linux-source-6.12 with
#            KASAN, lockdep and the lockup detectors (scripts/debug-kernel.sh;
#            long the first time: docs/mrmon.md), its build tree in CACHE/kdir
# "Newest" is resolved once: a cache that holds a kernel keeps it until the
# cache is removed, so runs stay comparable.  Writes CACHE/kver last, so an
# interrupted fetch is redone.
#   fetch-kernel.sh CACHE [KERNEL]
set -euo pipefail
cache=$1 kernel=${2:-6.1}
mkdir -p "$cache"
[ "$kernel" != debug-6.12 ] || exec bash "$(dirname "$0")/../../scripts/debug-kernel.sh" "$cache"
[ -s "$cache/kver" ] && [ -d "/usr/src/linux-headers-$(cat "$cache/kver")" ] && exit 0

# The newest package named PREFIX<n>SUFFIX whose image and headers apt can
# fetch (the package lists also name versions no longer in the archive).
newest() {
	local prefix=$1 suffix=$2 pkg kver
	for pkg in $(apt-cache pkgnames "$prefix" | grep -E "^${prefix//./\\.}[0-9]+${suffix//+/\\+}\$" | sort -rV); do
		kver=${pkg#linux-image-}
		kver=${kver%-unsigned}
		if [ "$(apt-cache policy "$pkg" "linux-headers-$kver" | grep -c 'Candidate: [0-9]')" -eq 2 ]; then
			echo "$pkg"
			return
		fi
	done
}
case $kernel in
6.1) pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
	sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1) ;;
6.1-rt) pkg=$(newest linux-image-6.1.0- -rt-amd64-unsigned) ;;
6.12) pkg=$(newest linux-image-6.12. +deb12-amd64-unsigned) ;;
6.12-rt) pkg=$(newest linux-image-6.12. +deb12-rt-amd64-unsigned) ;;
*) echo "fetch-kernel: unknown kernel '$kernel' (6.1, 6.1-rt, 6.12, 6.12-rt, debug-6.12)" >&2; exit 2 ;;
esac
if [ -z "$pkg" ]; then
	echo "fetch-kernel: no Debian package for kernel $kernel (run apt-get update?)" >&2
	exit 1
fi
kver=${pkg#linux-image-}
kver=${kver%-unsigned}
if [ ! -d "/usr/src/linux-headers-$kver" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "fetch-kernel: linux-headers-$kver missing; install it as root" >&2; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "linux-headers-$kver" >/dev/null
fi
if [ ! -f "$cache/img/boot/vmlinuz-$kver" ]; then
	rm -rf "$cache/img" "$cache"/*.deb
	(cd "$cache" && apt-get download "$pkg" >/dev/null)
	dpkg -x "$cache"/"$pkg"_*.deb "$cache/img"
	rm -f "$cache"/*.deb
fi
# Apart from the unpacking: a run that unpacked the image and then failed
# (depmod not yet installed) must not leave a cache without modules.dep,
# on which every guest fails at boot.
if [ ! -s "$cache/img/lib/modules/$kver/modules.dep" ]; then
	depmod -b "$cache/img" "$kver" || exit 1
fi
echo "$pkg" >"$cache/pkg"
echo "$kver" >"$cache/kver"
