"""`dbscale sysbench` with sysbench's own command line (issue 42): prepare loads tables sysbench
itself then runs on, a run prints sysbench's block with the threads as clients and is recorded as
a dbscale study, and an option without an equivalent is refused by name before anything runs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from dbscale.errors import EXIT_USAGE
from tests.integration.conftest import dbscale
from tests.integration.mariadb import mariadb_from_env, sysbench_binary, sysbench_target_args

pytestmark = [pytest.mark.server, pytest.mark.native]
SIZES = ["--tables=2", "--table-size=500"]


def test_sysbench_as_typed_prepares_runs_and_records(tmp_path: Path) -> None:
    server = mariadb_from_env()
    url = server.fresh_database("dbscale_sysbench_cli")
    connection = sysbench_target_args(url)
    done = dbscale("sysbench", "oltp_read_write", *SIZES, *connection, "prepare")
    done.assert_ok()
    assert "Inserting 500 records into 'sbtest2'" in done.out, done.text
    # sysbench itself runs on the tables dbscale loaded.
    peer = subprocess.run([sysbench_binary(), "oltp_read_write", *SIZES, *connection,
                           "--events=20", "--time=0", "run"],
                          capture_output=True, text=True, check=False, timeout=120)  # fmt: skip
    assert peer.returncode == 0 and "transactions:" in peer.stdout, peer.stdout + peer.stderr
    out = tmp_path / "run"
    done = dbscale("sysbench", "oltp_read_write", *SIZES, *connection, "--threads=2",
                   "--time=1", "--out", str(out), "run")  # fmt: skip
    done.assert_ok()
    for line in ("SQL statistics:", "transactions:", "95th percentile:"):
        assert line in done.out, done.out
    [record] = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    assert record["clients"] == 2 and record["workload"] == "sysbench:oltp_read_write"
    assert record["transactions"] > 0
    refused = dbscale("sysbench", "oltp_read_write", *connection, "--histogram", "run")
    assert refused.code == EXIT_USAGE and "does not take --histogram" in refused.err
    refused.assert_user_error()
    cleaned = dbscale("sysbench", "oltp_read_write", *SIZES, *connection, "cleanup")
    cleaned.assert_ok()
    assert "Dropping table 'sbtest2'..." in cleaned.out
