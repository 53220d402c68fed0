"""sysbench workloads through the `dbscale` command on the test MariaDB and PostgreSQL: prepare,
a run whose sysbench-shaped output parses and agrees with runs.jsonl, cleanup, and the
error lines a MySQL user meets (bad password, missing database, TLS, missing tables). The
shorter checks call the command line in-process (`run_cli`) to keep the suite quick."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import PgTestServer
from tests.integration.conftest import dbscale, read_runs
from tests.integration.conftest import in_process as cli
from tests.integration.mariadb import MariaDBTestServer

SMALL = ("--set", "tables=2", "--set", "table_size=1000")
INTERVAL = re.compile(
    r"^\[ (\d+)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) \(r/w/o: ([\d.]+)/([\d.]+)/([\d.]+)\) "
    r"lat \(ms,95%\): ([\d.]+) err/s: ([\d.]+) reconn/s: ([\d.]+)$"
)


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process runs without --out write their results directory here, not in the checkout."""
    monkeypatch.chdir(tmp_path)


def _final_block(out: str) -> dict[str, float]:
    """sysbench's closing statistics as {label: first number}."""
    block = out[out.index("SQL statistics:") :]
    values: dict[str, float] = {}
    for line in block.splitlines():
        match = re.match(r"^\s+([a-z0-9 ]+):\s+([\d.]+)", line)
        if match:
            values.setdefault(match.group(1), float(match.group(2)))
    return values


@pytest.mark.parametrize("server", ["mariadb", "postgresql"])
def test_prepare_run_cleanup_with_sysbench_output(
    server: str, request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if server == "mariadb":
        url = request.getfixturevalue("mariadb").fresh_database("dbscale_sb_cli")
    else:
        url = request.getfixturevalue("live").fresh_database("dbscale_sb_cli")
    cli(capsys, "prepare", "sysbench:oltp_read_write", "--target", url, *SMALL).assert_ok()
    out_dir = tmp_path / "run"
    done = dbscale(  # the real command, as a subprocess
        "run", "oltp_read_write", "--target", url, "-c", "2", "-T", "2s", *SMALL,
        "--output-format", "sysbench", "--out", str(out_dir),
    )  # fmt: skip
    done.assert_ok()
    [record] = read_runs(out_dir / "runs.jsonl")
    intervals = [INTERVAL.match(line) for line in done.out.splitlines() if line.startswith("[ ")]
    assert intervals and all(intervals), done.out
    first = intervals[0]
    assert first is not None and first.group(1) == "1" and first.group(2) == "2"
    assert float(first.group(4)) > 0  # qps
    final = _final_block(done.out)
    queries = record["queries"]
    assert final["read"] == queries["read"] > 0
    assert final["write"] == queries["write"] > 0
    # An event restarted after an ignored error (PostgreSQL: 23505 from concurrent DELETE+INSERT)
    # counts the statements of its failed try too, as sysbench's do.
    exact = record["errors"]["total"] == 0
    assert final["other"] == queries["other"] >= 2 * record["transactions"]
    assert final["total"] == queries["total"] >= 20 * record["transactions"]
    assert not exact or queries["total"] == 20 * record["transactions"]
    assert final["transactions"] == final["total number of events"] == record["transactions"]
    assert final["95th percentile"] == pytest.approx(record["latency_ms"]["p95"], abs=0.01)
    assert record["workload_params"]["rand_type"] == "special"
    assert "qps" in done.out  # the summary table's column
    # Without tables: exit 4, and the hint names the sizes to prepare.
    cli(capsys, "cleanup", "sysbench:oltp_read_write", "--target", url, *SMALL).assert_ok()
    missing = cli(capsys, "run", "oltp_point_select", "--target", url, "-T", "1s", *SMALL)
    missing.assert_user_error()
    assert missing.code == 4 and "sbtest1" in missing.err and "table_size" in missing.err


def test_pgbench_shape_for_sysbench_on_request(
    mariadb: MariaDBTestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = mariadb.fresh_database("dbscale_sb_shape")
    args = ("--set", "tables=1", "--set", "table_size=100")
    cli(capsys, "prepare", "oltp_point_select", "--target", url, *args).assert_ok()
    done = cli(
        capsys, "run", "oltp_point_select", "--target", url, "-T", "1s", *args,
        "--output-format", "pgbench", "--out", str(tmp_path / "r"),
    )  # fmt: skip
    done.assert_ok()
    assert re.search(r"^progress: 1\.0 s, [\d.]+ tps", done.err, re.M), done.err
    assert re.search(
        r"^number of queries: \d+ \(read \d+, write 0, other 0\), qps = ", done.out, re.M
    )
    assert "SQL statistics:" not in done.out


def test_mysql_connection_errors_speak_mysql(
    mariadb: MariaDBTestServer, live: PgTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [
        (mariadb.url_for("sbtest", user="dbscale", password="wrong"), "1045", "MYSQL_PWD"),
        (mariadb.url_for("no_such_db"), "1049", "CREATE DATABASE"),
        ("mysql://root@127.0.0.1:1/sbtest", "refused", "3306"),
        (
            mariadb.url_for("sbtest") + f"?sslmode=verify-full&sslrootcert={live.ca_file}",
            "certificate",
            "sslrootcert",
        ),
    ]
    for url, error, hint in cases:
        done = cli(capsys, "prepare", "oltp_point_select", "--target", url, "--set", "tables=1")
        done.assert_user_error()
        assert done.code == 3, done.err
        assert error in done.err and hint in done.err.split("hint:")[1], done.err
        assert "pg_hba" not in done.err and "wrong" not in done.err
    typo = cli(capsys, "prepare", "oltp_point_select", "--target", mariadb.url, "--set", "time=3")
    typo.assert_user_error()
    assert "-T/--duration" in typo.err


def test_password_user_over_tls(
    mariadb: MariaDBTestServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mariadb.fresh_database("dbscale_sb_tls")
    url = mariadb.url_for("dbscale_sb_tls", user="dbscale", password="dbscale-pw")
    args = ("--set", "tables=1", "--set", "table_size=100")
    cli(capsys, "prepare", "oltp_point_select", "--target", url, *args).assert_ok()
    verified = f"{url}?sslrootcert={mariadb.ca_file}"
    done = cli(
        capsys, "run", "oltp_point_select", "--target", verified, "--tls", "verify-full",
        "-T", "1s", *args, "--out", str(tmp_path / "r"),
    )  # fmt: skip
    done.assert_ok()
    [record] = read_runs(tmp_path / "r" / "runs.jsonl")
    assert record["tls"] is True and record["transactions"] > 0
    assert "dbscale-pw" not in (tmp_path / "r" / "runs.jsonl").read_text()
