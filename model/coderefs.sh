#!/usr/bin/env bash
# Check that the model's references to the code still hold (docs/protocol.md).
#   coderefs.sh [--root DIR] MODEL
# MODEL names the code it stands for in comments of two forms, each alone
# on its line:
#   /* @code FILE:FUNCTION:FIRST-LAST */   FILE (relative to DIR, default the
#        tree this script is in) exists, defines FUNCTION, and lines
#        FIRST..LAST lie within that definition
#   /* @linux FILE:FUNCTION */             outside this tree: the form only
# A definition starts at a line that begins in column 0, names FUNCTION
# followed by '(' and reaches a line that is exactly '{' before any line
# ending in ';' (which makes it a prototype); it ends at the next line that
# is exactly '}'.  Any other mention of @code or @linux is an error
# (outside the prose of a block comment, " * ..."), so a typo cannot hide
# a reference.
# Prints one line per broken reference and a summary; exits 1 if any broke.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --root ]; then
	root=$2
	shift 2
fi
[ $# -eq 1 ] || { echo "usage: coderefs.sh [--root DIR] MODEL" >&2; exit 2; }
model=$1
[ -r "$model" ] || { echo "coderefs.sh: cannot read $model" >&2; exit 2; }

exec awk -v root="$root" -v model="$model" '
function bad(at, msg) {
	printf "%s:%d: %s\n", model, at, msg
	nbad++
}

# The definitions of fn in path: ext[path, fn] = "first-last ..." ("" if
# none); 0 if path cannot be read.
function scan(path, fn,    line, n, cand, body, pat, list) {
	if ((path, fn) in ext)
		return 1
	if ((getline line < path) < 0)
		return 0
	pat = "(^|[^A-Za-z0-9_])" fn "\\("
	n = 1
	list = ""
	do {
		if (!cand) {
			if (line ~ /^[^ \t#\/*{}]/ && line ~ pat && line !~ /;[ \t]*$/)
				cand = n
		} else if (!body) {
			if (line == "{")
				body = 1
			else if (line ~ /;[ \t]*$/)
				cand = 0
		} else if (line == "}") {
			list = list " " cand "-" n
			cand = body = 0
		}
		n++
	} while ((getline line < path) > 0)
	close(path)
	ext[path, fn] = list
	return 1
}

# Lines a-b inside one of the definitions in list ("first-last ...")?
function within(list, a, b,    i, k, d, r) {
	k = split(list, d, " ")
	for (i = 1; i <= k; i++) {
		split(d[i], r, "-")
		if (a <= b && r[1] + 0 <= a && b <= r[2] + 0)
			return 1
	}
	return 0
}

/@code|@linux/ && !/^[ \t]*\*/ {
	ref = $0
	sub(/^[ \t]+/, "", ref)
	if (ref ~ /^\/\* @linux [A-Za-z0-9_.\/-]+:[A-Za-z_][A-Za-z0-9_]* \*\/$/) {
		nlinux++
		next
	}
	if (ref !~ /^\/\* @code [A-Za-z0-9_.\/-]+:[A-Za-z_][A-Za-z0-9_]*:[0-9]+-[0-9]+ \*\/$/) {
		bad(FNR, "not /* @code FILE:FUNCTION:FIRST-LAST */ or /* @linux FILE:FUNCTION */ alone on its line: " ref)
		next
	}
	ncode++
	spec = ref
	sub(/^\/\* @code /, "", spec)
	sub(/ \*\/$/, "", spec)
	split(spec, f, ":")
	split(f[3], lines, "-")
	if (!scan(root "/" f[1], f[2])) {
		bad(FNR, f[1] ": no such file")
		next
	}
	list = ext[root "/" f[1], f[2]]
	if (list == "") {
		bad(FNR, f[1] ": no definition of " f[2])
		next
	}
	if (!within(list, lines[1] + 0, lines[2] + 0)) {
		gsub(/^ /, "", list)
		bad(FNR, f[1] ":" f[2] ": lines " f[3] " are not within its definition (lines " list ")")
	}
}

END {
	printf "coderefs: %d @code and %d @linux references, %d broken\n", ncode, nlinux, nbad
	exit (nbad > 0)
}
' "$model"
