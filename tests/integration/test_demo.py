"""`dbscale run` with no workload: the demo on the embedded server (here a private HOME, so the
user's own embedded server is never touched), shortened by options."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import PgTestServer
from tests.integration.conftest import dbscale, read_runs


def test_demo_prepares_once_then_reuses(live: PgTestServer, shared_tmp: Path) -> None:
    env = {"HOME": str(shared_tmp)}
    args = ("run", "-c", "1,2", "-T", "1s", "--warmup", "1s", "--set", "scale=1")
    first = dbscale(*args, "--out", str(shared_tmp / "one"), env=env)
    first.assert_ok()
    assert "preparing tpcb" in first.err
    records = read_runs(shared_tmp / "one" / "runs.jsonl")
    assert [r["warmup"] for r in records] == [True, False, False]
    second = dbscale(*args, "--out", str(shared_tmp / "two"), env=env)
    second.assert_ok()
    assert "reusing" in second.err
    embedded = shared_tmp / ".cache" / "dbscale" / "embedded"
    assert (embedded / "data" / "PG_VERSION").is_file()
    assert not (embedded / "data" / "postmaster.pid").exists()  # stopped afterwards
