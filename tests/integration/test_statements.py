"""Statement figures per run (issue 44) on the private servers: pg_stat_statements and
performance_schema differenced over the measured window, joined to the clients' own time per
statement; the flag lines when the figures cannot be read; `compare --statements`, `rank` and
`history` naming the statement that changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dbscale.observe.statements import fingerprint
from tests.conftest import PgTestServer
from tests.integration.conftest import dbscale, read_runs
from tests.integration.mariadb import mariadb_from_env

pytestmark = [pytest.mark.server, pytest.mark.native]

UPDATE_ACCOUNTS = "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2"
SELECT_BALANCE = "SELECT abalance FROM pgbench_accounts WHERE aid = $1"


def _statements(record: dict[str, Any]) -> dict[str, Any]:
    section: dict[str, Any] = record["observe"]["statements"]
    return section


def _measured(directory: Path) -> list[dict[str, Any]]:
    return [r for r in read_runs(directory / "runs.jsonl") if not r["warmup"]]


def _tpcb(url: str, out: Path, *args: str) -> None:
    dbscale("run", "tpcb", "--target", url, "--out", str(out), *args).assert_ok()


def test_tpcb_calls_match_committed_and_join_the_clients(
    live: PgTestServer, tmp_path: Path
) -> None:
    url = live.fresh_database("dbscale_statements")
    dbscale("prepare", "tpcb", "--target", url).assert_ok()
    _tpcb(url, tmp_path / "s", "-c", "4", "-T", "5s", "--repeat", "1", "--warmup-runs", "0")
    [record] = _measured(tmp_path / "s")
    section = _statements(record)
    assert section["source"] == "pg_stat_statements" and section.get("flag") is None
    # The server keeps the text of a statement's first execution (`+ ($1)` when its first value
    # was negative): statements are known by fingerprint.
    by_text = {s["fingerprint"]: s for s in section["statements"]}
    committed = record["transactions"]
    # The snapshot brackets the measured window: the UPDATE ran once per committed transaction,
    # give or take the transactions in flight when the window closed (one per client at most).
    update = by_text[fingerprint(UPDATE_ACCOUNTS)]
    assert committed <= update["calls"] <= committed + 4, (committed, update)
    assert abs(section["from_s"]) < 0.5, section  # taken right before the window opened
    # Every one of the seven statements is joined to the clients' own timing of it.
    assert len(section["statements"]) == 7, [s["text"] for s in section["statements"]]
    for item in section["statements"]:
        client = item["client"]
        assert abs(client["count"] - item["calls"]) <= 4, item
        assert client["mean_ms"] >= item["mean_ms"] * 0.9, item  # the client waits for it all
        assert client["p99_ms"] >= client["p50_ms"] > 0
    # The commit's time on the server excludes the WAL flush; the client's includes it.
    end = by_text[fingerprint("END")]
    assert end["client"]["gap_ms"] > end["mean_ms"], end
    # dbscale's own catalog queries are apart, not mixed in.
    assert section["monitoring"]["calls"] > 0
    assert not any("pg_stat" in s["text"] for s in section["statements"])


def test_a_database_without_the_view_gets_a_flag_not_a_failed_run(
    live: PgTestServer, tmp_path: Path
) -> None:
    live.psql('DROP DATABASE IF EXISTS "dbscale_nostat" WITH (FORCE)')
    live.psql('CREATE DATABASE "dbscale_nostat" TEMPLATE template0')
    url = live.url_for("dbscale_nostat")
    dbscale("prepare", "tpcb", "--target", url).assert_ok()
    _tpcb(url, tmp_path / "s", "-T", "1s", "--repeat", "1", "--warmup-runs", "0")
    [record] = _measured(tmp_path / "s")
    assert record["transactions"] > 0 and record["verdict"]["status"] == "ok"
    flag = _statements(record)["flag"]
    assert "view is missing in database dbscale_nostat" in flag and "CREATE EXTENSION" in flag
    assert "shared_preload_libraries" in flag
    report = (tmp_path / "s" / "report.html").read_text()
    assert "CREATE EXTENSION pg_stat_statements" in report


def test_a_user_without_the_privilege_gets_a_flag(live: PgTestServer, tmp_path: Path) -> None:
    live.psql('DROP DATABASE IF EXISTS "dbscale_nopriv" WITH (FORCE)')
    live.psql("DROP ROLE IF EXISTS dbscale_plain")
    live.psql("CREATE ROLE dbscale_plain LOGIN")
    live.psql('CREATE DATABASE "dbscale_nopriv" OWNER dbscale_plain')
    live.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", "dbscale_nopriv")
    live.psql("REVOKE ALL ON FUNCTION pg_stat_statements(boolean) FROM PUBLIC", "dbscale_nopriv")
    url = live.url_for("dbscale_nopriv", user="dbscale_plain")
    dbscale("prepare", "tpcb", "--target", url).assert_ok()
    _tpcb(url, tmp_path / "s", "-T", "1s", "--repeat", "1", "--warmup-runs", "0")
    [record] = _measured(tmp_path / "s")
    assert record["transactions"] > 0
    flag = _statements(record)["flag"]
    assert "may not read pg_stat_statements" in flag and "pg_read_all_stats" in flag, flag


def test_compare_rank_and_history_name_the_statement_an_index_drop_slowed(
    live: PgTestServer, tmp_path: Path
) -> None:
    url = live.fresh_database("dbscale_statements_index")
    dbscale("prepare", "tpcb", "--target", url).assert_ok()
    run = ("-c", "2", "-T", "1s", "--repeat", "4", "--warmup-runs", "0", "--explain")
    _tpcb(f"indexed={url}", tmp_path / "a", *run)
    live.psql("ALTER TABLE pgbench_accounts DROP CONSTRAINT pgbench_accounts_pkey",
              "dbscale_statements_index")  # fmt: skip
    _tpcb(f"dropped={url}", tmp_path / "b", *run)
    compared = dbscale("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--statements",
                       "--json")  # fmt: skip
    compared.assert_ok()
    [point] = json.loads(compared.out)["statements"]
    assert point["basis"] == "client", point
    first, second = point["statements"][:2]
    found = {first["fingerprint"], second["fingerprint"]}
    assert found == {fingerprint(UPDATE_ACCOUNTS), fingerprint(SELECT_BALANCE)}, point
    for change in (first, second):
        assert change["mean_ms"]["low"] > 5, change  # a sequential scan per call, not a probe
        assert change["share_pct"] > 20, change
    # Shares are of the change of the median total: the statements' own medians add up to
    # about it, not exactly.
    assert sum(c["share_pct"] or 0 for c in point["statements"]) == pytest.approx(100, abs=10)
    # The plans kept after each run show why: the index scan became a sequential scan.
    for change in (first, second):
        assert "Index Scan pgbench_accounts pgbench_accounts_pkey" in change["plan_a"], change
        assert "Seq Scan pgbench_accounts" in change["plan_b"], change
    printed = dbscale("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--statements")
    assert "client ms per transaction" in printed.out and first["fingerprint"] in printed.out
    assert "plan changed" in printed.out, printed.out
    page = tmp_path / "compare.html"
    dbscale("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--statements", "--html",
            str(page)).assert_ok()  # fmt: skip
    html = page.read_text()
    assert 'id="statements"' in html and "Seq Scan pgbench_accounts" in html
    metric = f"stmt:{first['fingerprint']}.mean_ms"
    ranked = dbscale("rank", str(tmp_path / "a"), str(tmp_path / "b"), "--metric", metric,
                     "--by", "target", "--json")  # fmt: skip
    ranked.assert_ok()
    best = json.loads(ranked.out)["configurations"][0]
    assert best["configuration"] == "indexed", best
    store = tmp_path / "history"
    for side in ("a", "b"):
        dbscale("history", "add", str(tmp_path / side), "--label", f"version={side}",
                "--store", str(store)).assert_ok()  # fmt: skip
    shown = dbscale("history", "show", "--metric", "stmt:*", "--store", str(store), "--json")
    shown.assert_ok()
    assert metric in shown.out


def test_mariadb_digests_join_sysbench_statements(tmp_path: Path) -> None:
    server = mariadb_from_env()
    url = server.fresh_database("dbscale_digests")
    sizes = ("--set", "tables=1", "--set", "table_size=1000")
    dbscale("prepare", "oltp_read_write", "--target", url, *sizes).assert_ok()
    common = ("oltp_read_write", "--target", url, *sizes, "-c", "2", "-T", "2s", "--repeat", "1",
              "--warmup-runs", "0")  # fmt: skip
    dbscale("run", *common, "-M", "simple", "--out", str(tmp_path / "text")).assert_ok()
    [record] = _measured(tmp_path / "text")
    section = _statements(record)
    assert section["source"] == "performance_schema" and not section["notes"], section
    by_text = {s["text"]: s for s in section["statements"]}
    commit = by_text["COMMIT"]
    # performance_schema's digest counts can miss a statement of a session that hit a deadlock
    # (measured: COMMIT 576 against Com_commit 577 = the run's 577 transactions, 4 deadlocks
    # retried), so a retried deadlock may take one COMMIT off its digest's count.
    lost = record["errors"]["total"]
    assert record["transactions"] - lost <= commit["calls"] <= record["transactions"] + 2
    # Every workload statement is joined (a ROLLBACK after a failed transaction is the
    # engine's, not one the workload runs).
    unjoined = {s["text"] for s in section["statements"] if not s.get("client")}
    assert unjoined <= {"ROLLBACK"}, unjoined
    ranges = [s for s in section["statements"] if "BETWEEN" in s["text"]]
    assert ranges and all(s["counters"]["rows_examined"] >= s["calls"] for s in ranges)
    # Prepared statements: MariaDB keeps no digest for their executions, and says so.
    dbscale("run", *common, "-M", "prepared", "--out", str(tmp_path / "ps")).assert_ok()
    [prepared] = _measured(tmp_path / "ps")
    [note] = _statements(prepared)["notes"]
    assert "statement/com/Execute" in note and "--protocol simple" in note


def test_mariadb_user_without_performance_schema_gets_a_flag(tmp_path: Path) -> None:
    server = mariadb_from_env()
    url = server.fresh_database("dbscale_digests_priv")
    server.sql("DROP USER IF EXISTS 'dbscale_plain'@'127.0.0.1'; "
               "CREATE USER 'dbscale_plain'@'127.0.0.1'; "
               "GRANT ALL ON dbscale_digests_priv.* TO 'dbscale_plain'@'127.0.0.1'")  # fmt: skip
    plain = server.url_for("dbscale_digests_priv", user="dbscale_plain")
    sizes = ("--set", "tables=1", "--set", "table_size=100")
    dbscale("prepare", "oltp_point_select", "--target", url, *sizes).assert_ok()
    dbscale("run", "oltp_point_select", "--target", plain, *sizes, "-T", "1s", "--repeat", "1",
            "--warmup-runs", "0", "--out", str(tmp_path / "s")).assert_ok()  # fmt: skip
    [record] = _measured(tmp_path / "s")
    assert record["transactions"] > 0
    flag = _statements(record)["flag"]
    assert "GRANT SELECT ON performance_schema.*" in flag, flag
