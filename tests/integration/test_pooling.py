"""Seed 000's "with and without connection pooling" on this machine: a local PostgreSQL target
with `pooling: on` points gets a private PgBouncer in front of it. A connection per transaction
through the pooler reuses server backends instead of forking one per connection, so connecting
costs a fraction of what it costs direct; the observer still watches the server behind the
pooler, and the pooler is gone when the study is."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

from tests.integration.conftest import dbscale, local_sizes_dir, read_runs, skip_or_fail

PLAN = """
targets:
  - name: pg
    url: local
    local: {{dir: {dir}, settings: {{fsync: off}}}}
workload: {{name: tpcb-select-only, params: {{scale: 1}}}}
load: {{clients: 4, duration: 2s, connect: per-transaction}}
matrix:
  pooling: [off, on]
repeat: 1
warmup_runs: 0
"""


def _pgbouncer_pids() -> list[str]:
    done = subprocess.run(["pgrep", "-x", "pgbouncer"], capture_output=True, text=True)
    return done.stdout.split()


@pytest.mark.slow
def test_pooling_on_runs_through_a_private_pgbouncer(core: ModuleType, tmp_path: Path) -> None:
    if shutil.which("pgbouncer") is None and not Path("/usr/sbin/pgbouncer").exists():
        skip_or_fail("PgBouncer is not installed (make system-deps installs it)")
    server_dir = local_sizes_dir("pooling")
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(dir=server_dir))
    out = tmp_path / "results"
    before = _pgbouncer_pids()
    try:
        done = dbscale("run", str(plan), "--out", str(out))
    finally:
        shutil.rmtree(server_dir, ignore_errors=True)
    done.assert_ok()
    assert "PgBouncer (session pooling) on port" in done.err
    assert _pgbouncer_pids() == before  # stopped with the target

    direct, pooled = read_runs(out / "runs.jsonl")
    assert (direct["point_key"], pooled["point_key"]) == ("pooling=off", "pooling=on")
    facts = json.loads((out / "targets" / "pg.json").read_text())["pooler"]
    assert facts["program"] == "pgbouncer" and facts["pool_mode"] == "session"
    assert pooled["target"].endswith(f":{facts['port']}/postgres")
    assert f":{facts['port']}/" not in direct["target"]
    # A backend forked per connection against one taken from the pool.
    assert pooled["connect_ms"]["mean"] < direct["connect_ms"]["mean"] / 2, (
        direct["connect_ms"], pooled["connect_ms"]
    )  # fmt: skip
    assert pooled["tps"] > direct["tps"]
    # Both runs observed the same server: the postmaster, not the pooler.
    assert pooled["observe"]["server"]["pid"] == direct["observe"]["server"]["pid"]
    assert "other processes used" not in done.err
