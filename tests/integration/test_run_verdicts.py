"""Verdicts that never make a bad run look good, against the test MariaDB: clients the server
refused fail the run with the server's limit in the hint; deadlocks retried until they commit are
retries, not errors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from dbscale.errors import EXIT_RUN
from tests.integration.conftest import dbscale, read_runs
from tests.integration.mariadb import MariaDBTestServer, mariadb_from_env

SMALL = ("--set", "tables=1", "--set", "table_size=1000")


@pytest.fixture(scope="module")
def mariadb(core: object) -> MariaDBTestServer:
    return mariadb_from_env()


@pytest.fixture(scope="module")
def sbtest_url(mariadb: MariaDBTestServer) -> str:
    url = mariadb.fresh_database("dbscale_verdicts")
    dbscale("prepare", "sysbench:oltp_read_write", "--target", url, *SMALL).assert_ok()
    return url


@pytest.fixture
def connection_limit(mariadb: MariaDBTestServer) -> Iterator[int]:
    """The server's max_connections lowered to its minimum (10) for one test."""
    before = mariadb.sql("SELECT @@max_connections")
    mariadb.sql("SET GLOBAL max_connections = 10")
    try:
        yield 10
    finally:
        mariadb.sql(f"SET GLOBAL max_connections = {int(before)}")


def test_clients_the_server_refused_fail_the_run(
    sbtest_url: str, connection_limit: int, tmp_path: Path
) -> None:
    out = tmp_path / "refused"
    done = dbscale("run", "sysbench:oltp_point_select", "--target", sbtest_url, *SMALL,
                   "-c", "16", "-T", "1s", "--output-format", "pgbench",
                   "--out", str(out))  # fmt: skip
    done.assert_user_error()
    assert done.code == EXIT_RUN, done.text
    [record] = read_runs(out / "runs.jsonl")
    assert record["clients"] == 16 and record["clients_connected"] < 16
    assert record["verdict"]["status"] == "failed"
    assert record["connect_error"] == "Too many connections"
    assert record["server_max_connections"] == connection_limit
    connected = record["clients_connected"]
    # Not more than the server admits (MariaDB keeps one more for a SUPER user): a refused
    # client that got in only after the run ended does not count as connected.
    assert connected <= connection_limit + 1
    assert f"only {connected} of 16 clients connected" in done.err
    hint = done.err.split("hint:")[1]
    assert f"max_connections ({connection_limit})" in hint
    assert f"number of clients: 16 ({connected} connected)" in done.out


def test_a_dry_run_warns_of_points_over_max_connections(
    sbtest_url: str, connection_limit: int
) -> None:
    done = dbscale("run", "sysbench:oltp_point_select", "--target", sbtest_url, *SMALL,
                   "-c", "4,16", "-T", "1s", "--dry-run")  # fmt: skip
    done.assert_ok()
    assert (
        f"warning: target main: 1 point(s) (clients=16) need up to 18 connections, over its "
        f"max_connections ({connection_limit})"
    ) in done.err


def test_keep_going_records_a_failed_point_and_runs_the_rest(
    sbtest_url: str, connection_limit: int, tmp_path: Path
) -> None:
    # The 16-client point fails (the server admits 10); with --keep-going the 2-client point
    # after it still runs, and the study ends with exit 6 and what failed.
    out = tmp_path / "keep"
    done = dbscale("run", "sysbench:oltp_point_select", "--target", sbtest_url, *SMALL,
                   "-c", "16,2", "-T", "1s", "--keep-going", "--out", str(out))  # fmt: skip
    done.assert_user_error()
    assert done.code == EXIT_RUN, done.text
    records = read_runs(out / "runs.jsonl")
    assert [(r["clients"], r["verdict"]["status"]) for r in records] == [(16, "failed"), (2, "ok")]
    assert "1 of 2 runs failed (clients=16#0)" in done.err
    assert "keep_going: the study goes on" in done.out


def test_deadlocks_retried_until_they_commit_are_not_errors(
    sbtest_url: str, tmp_path: Path
) -> None:
    """4 clients on 1000 rows deadlock tens of times a second. A deadlock in a run's last
    milliseconds cannot be retried and fails its transaction; such a run is not the case under
    test, so up to three runs are made to find one where every retried transaction committed."""
    for attempt in range(3):
        out = tmp_path / f"retries{attempt}"
        done = dbscale("run", "sysbench:oltp_read_write", "--target", sbtest_url, *SMALL,
                       "-c", "4", "-T", "2s", "--out", str(out))  # fmt: skip
        done.assert_ok()
        [record] = read_runs(out / "runs.jsonl")
        assert record["retries"] > 0, "no deadlock to retry: the test proves nothing"
        if record["failed"] == 0:
            break
        assert record["verdict"]["status"] == "errors"
    assert record["failed"] == 0, "every attempt lost a transaction to the run's end"
    assert record["errors"]["by_class"].get("deadlock", 0) > 0
    assert record["verdict"]["status"] == "ok", record["verdict"]
    assert f"{record['retries']} retries after deadlock" in record["verdict"]["message"]


def test_a_dry_run_warns_when_the_data_sets_would_fill_the_disk(
    sbtest_url: str, tmp_path: Path
) -> None:
    """The data directory of a server on this machine is found from its process; its disk's
    free space is set against the data sets the study may load (not those of a plain run,
    which loads nothing)."""
    plan = tmp_path / "big.yaml"
    plan.write_text(
        f"targets: [{{name: db, url: '{sbtest_url}'}}]\n"
        "workload: {name: 'sysbench:oltp_point_select', params: {tables: 100, "
        "table_size: 1000000000}}\nload: {duration: 1s}\n"
    )
    done = dbscale("run", str(plan), "--dry-run")
    done.assert_ok()
    assert "warning: target db: its data sets need up to 33,800.0 GB" in done.err, done.err
    assert "/data has " in done.err and "GB free: a load would fill it" in done.err
    plain = dbscale("run", "sysbench:oltp_point_select", "--target", sbtest_url, "--set",
                    "tables=100", "--set", "table_size=1000000000", "--dry-run")  # fmt: skip
    plain.assert_ok()
    assert "a load would fill it" not in plain.err
