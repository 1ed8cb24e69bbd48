#!/usr/bin/env bash
# Fetch the guest kernel: Debian's current 6.1 image (the version the
# linux-image-amd64 metapackage depends on) with `apt-get download`,
# unpacked into CACHE (never installed on the host), with modules.dep; and
# the matching headers installed on the host so the module builds.
# Writes CACHE/kver last, so an interrupted fetch is redone.
#   fetch-kernel.sh CACHE
set -euo pipefail
cache=$1
mkdir -p "$cache"
[ -s "$cache/kver" ] && [ -d "/usr/src/linux-headers-$(cat "$cache/kver")" ] && exit 0
pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*-amd64\)$/\1/p' | head -n1)
if [ -z "$pkg" ]; then
	echo "fetch-kernel: cannot resolve linux-image-amd64 (run apt-get update?)" >&2
	exit 1
fi
kver=${pkg#linux-image-}
if [ ! -d "/usr/src/linux-headers-$kver" ]; then
	[ "$(id -u)" -eq 0 ] || { echo "fetch-kernel: linux-headers-$kver missing; install it as root" >&2; exit 1; }
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "linux-headers-$kver" >/dev/null
fi
if [ ! -f "$cache/img/boot/vmlinuz-$kver" ]; then
	rm -rf "$cache/img" "$cache"/*.deb
	(cd "$cache" && apt-get download "$pkg" >/dev/null)
	dpkg -x "$cache"/"$pkg"_*.deb "$cache/img"
	rm -f "$cache"/*.deb
	depmod -b "$cache/img" "$kver"
fi
echo "$kver" >"$cache/kver"
