#!/usr/bin/env bash
# sqlite3 building and indexing a table in a file database.
. "$(dirname "$0")/lib.sh"
need sqlite3 strace setarch
cat >"$WORK/s.sql" <<'SQL'
create table t(a integer primary key, b text);
with recursive c(x) as (select 1 union all select x + 1 from c where x < 100000)
  insert into t select x, printf('%08x%08x', x * 2654435761 % 4294967296, x) from c;
create index ib on t(b);
select count(*), max(b) from t where b like 'a%';
SQL
prepare() { rm -f "$WORK/s.db"; }
agree sqlite3 sqlite3 "$WORK/s.db" -init "$WORK/s.sql" .quit
