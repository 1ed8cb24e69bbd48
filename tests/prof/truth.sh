#!/usr/bin/env bash
# mrc-prof tells the truth about the program, not about itself
# (issue 28, part 3).  tests/prof/uring-io.c uses libmrcache (bpf monitor,
# io_uring backend) and does a known amount of VM activity and I/O of its
# own; each figure of the report is checked, exactly where the program
# alone decides it, within a stated tolerance where the loader and libc
# add their own:
#   mremap   5 calls, 20 MiB (exact: 2+3+4+5+6 MiB)
#   madvise  3 calls, 3 MiB (exact)
#   mmap     43 of its own (12 + 30 malloc'd + 1 fixed buffer) plus the
#            loader's and liburing's: 43 to 100 calls, 20 to 256 MiB
#            (the library's 16 GiB + 4 GiB reservations are not in it)
#   munmap   at least 43 calls, under 256 MiB
#   latency  mmap's p50 and p90 above 0 (the calibration subtracts the
#            least tracing overhead, not the median)
#   library  its mmap at least 16 GiB (the reservations, set apart); the
#            profiler's own page: at least 1 mmap, no mremap
#   I/O      50 reads of 64 KiB (10 read(2), 20 io_uring reads into
#            malloc'd buffers, 20 into a fixed buffer): 50 reads, 40
#            through io_uring, 20 fixed, 3,276,800 bytes, exact; libbpf's
#            BTF reads set apart, at most 64 KiB moved per read on average
#            (they ask for 2.6 MB and get 4 KiB: 10.3 GiB was reported)
#   cache    50 uses, 19 hits (the fixed buffer after its first use),
#            31 misses (each malloc'd buffer is unmapped by free)
# The same at -d 1 (one frame shown, the owners from the whole stack).
# Negative controls: the same judgement must fail on the report with the
# library's VM calls counted as the program's (the reservations), and on
# a run with --library-io (libbpf's reads as the program's).
. "$(dirname "$0")/lib.sh"
W=$B/tests/prof/uring-io
[ -x "$W" ] || fail "$W is not built"
"$PROF" -q -t "$WORK/r.txt" -o "$WORK/r.json" -- "$W"
rc=$?
[ $rc = 77 ] && skip "the bpf monitor or io_uring cannot start here"
[ $rc = 0 ] || fail "mrc-prof failed on uring-io (exit $rc)"
sed -n '/^VM activity/,/^$/p;/^Simulated/,/verdict/p' "$WORK/r.txt"

cat >"$WORK/judge.py" <<'EOF'
import json, sys

r = json.load(open(sys.argv[1]))
# A report from before these figures existed: zeros, judged like any other.
zero = {k: {"calls": 0, "bytes": 0} for k in r["syscalls"]}
r.setdefault("not_program", {"library": zero, "profiler": zero})
r["simulated_cache"].setdefault("io_uring", 0)
r["simulated_cache"].setdefault("io_fixed", 0)
if len(sys.argv) > 2 and sys.argv[2] == "fold-library":
    # The old report: the library's VM calls were the program's.
    for k, v in r["not_program"]["library"].items():
        r["syscalls"][k]["calls"] += v["calls"]
        r["syscalls"][k]["bytes"] += v["bytes"]
MiB, GiB = 1 << 20, 1 << 30
s, np, c = r["syscalls"], r["not_program"], r["simulated_cache"]
cfg = c["configs"][0]
checks = [
    ("program mremap calls == 5", s["mremap"]["calls"] == 5),
    ("program mremap bytes == 20 MiB", s["mremap"]["bytes"] == 20 * MiB),
    ("program madvise calls == 3", s["madvise"]["calls"] == 3),
    ("program madvise bytes == 3 MiB", s["madvise"]["bytes"] == 3 * MiB),
    ("program mmap calls in [43, 100]", 43 <= s["mmap"]["calls"] <= 100),
    ("program mmap bytes in [20 MiB, 256 MiB]", 20 * MiB <= s["mmap"]["bytes"] <= 256 * MiB),
    ("program munmap calls >= 43", s["munmap"]["calls"] >= 43),
    ("program munmap bytes < 256 MiB", s["munmap"]["bytes"] < 256 * MiB),
    ("mmap p50 > 0", s["mmap"]["latency_p50_ns"] > 0),
    ("mmap p90 > 0", s["mmap"]["latency_p90_ns"] > 0),
    ("library mmap bytes >= 16 GiB", np["library"]["mmap"]["bytes"] >= 16 * GiB),
    ("profiler mmap calls >= 1", np["profiler"]["mmap"]["calls"] >= 1),
    ("profiler mremap calls == 0", np["profiler"]["mremap"]["calls"] == 0),
    ("program reads == 50", c["io_reads"] == 50 and c["io_writes"] == 0),
    ("io_uring reads == 40", c["io_uring"] == 40),
    ("fixed-buffer reads == 20", c["io_fixed"] == 20),
    ("program bytes read == 50 x 64 KiB", c["io_bytes"] == 50 * 65536),
    ("library reads >= 100", c["library_io_calls"] >= 100),
    ("library bytes moved <= 64 KiB per read",
     c["library_io_bytes"] <= 65536 * max(c["library_io_calls"], 1)),
    ("cache uses == 50", cfg["uses"] == 50),
    ("cache hits == 19", cfg["hits"] == 19),
    ("cache misses == 31", cfg["misses"] == 31),
]
bad = [name for name, ok in checks if not ok]
for name, ok in checks:
    print(("ok    " if ok else "WRONG ") + name)
print("program: mmap %d calls %.1f MiB, munmap %d; library: mmap %d calls %.1f GiB; "
      "profiler: mmap %d; reads %d (io_uring %d, fixed %d); library reads %d, %.1f MiB"
      % (s["mmap"]["calls"], s["mmap"]["bytes"] / MiB, s["munmap"]["calls"],
         np["library"]["mmap"]["calls"], np["library"]["mmap"]["bytes"] / GiB,
         np["profiler"]["mmap"]["calls"], c["io_reads"], c["io_uring"], c["io_fixed"],
         c["library_io_calls"], c["library_io_bytes"] / MiB))
sys.exit(1 if bad else 0)
EOF
python3 "$WORK/judge.py" "$WORK/r.json" || fail "a figure of the report is wrong (above)"
echo "ok: every figure within its tolerance"

python3 "$WORK/judge.py" "$WORK/r.json" fold-library >"$WORK/control1.txt" &&
	fail "control: the library's reservations counted as the program's were not caught"
grep WRONG "$WORK/control1.txt"
echo "ok: control: the library's VM calls counted as the program's are caught"

# One frame shown (-d 1): the owners still come from the whole stack.
"$PROF" -q -d 1 -o "$WORK/d1.json" -- "$W" || fail "mrc-prof -d 1 failed"
python3 "$WORK/judge.py" "$WORK/d1.json" >"$WORK/d1.txt" ||
	{ grep WRONG "$WORK/d1.txt"; fail "at -d 1 a figure of the report is wrong"; }
echo "ok: the same figures at -d 1"

"$PROF" -q --library-io -o "$WORK/all.json" -- "$W" || fail "mrc-prof --library-io failed"
python3 "$WORK/judge.py" "$WORK/all.json" >"$WORK/control2.txt" &&
	fail "control: libbpf's reads counted as the program's (--library-io) were not caught"
grep WRONG "$WORK/control2.txt"
echo "ok: control: the libraries' reads counted as the program's are caught"
