"""The bench's round-trip floor client (bench/round_trip_floor.rs) against the real servers: it
logs in, prepares sysbench's point select and runs events on tables dbscale prepared, and it
fails loudly, not with zero events, when the tables are missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration.conftest import dbscale
from tests.integration.mariadb import mariadb_from_env

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import floor_client


def _database(server: str, request: pytest.FixtureRequest, name: str) -> str:
    request.getfixturevalue("core")
    if server == "mariadb":
        return mariadb_from_env().fresh_database(name)
    return str(request.getfixturevalue("live").fresh_database(name))


@pytest.mark.parametrize("server", ["mariadb", "postgresql"])
def test_floor_client_runs_point_selects(server: str, request: pytest.FixtureRequest) -> None:
    url = _database(server, request, "dbscale_floor")
    missing = subprocess.run(floor_client.command(url, 2, 100, 2, 1), capture_output=True,
                             text=True, timeout=120)  # fmt: skip
    assert missing.returncode != 0, missing.stdout
    dbscale("prepare", "sysbench:oltp_point_select", "--target", url, "--set", "tables=2",
            "--set", "table_size=100").assert_ok()  # fmt: skip
    done = subprocess.run(floor_client.command(url, 2, 100, 2, 1), capture_output=True,
                          text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    events, seconds = floor_client.parse(done.stdout)
    assert events > 100 and 0.9 < seconds < 5, done.stdout
