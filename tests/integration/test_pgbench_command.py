"""`dbscale pgbench` with pgbench's own command line (issue 42): `-i -s` loads tables pgbench
itself then runs on, a run prints pgbench's block and is recorded as a dbscale study, the
connection comes from pgbench's flags and PG* variables, and an option without an equivalent is
refused by name before anything runs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from dbscale.errors import EXIT_USAGE
from tests.conftest import PgTestServer
from tests.integration.conftest import dbscale

pytestmark = [pytest.mark.server, pytest.mark.native]


def _pg_env(url: str) -> dict[str, str]:
    """The URL as PG* variables, as a pgbench user's shell has them."""
    parts = urlsplit(url)
    return {"PGHOST": parts.hostname or "", "PGPORT": str(parts.port or 5432),
            "PGUSER": unquote(parts.username or ""), "PGPASSWORD": unquote(parts.password or ""),
            "PGDATABASE": parts.path.lstrip("/"), "PGSSLMODE": "disable"}  # fmt: skip


def test_pgbench_as_typed_loads_runs_and_records(live: PgTestServer, tmp_path: Path) -> None:
    env = _pg_env(live.fresh_database("dbscale_pgbench_cli"))
    init = dbscale("pgbench", "-i", "-s", "2", env=env)
    init.assert_ok()
    assert init.out.startswith("done in ") and "client-side generate" in init.out, init.text
    # pgbench itself runs on the tables dbscale loaded.
    peer = subprocess.run(["pgbench", "-n", "-S", "-t", "5"], capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)  # fmt: skip
    assert peer.returncode == 0 and "scaling factor: 2" in peer.stdout, peer.stdout + peer.stderr
    out = tmp_path / "run"
    done = dbscale("pgbench", "-c2", "-j", "1", "-T", "1", "-nS", "-M", "prepared",
                   "--out", str(out), env=env)  # fmt: skip
    done.assert_ok()
    for line in ("transaction type: tpcb-select-only", "query mode: prepared",
                 "number of clients: 2", "number of threads: 1", "tps = "):  # fmt: skip
        assert line in done.out, done.out
    [record] = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    assert record["clients"] == 2 and record["protocol"] == "prepared"
    assert record["workload"] == "tpcb-select-only" and record["transactions"] > 0
    assert env["PGPASSWORD"] not in (out / "runs.jsonl").read_text() or not env["PGPASSWORD"]
    refused = dbscale("pgbench", "--foreign-keys", "-T", "1", env=env)
    assert refused.code == EXIT_USAGE and "does not take --foreign-keys" in refused.err
    refused.assert_user_error()
    # -r: the same commands as pgbench's own table lists, each with a latency, in its order
    timed = dbscale("pgbench", "-r", "-N", "-t", "20", "--out", str(tmp_path / "r"), env=env)
    timed.assert_ok()
    peer = subprocess.run(["pgbench", "-n", "-r", "-N", "-t", "20"], capture_output=True,
                          text=True, env={**os.environ, **env}, check=False)  # fmt: skip
    assert peer.returncode == 0, peer.stderr
    assert _command_table(timed.out) == _command_table(peer.stdout), timed.out + peer.stdout
    assert len(_command_table(timed.out)) == 9


def _command_table(output: str) -> list[str]:
    """The command texts of a `statement latencies` table, each after a parsed latency."""
    lines = output.split("statement latencies in milliseconds and failures:\n", 1)[1]
    rows = []
    for line in lines.split("\n\n", 1)[0].splitlines():
        latency, failures, command = line.split(maxsplit=2)
        assert float(latency) >= 0 and int(failures) == 0, line
        rows.append(command)
    return rows
