"""Server statistics: parsing, deltas over the run, MySQL status and performance_schema."""

from __future__ import annotations

import json

from dbscale.observe.server_stats import (
    MYSQL_GAUGES,
    counter_deltas,
    gauge_means,
    mysql_status_sql,
    parse_mysql_status,
    parse_pg_stats,
    parse_ps_waits,
    pg_stats_sql,
    ps_wait_deltas,
)

PG_SNAPSHOT = {
    "database": {"datid": 16384, "datname": "bench", "numbackends": 9, "xact_commit": 1000,
                 "xact_rollback": 2, "blks_hit": 5000, "blks_read": 10, "deadlocks": 0,
                 "stats_reset": None, "session_time": 12.5},
    "bgwriter": {"checkpoints_timed": 3, "buffers_clean": 0, "stats_reset": "2025-01-01"},
    "wal": {"wal_bytes": "123456", "wal_records": 100, "wal_sync": 7},
    "wal_lsn": 987654321,
}  # fmt: skip


def test_pg_stats_sql_follows_the_version() -> None:
    assert "pg_stat_wal" not in pg_stats_sql(130000)
    assert "pg_stat_wal" in pg_stats_sql(150000)
    assert "pg_stat_checkpointer" not in pg_stats_sql(160000)
    assert "pg_stat_checkpointer" in pg_stats_sql(170000)


def test_pg_snapshot_is_flat_numbers() -> None:
    flat = parse_pg_stats(json.dumps(PG_SNAPSHOT))
    assert flat["database.xact_commit"] == 1000
    assert flat["wal.wal_bytes"] == 123456  # numeric text (pg_lsn diffs are numeric)
    assert flat["wal_lsn"] == 987654321
    assert "database.datid" not in flat and "database.numbackends" not in flat
    assert "database.datname" not in flat and "bgwriter.stats_reset" not in flat


def test_counter_deltas_skip_resets_and_gauges() -> None:
    first = {"a": 10.0, "b": 5.0, "reset": 100.0, "g": 3.0, "t": 1.25}
    last = {"a": 25.0, "b": 5.0, "reset": 4.0, "g": 9.0, "t": 2.0, "new": 1.0}
    assert counter_deltas(first, last, ["g"]) == {"a": 15, "b": 0, "t": 0.75}


def test_mysql_status_parsing_and_gauges() -> None:
    rows = [["Innodb_row_lock_waits", "17"], ["THREADS_RUNNING", "4"], ["Uptime", "99"],
            ["Com_commit", "1000"], ["Innodb_buffer_pool_reads", "not a number"]]  # fmt: skip
    status = parse_mysql_status(rows)
    assert status == {"Innodb_row_lock_waits": 17, "Threads_running": 4, "Com_commit": 1000}
    later = parse_mysql_status([["Innodb_row_lock_waits", "40"], ["Threads_running", "8"],
                                ["Com_commit", "1600"]])  # fmt: skip
    assert counter_deltas(status, later, MYSQL_GAUGES) == {
        "Innodb_row_lock_waits": 23, "Com_commit": 600,
    }  # fmt: skip
    means = gauge_means([status, later], MYSQL_GAUGES)
    assert means == {"Threads_running_mean": 6.0, "Threads_running_max": 8.0}
    assert "Innodb_row_lock_waits" in mysql_status_sql()


def test_performance_schema_top_waits() -> None:
    first = parse_ps_waits([["wait/io/file/innodb/innodb_log_file", "10", "1000000000"],
                            ["wait/synch/mutex/x", "5", "5"]])  # fmt: skip
    last = parse_ps_waits([["wait/io/file/innodb/innodb_log_file", "30", "41000000000"],
                           ["wait/synch/mutex/x", "5", "5"],
                           ["wait/lock/table/sql/handler", "2", "2000000000"]])  # fmt: skip
    deltas = ps_wait_deltas(first, last)
    assert list(deltas) == ["wait/io/file/innodb/innodb_log_file", "wait/lock/table/sql/handler"]
    assert deltas["wait/io/file/innodb/innodb_log_file"] == {"count": 20, "wait_ms": 40.0}
