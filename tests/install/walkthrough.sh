#!/usr/bin/env bash
# The README's walkthrough, as written: the fenced blocks marked
# "walkthrough" (```sh walkthrough: commands; ```LANG walkthrough FILE: a
# file the next commands use) run in order as one script, from the source
# tree, with a scratch HOME and nothing of the caller's environment but
# PATH and the build directory (BUILD, so `make` finds the suite's build
# up to date).  Any command failing fails the test.  Control: the same
# harness on a walkthrough with a failing command must fail.
. "$(dirname "$0")/lib.sh"
command -v cmake >/dev/null || skip "no cmake"

# README -> bash script.
extract() {
	awk '
	/^```sh walkthrough$/ { mode = "sh"; next }
	/^```[a-z]+ walkthrough [^ ]+$/ { mode = "file"; print "cat > " $3 " <<'"'"'MRC_WALKTHROUGH_EOF'"'"'"; next }
	/^```/ && mode != "" { if (mode == "file") print "MRC_WALKTHROUGH_EOF"; mode = ""; next }
	mode != "" { print }
	' "$1"
}

walk() {	# README DIR: run README's walkthrough with HOME=DIR
	mkdir -p "$2"
	extract "$1" >"$2.sh"
	(cd "$src" && env -i HOME="$2" PATH=/usr/local/bin:/usr/bin:/bin BUILD="$build" \
		bash -e -o pipefail -x "$2.sh")
}

extract "$src/README.md" >"$scratch/steps.sh"
blocks=$(grep -c '^```[a-z]* walkthrough' "$src/README.md")
echo "$blocks walkthrough blocks"
for want in 'make install prefix=' 'pkg-config --cflags --libs mrcache' 'cmake --build' \
	'MRCACHE_MONITOR=' 'mrcache-info' 'cat > first.c' 'cat > CMakeLists.txt'; do
	grep -qF "$want" "$scratch/steps.sh" || fail "the walkthrough lost its step: $want"
done

printf '```sh walkthrough\ntrue\n```\n```sh walkthrough\nfalse\n```\n' >"$scratch/bad.md"
walk "$scratch/bad.md" "$scratch/bad-home" >"$scratch/bad.log" 2>&1 &&
	fail "control: a walkthrough with a failing command passed"

walk "$src/README.md" "$scratch/home" || fail "the README walkthrough failed (above: the command)"
echo PASS
