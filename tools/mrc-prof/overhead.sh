#!/usr/bin/env bash
# Overhead of mrc-prof on real programs, measured side by side: each round
# runs every workload untraced and traced, alternating, and the medians
# are compared.
#   wall:  the traced program's own run time (exec to last exit, as
#          mrc-prof reports it) over the untraced run's wall time;
#   tool:  mrc-prof's whole wall time (calibration, symbolization, reports);
#   cpu:   CPU time of the traced processes plus the tracer loop, over the
#          untraced run's CPU time: what tracing adds in work, insensitive
#          to other load on the machine (wall times are not).
#   tools/mrc-prof/overhead.sh [BUILD_DIR] [ROUNDS]
set -eu
B=${1:-build}
N=${2:-9}
PROF=$B/tools/mrc-prof
W=$(mktemp -d "${TMPDIR:-/tmp}/mrc-prof-overhead.XXXXXX")
trap 'rm -rf "$W"' EXIT
[ -x "$PROF" ] || { echo "build mrc-prof first: make BUILD=$B" >&2; exit 1; }

cat >"$W/w.py" <<'PY'
import json, re
d = [{"k": i, "v": str(i) * 10} for i in range(200000)]
s = json.dumps(d)
x = json.loads(s)
print(len(s), sum(len(re.findall(r"\d+", e["v"])) for e in x[:50000]))
PY
cat >"$W/s.sql" <<'SQL'
create table t(a integer primary key, b text);
with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000)
  insert into t select x, printf('%08x%08x', x * 2654435761 % 4294967296, x) from c;
create index ib on t(b);
select count(*), max(b) from t where b like 'a%';
SQL
seq 1 1000000 >"$W/x.txt"
# gcc compiles a real source file: one of mrc-prof's own, preprocessed.
gcc -E -D_GNU_SOURCE -Iinclude -Ilib -Itools/mrc-prof tools/mrc-prof/report.c >"$W/r.i"

workloads=(python3 sqlite3 gcc xz)
cmd() {
	case $1 in
	python3) echo "/usr/bin/python3 $W/w.py" ;;
	sqlite3) echo "sh -c 'rm -f $W/s.db; exec sqlite3 $W/s.db -init $W/s.sql .quit'" ;;
	gcc) echo "gcc -O2 -c $W/r.i -o $W/r.o" ;;
	xz) echo "xz -T1 -3 -c $W/x.txt" ;;
	esac
}
now() { date +%s.%N; }
json_num() { awk -v k="\"$1\":" 'index($0, k) { gsub(/[^0-9]/, ""); print $0 / 1e9; exit }' "$2"; }
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

TIMEFORMAT='%R %U %S'
for w in "${workloads[@]}"; do : >"$W/$w.plain"; : >"$W/$w.pcpu"; : >"$W/$w.prog"; : >"$W/$w.tool"; : >"$W/$w.tcpu"; done
for r in $(seq "$N"); do
	for w in "${workloads[@]}"; do
		c=$(cmd "$w")
		{ time eval "$c" >/dev/null 2>&1; } 2>"$W/t"
		awk '{ print $1 }' "$W/t" >>"$W/$w.plain"
		awk '{ print $2 + $3 }' "$W/t" >>"$W/$w.pcpu"
		t0=$(now); eval "$PROF -q -o $W/$w.json -- $c" >/dev/null 2>&1; t1=$(now)
		echo "$t1 - $t0" | bc >>"$W/$w.tool"
		json_num duration_ns "$W/$w.json" >>"$W/$w.prog"
		echo "$(json_num program_cpu_ns "$W/$w.json") + $(json_num tracer_cpu_ns "$W/$w.json")" \
			| bc -l >>"$W/$w.tcpu"
	done
done
# Per-call costs, measured on loops whose only difference is the tracing:
# 20,000 mmap+munmap pairs (every call stops twice); and the filter's cost
# on the syscalls it lets through (tools/mrc-prof/bench/filter-cost.c).
# The traced time is the program's own (exec to exit, from the report), not
# mrc-prof's start-up calibration and closing symbolization.
micro() {
	local code=$1 traced=$2
	for r in 1 2 3 4 5; do
		if [ "$traced" = 1 ]; then
			"$PROF" -q -b 0 --no-calibrate -o "$W/micro.json" -- /usr/bin/python3 -c "$code" \
				>/dev/null 2>&1
			json_num duration_ns "$W/micro.json"
		else
			t0=$(now); /usr/bin/python3 -c "$code" >/dev/null 2>&1; t1=$(now)
			echo "$t1 - $t0" | bc
		fi
	done | median
}
vm='import mmap
for i in range(20000): mmap.mmap(-1, 65536).close()'
vm_plain=$(micro "$vm" 0); vm_traced=$(micro "$vm" 1)
per_vm=$(echo "($vm_traced - $vm_plain) / 40000 * 1000000" | bc -l)
printf 'per traced VM call: %.1f us (20,000 mmap+munmap: %.3f s untraced, %.3f s traced)\n' \
	"$per_vm" "$vm_plain" "$vm_traced"
if [ -x "$B/tools/mrc-prof-filter-cost" ]; then
	"$B/tools/mrc-prof-filter-cost"
fi

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs; $N rounds, medians"
printf '%-8s %9s %9s %7s %9s %7s %9s %9s %7s %9s %9s\n' workload "plain s" "traced s" wall \
	"tool s" tool "plain cpu" "traced cpu" cpu "VM calls" "predicted"
for w in "${workloads[@]}"; do
	p=$(median <"$W/$w.plain"); g=$(median <"$W/$w.prog"); t=$(median <"$W/$w.tool")
	pc=$(median <"$W/$w.pcpu"); tc=$(median <"$W/$w.tcpu")
	calls=$(awk '/"calls"/ { gsub(/[^0-9]/, ""); n += $0 } /"sites"/ { exit } END { print n }' "$W/$w.json")
	# predicted: the per-call cost times this program's VM calls, over
	# its untraced wall time (other syscalls' filter cost left out).
	printf '%-8s %9.3f %9.3f %7.3f %9.3f %7.3f %9.3f %9.3f %7.3f %9s %8.2f%%\n' "$w" "$p" "$g" \
		"$(echo "$g / $p" | bc -l)" "$t" "$(echo "$t / $p" | bc -l)" "$pc" "$tc" \
		"$(echo "$tc / $pc" | bc -l)" "$calls" "$(echo "100 * $calls * $per_vm / 1000000 / $p" | bc -l)"
done
