#!/usr/bin/env bash
# Install the Debian 12 packages the build, the tests and the guest harness
# need.  Idempotent: packages already present cost one dpkg query.
set -eu
pkgs=(
	build-essential make pkg-config bc clang llvm libclang-rt-14-dev
	liburing-dev
	libibverbs-dev ibverbs-providers
	libucx-dev libfabric-dev libfabric-bin
	libbpf-dev bpftool libelf-dev zlib1g-dev libdw-dev
	spin strace
	sqlite3 xz-utils python3 libc6-dbg
	qemu-system-x86 busybox-static cpio kmod iproute2 file
	sparse linux-source-6.12 dkms
	openmpi-bin libopenmpi-dev elfutils ibverbs-utils
	flex bison libssl-dev
	debhelper dh-dkms dpkg-dev fakeroot lintian cmake
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]}; run as root or install them" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
