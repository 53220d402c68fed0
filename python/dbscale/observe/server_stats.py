"""Server statistics as deltas over a run. PostgreSQL: pg_stat_database (this database),
pg_stat_bgwriter, pg_stat_checkpointer (17+), pg_stat_wal (14+) and the WAL position, read as one
JSON row. MySQL/MariaDB: a chosen set of SHOW GLOBAL STATUS counters and gauges (each server
reports the ones it has: MariaDB 10.6+ dropped Innodb_rows_*, its Handler_* say the same), and
performance_schema wait totals where it is enabled.

A snapshot is a flat dict `section.field -> number`; counters subtract, gauges average.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Snapshot = dict[str, float]

# Identifiers and gauges in the PostgreSQL views, never subtracted.
_PG_SKIP = frozenset({"database.datid", "database.numbackends"})

MYSQL_COUNTERS = (
    "Com_commit", "Com_rollback", "Questions", "Connections", "Aborted_connects",
    "Innodb_rows_read", "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
    "Innodb_buffer_pool_read_requests", "Innodb_buffer_pool_reads",
    "Innodb_buffer_pool_wait_free", "Innodb_buffer_pool_pages_flushed",
    "Innodb_log_waits", "Innodb_log_write_requests", "Innodb_log_writes",
    "Innodb_os_log_fsyncs", "Innodb_os_log_written", "Innodb_data_fsyncs",
    "Innodb_data_read", "Innodb_data_written", "Innodb_row_lock_waits", "Innodb_row_lock_time",
    "Innodb_deadlocks", "Created_tmp_tables", "Created_tmp_disk_tables", "Bytes_received",
    "Bytes_sent", "Handler_commit", "Handler_rollback", "Handler_read_key", "Handler_update",
    "Handler_write", "Handler_delete", "Table_locks_waited", "Threads_created",
    "Slow_queries",
)  # fmt: skip
MYSQL_GAUGES = ("Threads_running", "Threads_connected", "Innodb_row_lock_current_waits")
MYSQL_PS_ENABLED_SQL = "SELECT @@performance_schema"
MYSQL_PS_READABLE_SQL = "SELECT 1 FROM performance_schema.setup_consumers LIMIT 1"
MYSQL_PS_WAITS_SQL = """\
SELECT EVENT_NAME, COUNT_STAR, SUM_TIMER_WAIT
FROM performance_schema.events_waits_summary_global_by_event_name
WHERE COUNT_STAR > 0 AND EVENT_NAME <> 'idle'"""
PS_PER_MS = 1e9  # performance_schema timers are picoseconds


def pg_stats_sql(server_version_num: int) -> str:
    """One query returning every PostgreSQL statistic we keep as a JSON object."""
    parts = [
        "'database', (SELECT row_to_json(d) FROM pg_stat_database d "
        "WHERE datname = current_database())",
        "'bgwriter', (SELECT row_to_json(b) FROM pg_stat_bgwriter b)",
        "'wal_lsn', (SELECT CASE WHEN pg_is_in_recovery() THEN NULL "
        "ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0') END)",
    ]
    if server_version_num >= 140000:
        parts.append("'wal', (SELECT row_to_json(w) FROM pg_stat_wal w)")
    if server_version_num >= 170000:
        parts.append("'checkpointer', (SELECT row_to_json(c) FROM pg_stat_checkpointer c)")
    return f"SELECT json_build_object({', '.join(parts)})::text"


def mysql_status_sql() -> str:
    names = ", ".join(f"'{n}'" for n in (*MYSQL_COUNTERS, *MYSQL_GAUGES))
    return f"SHOW GLOBAL STATUS WHERE Variable_name IN ({names})"


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def parse_pg_stats(text: str) -> Snapshot:
    """The JSON object of `pg_stats_sql`, flattened to `section.field` numbers."""
    data = json.loads(text)
    out: Snapshot = {}
    for section, value in data.items():
        if isinstance(value, Mapping):
            for key, field in value.items():
                name = f"{section}.{key}"
                number = _number(field)
                if number is not None and name not in _PG_SKIP:
                    out[name] = number
        else:
            number = _number(value)
            if number is not None:
                out[section] = number
    return out


def parse_mysql_status(rows: Iterable[Sequence[Any]]) -> Snapshot:
    """SHOW GLOBAL STATUS rows (name, value) → numbers; names as the server spells them."""
    wanted = {n.lower(): n for n in (*MYSQL_COUNTERS, *MYSQL_GAUGES)}
    out: Snapshot = {}
    for name, value in rows:
        canonical = wanted.get(str(name).lower())
        number = _number(value)
        if canonical is not None and number is not None:
            out[canonical] = number
    return out


def counter_deltas(first: Snapshot, last: Snapshot, gauges: Iterable[str] = ()) -> Snapshot:
    """`last - first` for every counter in both; a counter that went backwards (statistics
    reset, server restart) is left out rather than reported negative."""
    skip = set(gauges)
    out: Snapshot = {}
    for key, end in last.items():
        start = first.get(key)
        if key in skip or start is None or end < start:
            continue
        delta = end - start
        out[key] = int(delta) if float(delta).is_integer() else round(delta, 3)
    return out


def gauge_means(samples: Sequence[Snapshot], gauges: Iterable[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    for name in gauges:
        values = [s[name] for s in samples if name in s]
        if values:
            out[f"{name}_mean"] = round(sum(values) / len(values), 2)
            out[f"{name}_max"] = max(values)
    return out


def parse_ps_waits(rows: Iterable[Sequence[Any]]) -> dict[str, tuple[int, float]]:
    """performance_schema wait summary rows → {event: (count, wait picoseconds)}."""
    out: dict[str, tuple[int, float]] = {}
    for name, count, wait in rows:
        c, w = _number(count), _number(wait)
        if c is not None and w is not None:
            out[str(name)] = (int(c), w)
    return out


def ps_wait_deltas(
    first: Mapping[str, tuple[int, float]], last: Mapping[str, tuple[int, float]], top: int = 10
) -> dict[str, dict[str, float]]:
    """The `top` wait events by time spent during the run."""
    deltas: list[tuple[str, int, float]] = []
    for name, (count, wait) in last.items():
        count0, wait0 = first.get(name, (0, 0.0))
        if count > count0 and wait >= wait0:
            deltas.append((name, count - count0, wait - wait0))
    deltas.sort(key=lambda d: -d[2])
    return {
        name: {"count": count, "wait_ms": round(wait / PS_PER_MS, 3)}
        for name, count, wait in deltas[:top]
    }
