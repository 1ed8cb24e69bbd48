# shellcheck shell=bash
# Sourced by the check scripts that add result lines to a suite
# (kmod/probe-check.sh, scripts/kmod-lint.sh, scripts/deb-check.sh,
# scripts/dkms-check.sh): their options, $src, and result().
#
#   check_init SUITE "NAME..." "$@"
# takes --results FILE, --work DIR and --NAME VALUE for each NAME given
# (a variable of that name; preset it for a default), all required;
# leaves $work absolute and created, $src the top of the tree, $status 0.
check_init() {
	local names=" results work $2 " usage="usage: ${0##*/}" opt
	check_suite=$1
	shift 2
	for opt in $names; do
		usage+=" --$opt ${opt^^}"
	done
	while [ $# -gt 0 ]; do
		opt=${1#--}
		if [[ $1 != --* || $names != *" $opt "* || $# -lt 2 ]]; then
			echo "${0##*/}: unknown option $1" >&2
			echo "$usage" >&2
			exit 2
		fi
		printf -v "$opt" '%s' "$2"
		shift 2
	done
	for opt in $names; do
		[ -n "${!opt:-}" ] || { echo "$usage" >&2; exit 2; }
	done
	# shellcheck disable=SC2154 # set by printf -v above
	mkdir -p "$work" "$(dirname "$results")" && work=$(cd "$work" && pwd) || exit 2
	# shellcheck disable=SC2034 # $src and $status are the callers'
	src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) status=0
}

# check_fresh_work: empty $work (a script that must not see an old run).
check_fresh_work() {
	rm -rf "$work" && mkdir -p "$work"
}

# result PASS|FAIL|SKIP NAME [DETAIL]: print it, add it to $results.
result() {
	echo "$1 $check_suite/$2${3:+: $3}"
	echo "$1 $check_suite/$2" >>"$results"
	# shellcheck disable=SC2034
	[ "$1" != FAIL ] || status=1
}
