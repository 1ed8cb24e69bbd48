#!/usr/bin/env bash
# What a user can get wrong gets a message and a status, never a crash:
# mrc-prof exits as the program did (127 for a missing command, 128+signal
# when killed) and with 2 for its own errors.
. "$(dirname "$0")/lib.sh"
expect() {
	local want=$1 msg=$2; shift 2
	"$@" >"$WORK/out" 2>"$WORK/err"; rc=$?
	[ $rc = "$want" ] || fail "$*: status $rc, expected $want"
	[ -z "$msg" ] || grep -q "$msg" "$WORK/err" || fail "$*: no '$msg' in: $(cat "$WORK/err")"
}
expect 127 "No such file" "$PROF" -q -- /nonexistent/program
expect 3 "" "$PROF" -q -- sh -c 'exit 3'
expect 137 "" "$PROF" -q -- sh -c 'kill -9 $$'
expect 2 "usage" "$PROF"
expect 2 "usage" "$PROF" --no-such-option -- true
expect 2 "bad value" "$PROF" -d 9 -- true
expect 2 "bad value" "$PROF" -b -1 -- true
expect 2 "unknown key" "$PROF" -c 'x:colour=red' -- true
expect 2 "tracing option" "$PROF" replay -r x.trace y.trace
expect 2 "exactly one" "$PROF" replay
expect 2 "No such file" "$PROF" replay /nonexistent.trace
expect 2 "No such file" "$PROF" -q -o /nonexistent/dir/r.json -- true
echo "ok: 12 misuses answered with a status and a message"
