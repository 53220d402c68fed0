"""dbscale and pgbench run on each other's data."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import PgTestServer
from tests.integration.conftest import dbscale, read_runs


def pgbench(live: PgTestServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    return subprocess.run(
        [live.tool("pgbench"), *args], capture_output=True, text=True, env=env, check=False,
        timeout=120,
    )  # fmt: skip


def test_pgbench_runs_on_data_dbscale_loaded(live: PgTestServer) -> None:
    url = live.fresh_database("dbscale_loaded")
    dbscale("prepare", "tpcb", "--target", url, "--set", "scale=1").assert_ok()
    done = pgbench(live, "-n", "-T", "2", "-c", "2", url)
    assert done.returncode == 0, done.stderr
    assert "scaling factor: 1" in done.stdout
    assert "number of failed transactions: 0" in done.stdout


def test_dbscale_runs_on_data_pgbench_loaded(live: PgTestServer, tmp_path: Path) -> None:
    url = live.fresh_database("pgbench_loaded")
    init = pgbench(live, "-i", "-s", "1", "-q", url)
    assert init.returncode == 0, init.stderr
    out = tmp_path / "r"
    dbscale("run", "tpcb", "--target", url, "-c", "2", "-T", "2s", "--out", str(out)).assert_ok()
    [record] = read_runs(out / "runs.jsonl")
    assert record["transactions"] > 0
    assert record["failed"] == 0
