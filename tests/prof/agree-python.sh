#!/usr/bin/env bash
# python3 building, serializing and parsing a large structure (pymalloc
# arenas, realloc by mremap, brk): mrc-prof counts what strace -f -c counts.
. "$(dirname "$0")/lib.sh"
need strace setarch
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed (scripts/deps.sh)"
cat >"$WORK/w.py" <<'PY'
import json, re
d = [{"k": i, "v": str(i) * 10} for i in range(100000)]
s = json.dumps(d)
x = json.loads(s)
print(len(s), sum(len(re.findall(r"\d+", e["v"])) for e in x[:20000]))
PY
agree python3 /usr/bin/python3 "$WORK/w.py"
