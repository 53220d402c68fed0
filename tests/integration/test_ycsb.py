"""YCSB's core workloads on the test PostgreSQL and MariaDB: prepare loads YCSB's rows, each of
A-F runs its operation mix (shares within sampling error of the workload's, zero shares never
drawn: A and B update and never insert), inserts land as new rows, a scan reads rows, cleanup
drops the table, and bad properties or a missing table are one error with a hint."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.conftest import PgTestServer
from tests.integration.conftest import in_process as cli
from tests.integration.mariadb import MariaDBTestServer

RECORDS = 2_000
MIXES = {  # YCSB's workload files: read, update, insert, scan, read-modify-write
    "a": {"read": 0.5, "update": 0.5},
    "b": {"read": 0.95, "update": 0.05},
    "c": {"read": 1.0},
    "d": {"read": 0.95, "insert": 0.05},
    "e": {"scan": 0.95, "insert": 0.05},
    "f": {"read": 0.5, "read_modify_write": 0.5},
}
TYPES = ("read", "update", "insert", "scan", "read_modify_write")


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _row_count(server: str, request: pytest.FixtureRequest, database: str) -> int:
    if server == "mariadb":
        db: MariaDBTestServer = request.getfixturevalue("mariadb")
        return int(db.sql(f"SELECT count(*) FROM {database}.usertable"))
    live: PgTestServer = request.getfixturevalue("live")
    return int(live.psql("SELECT count(*) FROM usertable", dbname=database))


def _counts(out_dir: Path) -> dict[str, int]:
    record = json.loads((out_dir / "runs.jsonl").read_text().splitlines()[-1])
    types = record["transaction_types"]
    assert record["failed"] == 0
    return {name: int(types[name]["transactions"]) for name in TYPES}


@pytest.mark.parametrize("server", ["postgresql", "mariadb"])
def test_the_six_workloads_run_their_mixes(
    server: str, request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = "dbscale_ycsb"
    if server == "mariadb":
        url = request.getfixturevalue("mariadb").fresh_database(database)
    else:
        url = request.getfixturevalue("live").fresh_database(database)
    size = ("--set", f"recordcount={RECORDS}")
    prepared = cli(capsys, "prepare", "ycsb:a", "--target", url, *size)
    prepared.assert_ok()
    assert f"{RECORDS} rows" in prepared.err
    assert _row_count(server, request, database) == RECORDS
    for letter, mix in MIXES.items():
        before = _row_count(server, request, database)
        out = tmp_path / letter
        ran = cli(capsys, "run", f"ycsb:{letter}", "--target", url, "-c", "2",
                  "--duration", "1.5s", "--out", str(out))  # fmt: skip
        ran.assert_ok()
        counts = _counts(out)
        total = sum(counts.values())
        assert total > 500, (letter, counts)
        for name in TYPES:
            share = mix.get(name, 0.0)
            if share == 0.0:
                assert counts[name] == 0, (letter, name, counts)
                continue
            # Within 4.5 standard errors of the binomial share (the draw itself is checked to
            # 0.3 points over 10^5 operations in the core's tests).
            bound = 4.5 * math.sqrt(share * (1 - share) / total) + 1e-9
            assert abs(counts[name] / total - share) <= bound, (letter, name, counts)
        report = (out / "report.html").read_text()
        assert "YCSB: operation mix and latency by operation" in report, letter
        # Every committed insert is a new row; nothing else adds or removes one.
        assert _row_count(server, request, database) == before + counts["insert"], letter
    cleaned = cli(capsys, "cleanup", "ycsb:a", "--target", url)
    cleaned.assert_ok()
    missing = cli(capsys, "run", "ycsb:c", "--target", url, "--duration", "1s")
    assert missing.code != 0
    assert "usertable is missing" in missing.err and "hint:" in missing.err, missing.err
    assert "dbscale prepare ycsb" in missing.err


def test_bad_properties_are_refused_before_anything_runs(
    live: PgTestServer, capsys: pytest.CaptureFixture[str]
) -> None:
    for setting, words in [
        ("requestdistribution=exponential", "uniform, zipfian, latest or hotspot"),
        ("zipfianconstant=1", "below 1"),
        ("readproportion=2", "0 to 1"),
        ("fieldcount=0", "fieldcount must be 1 to 1000"),
    ]:
        refused = cli(capsys, "run", "ycsb:a", "--target", live.url, "--set", setting,
                      "--duration", "1s")  # fmt: skip
        refused.assert_user_error()
        assert words in refused.err, (setting, refused.err)
        assert "hint:" in refused.err
