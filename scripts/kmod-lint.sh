#!/usr/bin/env bash
# The kernel maintainers' checks on kmod/ and the uapi header, one result
# line each: checkpatch.pl --strict and kernel-doc (from Debian's
# linux-source-6.12) and
# sparse with W=1 (make C=2) against every kernel's headers installed here
# (6.1, the guest's, and 6.12 if present, and their RT flavours), in
# kmod/probe-check.sh's one build per kernel.  Each check has a control: a
# planted defect must make it fail, or the check proves nothing.
#   kmod-lint.sh --results FILE --work DIR
set -u
# shellcheck source=scripts/check-lib.sh
. "$(dirname "$0")/check-lib.sh"
check_init kmod "" "$@"

# checkpatch.pl and the two data files it reads, from the source package.
tools=$work/checkpatch
tarball=$(ls /usr/src/linux-source-6.12*.tar.xz 2>/dev/null | head -n1)
if { [ ! -x "$tools/checkpatch.pl" ] || [ ! -f "$tools/kernel-doc" ]; } && [ -n "$tarball" ]; then
	rm -rf "$tools.tmp" && mkdir -p "$tools.tmp"
	tar -xJf "$tarball" -C "$tools.tmp" --wildcards --strip-components=2 \
		'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch' \
		'*/scripts/kernel-doc' &&
		rm -rf "$tools" && mv "$tools.tmp" "$tools"
fi
checkpatch() {
	perl "$tools/checkpatch.pl" --strict --no-tree --terse --show-types -f "$@" 2>&1 |
		grep -v ': total: 0 errors, 0 warnings, 0 checks'
}
if [ ! -x "$tools/checkpatch.pl" ]; then
	result SKIP checkpatch "no /usr/src/linux-source-6.12*.tar.xz (scripts/deps.sh installs it)"
else
	out=$(cd "$src" && checkpatch kmod/*.c kmod/*.h kmod/probes/*.c include/uapi/linux/mrmon.h)
	if [ -z "$out" ]; then result PASS checkpatch; else result FAIL checkpatch; echo "$out"; fi
	printf '// SPDX-License-Identifier: GPL-2.0\nint f(void) { return 0; }  \n' >"$work/bad.c"
	if [ -n "$(checkpatch "$work/bad.c")" ]; then result PASS checkpatch-control
	else result FAIL checkpatch-control "a planted defect went unreported"; fi
	# kernel-doc: every comment written as kernel-doc must parse as one.
	out=$(cd "$src" && perl "$tools/kernel-doc" -none -Wall kmod/*.c 2>&1)
	if [ -z "$out" ]; then result PASS kernel-doc; else result FAIL kernel-doc; echo "$out"; fi
	printf '/**\n * f() - a function\n * @x: a parameter it does not have\n */\nint f(void);\n' >"$work/bad-doc.c"
	if perl "$tools/kernel-doc" -none -Wall "$work/bad-doc.c" 2>&1 | grep -q 'Excess function parameter'; then
		result PASS kernel-doc-control
	else
		result FAIL kernel-doc-control "a wrong kernel-doc comment went unreported"
	fi
fi

# W=1 and sparse on every kernel's build of the module: kmod/probe-check.sh
# builds it once per header set for its probes and checks both (result
# lines kmod/sparse-w1-KVER).
bash "$src/kmod/probe-check.sh" --results "$results" --work "$work/probes" || status=1
command -v sparse >/dev/null || exit $status
# The control: a user pointer dereferenced as a kernel one must be seen.
control=$work/control
rm -rf "$control" && mkdir -p "$control"
printf '// SPDX-License-Identifier: GPL-2.0\n#include <linux/module.h>\nint mrmon_lint_bad(int __user *p);\nint mrmon_lint_bad(int __user *p) { return *p; }\nMODULE_LICENSE("GPL");\n' >"$control/bad.c"
echo 'obj-m := bad.o' >"$control/Kbuild"
kdir=$(ls -d /usr/src/linux-headers-*-amd64 | head -n1)
if MAKEFLAGS= make -C "$kdir" M="$control" W=1 C=2 modules 2>&1 | grep -qE 'warning:|error:'; then
	result PASS sparse-control
else
	result FAIL sparse-control "sparse did not see a __user dereference"
fi
exit $status
