"""Statement figures without a server (issue 44): texts normalized alike from the client's and the
servers' spellings, deltas between snapshots (a reset entry counted from 0, evictions and
hidden prepared executions said), monitoring apart, the top statements kept, flags worded."""

from __future__ import annotations

import json

import pytest

from dbscale.modes import Dialect
from dbscale.observe.statement_sources import (
    Entry,
    StatementSnapshot,
    flag_for,
    parse_mysql_snapshot,
    parse_pg_snapshot,
    pg_texts_sql,
)
from dbscale.observe.statements import (
    TOP_STATEMENTS,
    ClientSide,
    fingerprint,
    is_monitoring,
    statements_record,
)


@pytest.mark.parametrize(
    ("client", "server"),
    [
        ("UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;",
         "UPDATE pgbench_branches SET bbalance = bbalance + ($1) WHERE bid = $2"),
        ("INSERT INTO t (a, b, c) VALUES (?, ?, ?)",
         "INSERT INTO `t` ( `a` , `b` , `c` ) VALUES (...)"),
        ("SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c",
         "SELECT DISTINCTROW `c` FROM `sbtest1` WHERE ID BETWEEN ? AND ? ORDER BY `c`"),
        ("UPDATE sbtest1 SET k=k+1 WHERE id=?", "UPDATE `sbtest1` SET `k` = `k` + ? WHERE ID = ?"),
        ("SELECT 'x' || c FROM t WHERE n = 42", "SELECT $1 || c FROM t WHERE n = $2"),
    ],
)  # fmt: skip
def test_client_and_server_spellings_share_a_fingerprint(client: str, server: str) -> None:
    assert fingerprint(client) == fingerprint(server)


def test_different_statements_differ() -> None:
    assert fingerprint("SELECT a FROM t WHERE id = $1") != fingerprint(
        "SELECT b FROM t WHERE id = $1"
    )
    assert fingerprint("END") != fingerprint("BEGIN")


def test_monitoring_queries_are_told_apart() -> None:
    assert is_monitoring(
        "SELECT json_build_object('database', (SELECT row_to_json(d) FROM pg_stat_database d))"
    )
    assert is_monitoring("SHOW GLOBAL STATUS WHERE `Variable_name` IN (...)")
    assert is_monitoring("SELECT @@version")
    assert not is_monitoring("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2")


def _pg(rows: list[dict[str, object]], other_calls: int = 0, evicted: int = 0) -> StatementSnapshot:
    text = json.dumps({"ours": rows, "other": {"calls": other_calls, "total_ms": 1.0},
                       "evicted": evicted})  # fmt: skip
    return parse_pg_snapshot(text)


def _row(queryid: int, calls: int, ms: float, blocks: int = 0) -> dict[str, object]:
    return {"queryid": queryid, "userid": 10, "dbid": 5, "toplevel": True, "calls": calls,
            "total_exec_time": ms, "rows": calls, "shared_blks_read": blocks,
            "wal_bytes": 100 * calls}  # fmt: skip


def test_deltas_between_snapshots_by_entry() -> None:
    first = _pg([_row(1, 100, 50.0, 7), _row(2, 10, 1.0), _row(3, 500, 9.0)], other_calls=3)
    last = _pg([_row(1, 160, 80.0, 10), _row(2, 10, 1.0), _row(3, 5, 2.0), _row(4, 2, 0.5)],
               other_calls=13, evicted=2)  # fmt: skip
    texts = {
        "1": "UPDATE a SET x = $1",
        "3": "SELECT 1 FROM b",
        "4": "SELECT * FROM pg_stat_activity",
    }
    record = statements_record("pg_stat_statements", first, last, texts, (0.0, 5.0))
    by_id = {s.id: s for s in record.statements}
    assert set(by_id) == {"1", "3"}  # 2 did not run; 4 is monitoring
    assert (by_id["1"].calls, by_id["1"].total_ms, by_id["1"].mean_ms) == (60, 30.0, 0.5)
    assert by_id["1"].counters["shared_blks_read"] == 3 and by_id["1"].per_call("wal_bytes") == 100
    assert by_id["3"].calls == 5  # went backwards: reset, counted from 0
    assert any("reset" in n for n in record.notes)
    assert record.monitoring.calls == 2 and record.other.calls == 10
    assert record.evicted == 2 and any("pg_stat_statements.max" in n for n in record.notes)
    assert [s.id for s in record.statements] == ["1", "3"]  # by total time
    assert by_id["1"].toplevel is True


def test_only_the_top_statements_are_kept_and_the_rest_summed() -> None:
    count = TOP_STATEMENTS + 5
    first = _pg([])
    last = _pg([_row(i, 1, float(i)) for i in range(1, count + 1)])
    texts = {str(i): f"SELECT c{i} FROM t" for i in range(1, count + 1)}
    record = statements_record("pg_stat_statements", first, last, texts, (None, None))
    assert len(record.statements) == TOP_STATEMENTS
    assert record.rest is not None and record.rest.statements == 5
    assert record.rest.total_ms == sum(range(1, 6))


def test_clients_join_with_their_gap() -> None:
    first = _pg([])
    last = _pg([_row(1, 10, 5.0)])
    client = ClientSide(command="UPDATE a SET x = :x", count=10, mean_ms=0.8)
    record = statements_record("pg_stat_statements", first, last, {"1": "UPDATE a SET x = $1"},
                               (0.0, 1.0), [client])  # fmt: skip
    [item] = record.statements
    assert item.client is not None and item.client.gap_ms == pytest.approx(0.3)


def test_mysql_rows_split_ours_from_other_schemas_and_note_hidden_executions() -> None:
    def rows(calls: int) -> list[list[object]]:
        sums = [0, calls, 3 * calls, 0, 0, 0, 0, 0, 0]
        return [["db", "ab12", calls, calls * 1e9, *sums, "1"],
                ["other", "cd34", 7 * calls, 1e9, *sums, "0"]]  # fmt: skip

    first, last = parse_mysql_snapshot(rows(10)), parse_mysql_snapshot(rows(30))
    first.executions, last.executions = 0.0, 500.0
    record = statements_record("performance_schema", first, last, {"ab12": "SELECT c FROM t"},
                               (0.0, 1.0))  # fmt: skip
    [item] = record.statements
    assert (item.calls, item.total_ms, item.per_call("rows_examined")) == (
        20,
        20.0,
        3.0,
    )  # picoseconds to ms
    assert record.other.calls == 140
    assert any("statement/com/Execute" in n for n in record.notes)


def test_flags_name_what_to_enable() -> None:
    assert "shared_preload_libraries" in flag_for(
        Dialect.POSTGRESQL, "pg_stat_statements must be loaded via shared_preload_libraries"
    )
    missing = flag_for(Dialect.POSTGRESQL, 'relation "pg_stat_statements" does not exist', "db1")
    assert "CREATE EXTENSION pg_stat_statements" in missing and "db1" in missing
    assert "pg_read_all_stats" in flag_for(Dialect.POSTGRESQL, "permission denied for function")
    assert "GRANT SELECT ON performance_schema" in flag_for(Dialect.MYSQL, "SELECT command denied")


def test_texts_are_asked_for_by_number_only() -> None:
    sql = pg_texts_sql([("12", "1", "1", "true"), ("x); DROP TABLE t; --", "1", "1", "true")])
    assert "IN (12)" in sql and "DROP" not in sql
    assert Entry().calls == 0
