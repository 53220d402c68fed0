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


def _log_shapes(lines: list[str]) -> set[tuple[int, str]]:
    """Each line's column count and kind of time (a number, `skipped` or `failed`)."""
    shapes = set()
    for line in lines:
        fields = line.split()
        kind = "latency" if fields[2].isdigit() else fields[2]
        shapes.add((len(fields), kind))
    return shapes


def test_latency_limit_and_transaction_log_match_pgbench_s(
    live: PgTestServer, tmp_path: Path
) -> None:
    """-R with -L skips arrivals already over the limit and counts late transactions; -l
    --sampling-rate writes pgbench's per-transaction log: both tools print the same lines and
    write lines of the same shape on the same data."""
    url = live.fresh_database("limit_and_log")
    dbscale("prepare", "tpcb", "--target", url, "--set", "scale=1").assert_ok()
    flags = ["-c", "2", "-j", "2", "-T", "2", "-R", "4000", "-L", "1", "-l", "--sampling-rate",
             "0.5"]  # fmt: skip
    theirs = pgbench(live, "-n", *flags, f"--log-prefix={tmp_path / 'pg'}", "-M", "simple", url)
    assert theirs.returncode == 0, theirs.stderr
    out = tmp_path / "r"
    ours = dbscale("run", "tpcb", "--target", url, *flags, "--out", str(out),
                   "--output-format", "pgbench")  # fmt: skip
    ours.assert_ok()
    for text in (theirs.stdout, ours.text):
        assert "number of transactions skipped: " in text, text
        assert "number of transactions above the 1.0 ms latency limit: " in text, text
    [record] = read_runs(out / "runs.jsonl")
    assert record["latency_limit_ms"] == 1.0
    assert record["over_latency_limit"] <= record["transactions"]
    pg_lines = [line for f in tmp_path.glob("pg.*") for line in f.read_text().splitlines()]
    our_files = sorted((out / "transactions").iterdir())
    assert len(our_files) == 2  # one per thread, pgbench's naming: NAME and NAME.1
    assert our_files[1].name == our_files[0].name + ".1"
    our_lines = [line for f in our_files for line in f.read_text().splitlines()]
    assert record["transaction_log"]["lines"] == len(our_lines)
    # Sampled at 0.5: about half of what ran (binomial; 10 sd is far from chance).
    logged_done = sum(1 for line in our_lines if line.split()[2].isdigit())
    ran = record["transactions"] + record["failed"]
    assert abs(logged_done - ran / 2) < 10 * (ran * 0.25) ** 0.5 + 10, (logged_done, ran)
    # The shapes pgbench writes for completed transactions (7 columns under a rate); a skipped
    # line has the same columns.
    assert (7, "latency") in _log_shapes(pg_lines)
    assert _log_shapes(our_lines) <= {(7, "latency"), (7, "skipped"), (7, "failed")}
    assert (7, "latency") in _log_shapes(our_lines)
