# Sourced by tests/install/*.sh (make check-install): the source tree, the
# build directory the suite was built in, and a scratch directory of the
# test's own for fresh installs.
set -u
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${MRC_TEST_BUILD:?MRC_TEST_BUILD: the build directory}
ma=$(gcc -print-multiarch)
version=$(make -s -C "$src" print-version)
scratch=$build/install-check/$(basename "$0" .sh)
rm -rf "$scratch" && mkdir -p "$scratch"

fail() { echo "FAIL: $*"; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

# make, without the calling make's variables: only those given here.
tree_make() {
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$src" BUILD="$build" "$@"
}

# install_tree DESTDIR [VAR=VALUE...]: make install into DESTDIR.
install_tree() {
	local dest=$1
	shift
	tree_make install DESTDIR="$dest" "$@" >"$scratch/install.log" 2>&1 ||
		{ cat "$scratch/install.log"; fail "make install DESTDIR=$dest $*"; }
}

# Files and symlinks under DIR, one relative path a line.
files_under() {
	(cd "$1" && find . \( -type f -o -type l \) -printf '%P\n' | sort)
}
