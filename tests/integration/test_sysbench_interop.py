"""dbscale and the real sysbench (Debian's 1.0.20) run on each other's tables, on MariaDB and on
PostgreSQL: sysbench's oltp_read_write on tables `dbscale prepare` loaded, and dbscale's on tables
`sysbench prepare` created."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.integration.conftest import dbscale, read_runs
from tests.integration.mariadb import mariadb_from_env, run_sysbench, sysbench_binary

SIZE = ("--tables=2", "--table-size=1000")
SET_SIZE = ("--set", "tables=2", "--set", "table_size=1000")


def _database(server: str, request: pytest.FixtureRequest, name: str) -> str:
    request.getfixturevalue("core")
    sysbench_binary()
    if server == "mariadb":
        return mariadb_from_env().fresh_database(name)
    return request.getfixturevalue("live").fresh_database(name)


@pytest.mark.parametrize("server", ["mariadb", "postgresql"])
def test_sysbench_runs_on_tables_dbscale_prepared(
    server: str, request: pytest.FixtureRequest
) -> None:
    url = _database(server, request, "dbscale_sb_ours")
    dbscale("prepare", "sysbench:oltp_read_write", "--target", url, *SET_SIZE).assert_ok()
    out = run_sysbench("oltp_read_write", url, *SIZE, "--threads=2", "--time=2", "run")
    transactions = re.search(r"transactions:\s+(\d+)", out)
    assert transactions is not None and int(transactions.group(1)) > 0, out
    # The same rows per event as on sysbench's own tables: nothing missing, nothing extra.
    queries = re.search(r"total:\s+(\d+)", out)
    assert queries is not None and int(queries.group(1)) > 10 * int(transactions.group(1))


@pytest.mark.parametrize("server", ["mariadb", "postgresql"])
def test_dbscale_runs_on_tables_sysbench_prepared(
    server: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = _database(server, request, "dbscale_sb_theirs")
    run_sysbench("oltp_read_write", url, *SIZE, "prepare")
    done = dbscale(
        "run", "sysbench:oltp_read_write", "--target", url, "-c", "2", "-T", "2s", *SET_SIZE,
        "--out", str(tmp_path / "r"),
    )  # fmt: skip
    done.assert_ok()
    [record] = read_runs(tmp_path / "r" / "runs.jsonl")
    assert record["transactions"] > 0
    assert record["queries"]["total"] >= 20 * record["transactions"]
    assert record["failed"] <= 2
