#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The compile probes, checked: kmod/probe.sh against every 6.1 and 6.12
# header set installed here, each probe's answer printed beside the one
# kmod/probes/expected.txt gives, and the module built with those answers
# (so a fallback is seen to build), with W=1 and sparse: no diagnostic
# (scripts/kmod-lint.sh runs this script for that part of the lint, so
# CI builds the module once per kernel here).  Plus a guard that kmod/ reads no page
# tables itself: the lockless page-table accessors (ptep_get_lockless,
# pmdp_get_lockless, pte_offset_map*) change between releases, and
# get_user_pages_fast_only() is the module's only way to PFNs.
#   probe-check.sh --results FILE --work DIR
set -u
# shellcheck source=scripts/check-lib.sh
. "$(dirname "$0")/../scripts/check-lib.sh"
check_init kmod "" "$@"
expected=$src/kmod/probes/expected.txt

for c in "$src"/kmod/probes/*.c; do
	name=$(basename "$c" .c)
	grep -q "^$name " "$expected" || result FAIL "probe-$name-expected" "no row in kmod/probes/expected.txt"
done

sparse=C=2 lint=sparse-w1
command -v sparse >/dev/null || { sparse= lint=w1; result SKIP sparse "sparse not installed"; }
for kdir in /usr/src/linux-headers-6.1.*-amd64 /usr/src/linux-headers-6.12.*-amd64; do
	[ -d "$kdir" ] || continue
	kver=${kdir#/usr/src/linux-headers-}
	case $kver in 6.1.*) col=2 ;; 6.12.*) col=3 ;; esac
	out=$work/$kver
	rm -rf "$out" && mkdir -p "$out/include/uapi/linux"
	cp "$src"/kmod/Kbuild "$src"/kmod/*.c "$src"/kmod/*.h "$out/"
	cp "$src/include/uapi/linux/mrmon.h" "$out/include/uapi/linux/"
	sh "$src/kmod/probe.sh" "$kdir" "$src/kmod" "$out" >/dev/null 2>&1
	bad=0
	while read -r name want; do
		got=no
		grep -q "^#define MRMON_HAVE_$(echo "$name" | tr a-z A-Z) 1" "$out/mrmon_probes.h" && got=yes
		printf '  %-28s %-14s -> %-3s (expected %s)\n' "$kver" "$name" "$got" "$want"
		[ "$got" = "$want" ] || bad=1
	done < <(awk -v c="$col" '!/^#/ && NF { print $1, $c }' "$expected")
	if [ "$bad" = 0 ]; then result PASS "probes-$kver"; else result FAIL "probes-$kver" "see $out/probe-build/probe.log"; fi
	# The same build is the lint's: W=1, and sparse (C=2) when installed.
	if MAKEFLAGS= make -C "$kdir" M="$out" W=1 $sparse modules >"$out/build.log" 2>&1 && [ -f "$out/mrmon.ko" ]; then
		result PASS "probes-build-$kver"
	else
		result FAIL "probes-build-$kver" "the module does not build with these answers ($out/build.log)"
	fi
	diags=$(grep -E 'warning:|error:' "$out/build.log")
	if [ -z "$diags" ]; then result PASS "$lint-$kver"; else result FAIL "$lint-$kver"; echo "$diags"; fi
done

# The answers must not depend on the caller's make flags: under `make -n`
# the probes once compiled nothing and every one read "not available".
kdir=$(ls -d /usr/src/linux-headers-6.12.*-amd64 2>/dev/null | head -n1)
if [ -n "$kdir" ]; then
	kver=${kdir#/usr/src/linux-headers-}
	MAKEFLAGS=n sh "$src/kmod/probe.sh" "$kdir" "$src/kmod" "$work/makeflags-n" >/dev/null 2>&1
	if diff -q <(grep -v '^/\* Generated' "$work/$kver/mrmon_probes.h") \
		<(grep -v '^/\* Generated' "$work/makeflags-n/mrmon_probes.h") >/dev/null; then
		result PASS probes-ignore-makeflags
	else
		result FAIL probes-ignore-makeflags "MAKEFLAGS=n changed the answers on $kver"
	fi
fi

hits=$(grep -nE '_lockless\(|pte_offset_map|pmd_offset|walk_page_range' "$src"/kmod/*.c "$src"/kmod/*.h)
if [ -z "$hits" ]; then result PASS probes-no-page-table-walk; else result FAIL probes-no-page-table-walk; echo "$hits"; fi
exit $status
