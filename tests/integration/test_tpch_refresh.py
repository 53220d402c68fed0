"""TPC-H's refresh functions on the test PostgreSQL and MariaDB at scale factor 0.01: a power
run (`-c 1 -t 24`, refresh on) runs RF1, the 22 queries and RF2, each its own type; RF1 puts the
update set's orders under dbgen's sequence-1 keys and RF2 deletes the set's base orders, so the
tables hold as many rows as loaded; each run takes the sets after the last one the tables
took, streams in turn; the report times RF1 and RF2 and counts them in the power figure; and
`dbscale check tpch` asks for a fresh load once the tables took a set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import in_process as cli

SF = ("--set", "scale_factor=0.01")
ORDERS, LINEITEMS = 15_000, 60_175  # dbgen's rows at scale factor 0.01
PER_SET = 15  # SF x 1500 orders in each update set


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _sql(server: Any, database: str, sql: str) -> str:
    if hasattr(server, "psql"):
        return str(server.psql(sql, database))
    return str(server.sql(f"USE {database}; {sql}"))


def _counts(server: Any, database: str) -> tuple[int, int, int, int]:
    """Orders, line items, orders under new (sequence 1) keys, and the sets taken."""
    new_keys = "SELECT count(*) FROM orders WHERE mod(o_orderkey, 32) >= 8"
    values = [
        _sql(server, database, sql)
        for sql in ("SELECT count(*) FROM orders", "SELECT count(*) FROM lineitem", new_keys,
                    "SELECT count(*) FROM tpch_refresh_sets")
    ]  # fmt: skip
    orders, lines, moved, sets = (int(v) for v in values)
    return orders, lines, moved, sets


@pytest.mark.parametrize("server_kind", ["postgresql", "mariadb"])
def test_refresh_pairs_keep_the_rows_and_take_the_next_sets(
    server_kind: str, request: pytest.FixtureRequest, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    server = request.getfixturevalue("live" if server_kind == "postgresql" else "mariadb")
    database = "dbscale_tpch_refresh"
    url = server.fresh_database(database)
    cli(capsys, "prepare", "tpch", "--target", url, *SF).assert_ok()

    power = tmp_path / "power"
    cli(capsys, "run", "tpch", "--target", url, *SF, "--set", "refresh=true", "-c", "1",
        "-t", "24", "--out", str(power)).assert_ok()  # fmt: skip
    record = json.loads((power / "runs.jsonl").read_text().splitlines()[-1])
    types = record["transaction_types"]
    assert record["failed"] == 0 and record["transactions"] == 24
    assert types["rf1"]["transactions"] == 1 and types["rf2"]["transactions"] == 1
    assert all(types[f"q{n}"]["transactions"] == 1 for n in range(1, 23))
    # RF1 then RF2 of set 1: the set's 15 orders moved to new keys, nothing else changed.
    assert _counts(server, database) == (ORDERS, LINEITEMS, PER_SET, 1)
    report = (power / "report.html").read_text()
    assert "RF1 (s)" in report and "RF2 (s)" in report and "not comparable" in report

    # Two streams take sets 2 and 3, each its own pair.
    throughput = tmp_path / "throughput"
    cli(capsys, "run", "tpch", "--target", url, *SF, "--set", "refresh=true", "-c", "2",
        "-t", "24", "--out", str(throughput)).assert_ok()  # fmt: skip
    record = json.loads((throughput / "runs.jsonl").read_text().splitlines()[-1])
    assert record["failed"] == 0 and record["transaction_types"]["rf1"]["transactions"] == 2
    assert _counts(server, database) == (ORDERS, LINEITEMS, 3 * PER_SET, 3)
    taken = _sql(server, database, "SELECT min(set_number), max(set_number) FROM tpch_refresh_sets")
    assert taken.replace("|", "\t").split() == ["1", "3"], taken

    # TPC's answers are for the data as loaded: the check asks for a fresh load.
    checked = cli(capsys, "check", "tpch", "--target", url, *SF)
    assert checked.code != 0 and "took refresh update sets (up to set 3" in checked.err
    assert "dbscale prepare tpch" in checked.err

    # An RF1 that fails (a constraint refuses its set's number) leaves nothing, and its pass's
    # RF2 deletes nothing: the tables keep their size.
    refusing = "ALTER TABLE tpch_refresh_sets ADD CONSTRAINT no_set_4 CHECK (set_number < 4)"
    _sql(server, database, refusing)
    failing = tmp_path / "failing"
    cli(capsys, "run", "tpch", "--target", url, *SF, "--set", "refresh=true", "-c", "1",
        "-t", "24", "--out", str(failing))  # fmt: skip
    record = json.loads((failing / "runs.jsonl").read_text().splitlines()[-1])
    types = record["transaction_types"]
    assert (types["rf1"]["failed"], types["rf2"]["failed"], record["failed"]) == (1, 1, 2)
    assert "did not commit" in json.dumps(record["errors"]["messages"])
    assert _counts(server, database) == (ORDERS, LINEITEMS, 3 * PER_SET, 3)

    # Without refresh the run is the 22 queries, as before.
    plain = tmp_path / "plain"
    cli(capsys, "run", "tpch", "--target", url, *SF, "-c", "1", "-t", "22", "--out",
        str(plain)).assert_ok()  # fmt: skip
    record = json.loads((plain / "runs.jsonl").read_text().splitlines()[-1])
    assert record["transaction_types"].get("rf1", {"transactions": 0})["transactions"] == 0
