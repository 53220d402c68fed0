"""Where the server keeps its statement figures, and how to read them: PostgreSQL's
`pg_stat_statements` (by `queryid`, `userid`, `dbid`, `toplevel`), MySQL's and MariaDB's
`performance_schema.events_statements_summary_by_digest` (by schema and digest).

A snapshot holds numbers only, every entry of the run's own database (and, on PostgreSQL, its
own user); the rest of the server is summed as one "other" entry. Texts are read once, at the
end, for the entries that moved. When the figures cannot be read, `flag_for` names what to
enable instead of failing the run.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dbscale.modes import Dialect

Key = tuple[str, ...]
PG_SOURCE = "pg_stat_statements"
MYSQL_SOURCE = "performance_schema"
PS_PER_MS = 1e9  # performance_schema timers are picoseconds

# PostgreSQL's counters kept per statement, by their names in the view (13+; older servers
# name the time columns total_time/mean_time and lack the WAL ones).
PG_COUNTERS = (
    "shared_blks_hit", "shared_blks_read", "shared_blks_dirtied", "shared_blks_written",
    "local_blks_hit", "local_blks_read", "temp_blks_read", "temp_blks_written",
    "wal_records", "wal_fpi", "wal_bytes", "plans",
)  # fmt: skip
PG_TIME_COLUMNS = ("total_exec_time", "total_time")
# performance_schema's per-digest sums, by the names dbscale gives them.
MYSQL_COLUMNS = {
    "SUM_LOCK_TIME": "lock_ms",
    "SUM_ROWS_SENT": "rows_sent",
    "SUM_ROWS_EXAMINED": "rows_examined",
    "SUM_ROWS_AFFECTED": "rows_affected",
    "SUM_CREATED_TMP_TABLES": "tmp_tables",
    "SUM_CREATED_TMP_DISK_TABLES": "tmp_disk_tables",
    "SUM_SORT_MERGE_PASSES": "sort_merge_passes",
    "SUM_NO_INDEX_USED": "no_index_used",
    "SUM_ERRORS": "errors",
}


@dataclass
class Entry:
    """One statement's running totals as the server keeps them."""

    calls: float = 0.0
    total_ms: float = 0.0
    rows: float = 0.0
    counters: dict[str, float] = field(default_factory=dict)


@dataclass
class StatementSnapshot:
    """The server's statement figures at one instant: the run's own entries by key, and the
    totals of everything else."""

    ours: dict[Key, Entry] = field(default_factory=dict)
    other: Entry = field(default_factory=Entry)
    evicted: float | None = None  # PostgreSQL 14+: entries dropped for want of room (dealloc)
    overflow: float | None = None  # performance_schema: calls counted under the NULL digest
    executions: float | None = None  # performance_schema: prepared executions (no digest)


def entry_id(key: Key) -> str:
    """The server's own name of an entry: PostgreSQL's queryid, MySQL's digest."""
    return key[0] if len(key) > 3 else key[1]


def _number(value: Any) -> float:
    if isinstance(value, bool) or value is None:
        return 0.0
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


# -- PostgreSQL ---------------------------------------------------------------------------------

_PG_OURS = (
    "s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
    "AND s.userid = (SELECT oid FROM pg_roles WHERE rolname = current_user)"
)


def pg_snapshot_sql(version_num: int) -> str:
    """One JSON object: the run's own entries without their texts, the rest's totals, and the
    evictions so far."""
    time_column = "total_exec_time" if version_num >= 130000 else "total_time"
    dealloc = "(SELECT dealloc FROM pg_stat_statements_info)" if version_num >= 140000 else "NULL"
    return (
        "SELECT json_build_object("
        "'ours', (SELECT json_agg(row_to_json(s)) FROM pg_stat_statements(false) s "
        f"WHERE {_PG_OURS}), "
        f"'other', (SELECT json_build_object('calls', sum(s.calls), 'total_ms', "
        f"sum(s.{time_column})) FROM pg_stat_statements(false) s WHERE NOT ({_PG_OURS})), "
        f"'evicted', {dealloc})::text"
    )


def pg_key(row: Mapping[str, Any]) -> Key:
    return (
        str(row.get("queryid")),
        str(row.get("userid")),
        str(row.get("dbid")),
        str(row.get("toplevel", "")),
    )


def parse_pg_snapshot(text: str) -> StatementSnapshot:
    data = json.loads(text)
    snapshot = StatementSnapshot()
    for row in data.get("ours") or []:
        total = next((row[c] for c in PG_TIME_COLUMNS if c in row), 0.0)
        counters = {name: _number(row[name]) for name in PG_COUNTERS if name in row}
        snapshot.ours[pg_key(row)] = Entry(
            _number(row.get("calls")), _number(total), _number(row.get("rows")), counters
        )
    other = data.get("other") or {}
    snapshot.other = Entry(_number(other.get("calls")), _number(other.get("total_ms")))
    if data.get("evicted") is not None:
        snapshot.evicted = _number(data["evicted"])
    return snapshot


def pg_texts_sql(keys: Iterable[Key]) -> str:
    """The texts of the entries named by queryid (numbers only, so safe to inline)."""
    ids = sorted({int(k[0]) for k in keys if k[0].lstrip("-").isdigit()})
    listed = ", ".join(str(i) for i in ids) or "NULL"
    return (
        "SELECT s.queryid::text, s.query FROM pg_stat_statements s "
        f"WHERE {_PG_OURS} AND s.queryid IN ({listed})"
    )


# -- MySQL / MariaDB ----------------------------------------------------------------------------

MYSQL_SNAPSHOT_SQL = (
    "SELECT SCHEMA_NAME, DIGEST, COUNT_STAR, SUM_TIMER_WAIT, "
    + ", ".join(MYSQL_COLUMNS)
    + ", SCHEMA_NAME <=> DATABASE() FROM performance_schema.events_statements_summary_by_digest"
)
MYSQL_EXECUTIONS_SQL = (
    "SELECT COUNT_STAR FROM performance_schema.events_statements_summary_global_by_event_name "
    "WHERE EVENT_NAME = 'statement/com/Execute'"
)
MYSQL_CONSUMER_SQL = (
    "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'statements_digest'"
)


def parse_mysql_snapshot(rows: Iterable[Sequence[Any]]) -> StatementSnapshot:
    snapshot = StatementSnapshot()
    names = list(MYSQL_COLUMNS.values())
    for row in rows:
        schema, digest, calls, wait = row[0], row[1], row[2], row[3]
        sums = [_number(v) for v in row[4 : 4 + len(names)]]
        ours = str(row[-1]) == "1"
        if digest is None:
            snapshot.overflow = (snapshot.overflow or 0.0) + _number(calls)
        if digest is None or not ours:
            snapshot.other.calls += _number(calls)
            snapshot.other.total_ms += _number(wait) / PS_PER_MS
            continue
        counters = dict(zip(names, sums, strict=True))
        counters["lock_ms"] /= PS_PER_MS
        rows_out = counters["rows_sent"] + counters["rows_affected"]
        snapshot.ours[(str(schema), str(digest))] = Entry(
            _number(calls), _number(wait) / PS_PER_MS, rows_out, counters
        )
    return snapshot


def mysql_texts_sql(keys: Iterable[Key]) -> str:
    digests = sorted({k[1] for k in keys if all(c in "0123456789abcdef" for c in k[1])})
    listed = ", ".join(f"'{d}'" for d in digests) or "NULL"
    return (
        "SELECT DIGEST, DIGEST_TEXT FROM performance_schema.events_statements_summary_by_digest "
        f"WHERE SCHEMA_NAME <=> DATABASE() AND DIGEST IN ({listed})"
    )


def source_of(dialect: Dialect) -> str:
    return MYSQL_SOURCE if dialect is Dialect.MYSQL else PG_SOURCE


def flag_for(dialect: Dialect, message: str, database: str | None = None) -> str:
    """One line saying what to enable, from the error reading the figures gave."""
    text = message.lower()
    if dialect is Dialect.MYSQL:
        if "denied" in text or "1142" in text:
            return (
                "statement figures not read: the user may not read performance_schema; "
                "GRANT SELECT ON performance_schema.* TO the run's user"
            )
        return f"statement figures not read ({message}); set performance_schema=ON and restart"
    if "shared_preload_libraries" in text:
        return (
            "statement figures not read: pg_stat_statements is not loaded; add it to "
            "shared_preload_libraries and restart the server"
        )
    if "does not exist" in text:
        where = f" in database {database}" if database else ""
        return (
            f"statement figures not read: the pg_stat_statements view is missing{where}; "
            "run CREATE EXTENSION pg_stat_statements there (and load it through "
            "shared_preload_libraries)"
        )
    if "permission denied" in text:
        return (
            "statement figures not read: the run's user may not read pg_stat_statements; "
            "GRANT pg_read_all_stats TO it"
        )
    return f"statement figures not read: {message}"
