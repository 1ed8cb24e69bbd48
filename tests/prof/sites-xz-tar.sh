#!/usr/bin/env bash
# Debian's xz and tar (stripped, with their I/O all below the 16 KiB buffer
# threshold): the "Top call sites" table has rows, and at the default
# depth some of them reach the programs' own code (xz, liblzma, tar) past
# libc's malloc and setlocale and the loader.  Negative control: at
# --depth 2 every frame shown is libc's or ld.so's, as it was before.
. "$(dirname "$0")/lib.sh"
need xz tar
seq 1 200000 >"$WORK/x.txt"
# app_rows REPORT OBJECT-REGEX: rows of the site table with a frame there.
app_rows() {
	sed -n '/^Top call sites/,/^$/p' "$1" | awk -v re="$2" 'NR > 2 && $0 ~ re { n++ } END { print n + 0 }'
}
site_rows() { sed -n '/^Top call sites/,/^$/p' "$1" | awk 'NR > 2 && $1 ~ /^[0-9]+$/ { n++ } END { print n + 0 }'; }
run() {	# run NAME DEPTH-ARGS -- CMD...
	local name=$1; shift
	"$PROF" --top 100 -t "$WORK/$name.txt" "$@" >/dev/null || fail "mrc-prof failed: $*"
}
run xz -- xz -k -f -T1 "$WORK/x.txt"
run xz-d2 -d 2 -- xz -k -f -T1 "$WORK/x.txt"
run tar -- tar cf "$WORK/x.tar" -C "$WORK" x.txt
run tar-d2 -d 2 -- tar cf "$WORK/x.tar" -C "$WORK" x.txt
for p in xz tar; do
	sed -n '/^Top call sites/,/^$/p' "$WORK/$p.txt"
	[ "$(site_rows "$WORK/$p.txt")" -gt 0 ] || fail "$p: the call-site table is empty"
done
n=$(app_rows "$WORK/xz.txt" '<- (xz|liblzma)[^ ]*\+0x')
[ "$n" -gt 0 ] || fail "xz: no call site reaches xz or liblzma"
m=$(app_rows "$WORK/tar.txt" '<- tar\+0x')
[ "$m" -gt 0 ] || fail "tar: no call site reaches tar"
echo "ok: $n xz sites and $m tar sites reach the program's code"
n2=$(app_rows "$WORK/xz-d2.txt" '<- (xz|liblzma)[^ ]*\+0x')
m2=$(app_rows "$WORK/tar-d2.txt" '<- tar\+0x')
[ "$n2" = 0 ] && [ "$m2" = 0 ] || fail "control: at --depth 2 the programs were reached ($n2, $m2): the check cannot tell"
echo "ok: control: at --depth 2 only libc and ld.so frames"
