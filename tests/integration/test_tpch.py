"""The TPC-H-derived workload on the test PostgreSQL and MariaDB at scale factor 0.01: prepare
loads dbgen's row counts, every query's answer equals DuckDB's on the same data (an oracle
independent of both servers: the tables copied out of PostgreSQL, each query's text run there
too), a power and a throughput run record each query as its own type, and the report says the
figures are derived from TPC-H."""

from __future__ import annotations

import json
import math
import os
import subprocess
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pytest

from dbscale import core
from dbscale.cli import commands
from tests.conftest import REPO, PgTestServer, skip_or_fail
from tests.integration.conftest import in_process as cli
from tests.integration.mariadb import MariaDBTestServer

SF = ("--set", "scale_factor=0.01")
# dbgen's rows at scale factor 0.01: lineitem, orders, partsupp, part, customer, supplier,
# nation, region.
ROWS = {"lineitem": 60_175, "orders": 15_000, "partsupp": 8_000, "part": 2_000,
        "customer": 1_500, "supplier": 100, "nation": 25, "region": 5}  # fmt: skip
TYPES = {"integer": "INTEGER", "bigint": "BIGINT", "numeric": "DECIMAL(15,2)", "date": "DATE",
         "character": "VARCHAR", "character varying": "VARCHAR"}  # fmt: skip


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _answers(url: str) -> dict[str, Any]:
    """Each query's statement and rows, as `dbscale check tpch` gets them."""
    plan = commands.plan_data("tpch", targets=[url], set_params=["scale_factor=0.01"], tls=None,
                              env=os.environ)  # fmt: skip
    report = core.check(plan.config(url))
    return {c.id: c for c in report.conditions}


def _duckdb_from_postgres(live: PgTestServer, database: str, tmp: Path) -> Any:
    """An in-memory DuckDB holding the PostgreSQL database's TPC-H tables, typed as there."""
    duck = duckdb.connect()
    for table in ROWS:
        columns = live.psql(
            "SELECT column_name || ':' || data_type FROM information_schema.columns "
            f"WHERE table_name = '{table}' ORDER BY ordinal_position", dbname=database,
        ).splitlines()  # fmt: skip
        kinds = dict(c.split(":", 1) for c in columns)
        path = tmp / f"{table}.csv"
        live.psql(f"\\copy {table} TO '{path}' WITH (FORMAT csv)", dbname=database)
        spec = ", ".join(f"'{n}': '{TYPES[k]}'" for n, k in kinds.items())
        # CHAR(n) keeps its padding out of comparisons; DuckDB's VARCHAR would not.
        select = ", ".join(f"rtrim({n}) AS {n}" if k == "character" else n
                           for n, k in kinds.items())  # fmt: skip
        duck.execute(f"CREATE TABLE {table} AS SELECT {select} FROM "
                     f"read_csv('{path}', header=false, columns={{{spec}}})")  # fmt: skip
    return duck


def _same(got: Any, want: Any) -> bool:
    """One field: numbers within 1e-6 relative (or 1e-9 absolute, or half a unit of the last
    digit the server printed), text without padding."""
    if got is None or want is None:
        return got is None and want is None
    if isinstance(want, (int, float, Decimal)):
        g, w = float(got), float(want)
        # A server that rounds a quotient (MariaDB's div_precision_increment) is right when the
        # exact value rounds to the digits it printed.
        decimals = len(str(got).partition(".")[2])
        rounding = 0.5 * 10.0**-decimals if decimals else 0.0
        return math.isclose(g, w, rel_tol=1e-6, abs_tol=1e-9) or abs(g - w) <= rounding + 1e-12
    if isinstance(want, date):
        return str(got).strip() == want.isoformat()
    return str(got).strip() == str(want).strip()


def _assert_same_answers(server: str, answers: dict[str, Any], duck: Any) -> None:
    for number in range(1, 23):
        answer = answers[f"Q{number}"]
        assert answer.status != "fail", (server, number, answer.examples)
        expected = duck.execute(answer.statement).fetchall()
        got = answer.rows
        assert len(got) == len(expected), (server, number, len(got), len(expected))
        for i, (row, want) in enumerate(zip(got, expected, strict=True)):
            assert len(row) == len(want), (server, number, i)
            assert all(_same(g, w) for g, w in zip(row, want, strict=True)), (
                server, number, i, row, want)  # fmt: skip


def test_answers_equal_duckdbs_on_postgresql_and_mariadb(
    live: PgTestServer, request: pytest.FixtureRequest, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    pg_url = live.fresh_database("dbscale_tpch")
    my_url = request.getfixturevalue("mariadb").fresh_database("dbscale_tpch")
    for url in (pg_url, my_url):
        prepared = cli(capsys, "prepare", "tpch", "--target", url, *SF)
        prepared.assert_ok()
        assert f"{sum(ROWS.values())} rows" in prepared.err, prepared.err
    for table, rows in ROWS.items():
        assert live.psql(f"SELECT count(*) FROM {table}", dbname="dbscale_tpch") == str(rows)
    duck = _duckdb_from_postgres(live, "dbscale_tpch", tmp_path)
    pg = _answers(pg_url)
    _assert_same_answers("postgresql", pg, duck)
    _assert_same_answers("mariadb", _answers(my_url), duck)
    # And the oracle can disagree: Q6 over a changed lineitem no longer matches.
    duck.execute("UPDATE lineitem SET l_discount = l_discount + 0.01")
    changed = duck.execute(pg["Q6"].statement).fetchall()
    assert not _same(pg["Q6"].rows[0][0], changed[0][0])
    checked = cli(capsys, "check", "tpch", "--target", pg_url, *SF)
    checked.assert_ok()
    assert "22 queries ran; no published answers" in checked.out


def test_power_and_throughput_runs_time_each_query(
    live: PgTestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = live.url_for("dbscale_tpch")
    if live.psql("SELECT count(*) FROM pg_database WHERE datname = 'dbscale_tpch'") == "0":
        url = live.fresh_database("dbscale_tpch")
        cli(capsys, "prepare", "tpch", "--target", url, *SF).assert_ok()
    for streams in (1, 2):
        out = tmp_path / f"streams{streams}"
        ran = cli(capsys, "run", "tpch", "--target", url, *SF, "-c", str(streams), "-t", "22",
                  "--out", str(out))  # fmt: skip
        ran.assert_ok()
        record = json.loads((out / "runs.jsonl").read_text().splitlines()[-1])
        assert record["transactions"] == 22 * streams and record["failed"] == 0
        types = record["transaction_types"]
        assert set(types) == {f"q{n}" for n in range(1, 23)} | {"rf1", "rf2"}
        assert types["rf1"]["transactions"] == types["rf2"]["transactions"] == 0
        assert all(types[f"q{n}"]["transactions"] == streams for n in range(1, 23))
        report = (out / "report.html").read_text()
        assert "derived from TPC-H" in report and "not comparable" in report
    # A query that fails is recorded as its own type with the server's message; the stream goes
    # on with the next one.
    live.psql("ALTER TABLE region RENAME TO region_gone", dbname="dbscale_tpch")
    try:
        out = tmp_path / "failing"
        cli(capsys, "run", "tpch", "--target", url, *SF, "-c", "1", "-t", "22", "--out",
            str(out))  # fmt: skip
    finally:
        live.psql("ALTER TABLE region_gone RENAME TO region", dbname="dbscale_tpch")
    record = json.loads((out / "runs.jsonl").read_text().splitlines()[-1])
    failed = {name: t["failed"] for name, t in record["transaction_types"].items() if t["failed"]}
    assert failed == {"q2": 1, "q5": 1, "q8": 1} and record["transactions"] == 19
    assert "region" in json.dumps(record["errors"]["messages"])
    bad = cli(capsys, "run", "tpch", "--target", url, "--set", "queries=0-30", "-t", "1")
    bad.assert_user_error()
    assert "queries must be numbers 1 to 22" in bad.err


def test_missing_tables_are_refused_with_the_prepare_to_run(
    live: PgTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    url = live.fresh_database("dbscale_tpch_none")
    missing = cli(capsys, "run", "tpch", "--target", url, *SF, "-t", "1")
    assert missing.code != 0 and "TPC-H tables are missing" in missing.err
    assert "dbscale prepare tpch" in missing.err


def test_go_tpc_runs_its_22_queries_on_the_tables_dbscale_loaded(
    mariadb: MariaDBTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    """go-tpc v1.0.7's `tpch run` (its own query texts; its --sf is a whole number, which only
    sets Q11's fraction) on dbscale's MariaDB tables at scale factor 0.01: every query runs."""
    go_tpc = REPO / ".cache" / "bin" / "go-tpc"
    if not go_tpc.exists():
        skip_or_fail("go-tpc is not installed: run `make peers` (scripts/install-go-tpc.sh)")
    url = mariadb.fresh_database("dbscale_tpch_gotpc")
    cli(capsys, "prepare", "tpch", "--target", url, *SF).assert_ok()
    done = subprocess.run(
        [str(go_tpc), "tpch", "run", "-d", "mysql", "-H", "127.0.0.1", "-P", str(mariadb.port),
         "-U", "root", "-D", "dbscale_tpch_gotpc", "--count", "22", "--interval", "100s"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "error" not in output.lower(), output
    ran = {line.split(":")[0].removeprefix("[Summary] ") for line in output.splitlines()
           if line.startswith("[Summary] Q")}  # fmt: skip
    assert ran == {f"Q{n}" for n in range(1, 23)}, output
