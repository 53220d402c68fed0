"""Studies end to end against the test server: the socket-vs-tcp recipe in quick mode, and a
study killed with SIGKILL then resumed (no run lost, none run twice)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from dbscale.core import histogram_figures
from dbscale.results.points import PERCENTILES, latency_figures
from tests.conftest import REPO, PgTestServer
from tests.integration.conftest import dbscale, read_runs


def test_socket_vs_tcp_recipe_quick(live: PgTestServer, tmp_path: Path) -> None:
    url = live.fresh_database("dbscale_socket_vs_tcp")
    out = tmp_path / "svt"
    # No socket_dir: the server on localhost is asked for its unix_socket_directories.
    done = dbscale("run", "--recipe", "socket-vs-tcp", "--quick", "--target", url,
                   "--out", str(out))  # fmt: skip
    done.assert_ok()
    records = read_runs(out / "runs.jsonl")
    measured = [r for r in records if not r["warmup"]]
    assert [r["point_key"] for r in measured] == ["transport=unix", "transport=tcp"] * 4
    assert [r["run_key"] for r in records if r["warmup"]] == [
        "transport=unix#warmup0", "transport=tcp#warmup0",
    ]  # fmt: skip
    unix = next(r for r in measured if r["point"]["transport"] == "unix")
    assert f"host={live.socket_dir}" in unix["target"] and unix["tls"] is False
    tcp = next(r for r in measured if r["point"]["transport"] == "tcp")
    assert "127.0.0.1" in tcp["target"] and tcp["tls"] is False
    for record in records:  # the stored histogram reads back as what the run reported
        stored = histogram_figures([record["histogram"]], list(PERCENTILES.values()))
        summary = latency_figures(stored).model_dump()
        for key in ("count", "min", "p50", "p95", "p99", "p999", "max"):
            assert summary[key] == record["latency_ms"][key], key
    summary = json.loads((out / "summary.json").read_text())
    points = {p["point_key"]: p for p in summary["points"]}
    assert set(points) == {"transport=unix", "transport=tcp"}
    assert points["transport=unix"]["runs"] == 4
    assert points["transport=unix"]["tps"]["median_ci"] is None  # 4 runs: none exists
    assert points["transport=unix"]["tps"]["mean_ci"]["low"] > 0
    assert (out / "summary.csv").read_text().startswith("point_key,")
    assert json.loads((out / "plan.json").read_text())["plan"]["name"] == "socket-vs-tcp"
    # The seed's published finding beside the measured ratio, with a verdict (issue 42).
    page = (out / "report.html").read_text()
    assert 'id="published"' in page and "sockets are about 7% faster" in page
    assert "unix / tcp: 1.03x to 1.10x" in page
    assert any(v in page for v in ("agrees", "differs", "undecided: the interval"))
    assert "per point" in done.out
    compared = dbscale(
        "compare", str(out), "--a", "transport=unix", "--b", "transport=tcp", "--json"
    )
    compared.assert_ok()
    [row] = json.loads(compared.out)["points"]
    assert row["tps"]["n_a"] == 4 and row["tps"]["verdict"]


PLAN = """\
name: resumable
workload: {{name: tpcb-select-only, params: {{scale: 1}}}}
targets: [{{name: db, url: "{url}"}}]
load: {{clients: 2, duration: 1s}}
matrix:
  clients: [1, 2, 3]
repeat: 3
warmup_runs: 0
"""


def test_resume_after_sigkill_loses_nothing_and_repeats_nothing(
    live: PgTestServer, tmp_path: Path
) -> None:
    url = live.fresh_database("dbscale_resume")
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN.format(url=url))
    out = tmp_path / "study"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "run", str(plan), "--out", str(out)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=REPO,
    )  # fmt: skip
    runs_file = out / "runs.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if runs_file.is_file() and len(read_runs(runs_file)) >= 3:
            break
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    before = read_runs(runs_file)
    assert 3 <= len(before) < 9, "the study must be killed mid-way"

    dry = dbscale("run", str(plan), "--resume", str(out), "--dry-run")
    dry.assert_ok()
    assert f"{9 - len(before)} measured" in dry.out

    done = dbscale("run", str(plan), "--resume", str(out))
    done.assert_ok()
    after = read_runs(runs_file)
    assert after[: len(before)] == before  # nothing rewritten
    keys = [r["run_key"] for r in after]
    assert sorted(keys) == sorted(f"clients={c}#{rep}" for c in (1, 2, 3) for rep in range(3))
    summary = json.loads((out / "summary.json").read_text())
    assert [p["runs"] for p in summary["points"]] == [3, 3, 3]

    again = dbscale("run", str(plan), "--resume", str(out))
    again.assert_ok()
    assert len(read_runs(runs_file)) == 9  # a finished study runs nothing more
    changed = tmp_path / "changed.yaml"
    changed.write_text(PLAN.format(url=url).replace("duration: 1s", "duration: 2s"))
    refused = dbscale("run", str(changed), "--resume", str(out))
    refused.assert_user_error()
    assert "other settings" in refused.err


def test_a_socket_that_cannot_be_found_says_how_to_give_it(
    live: PgTestServer, tmp_path: Path
) -> None:
    """A server on another machine has no socket here: refused before anything runs."""
    done = dbscale("run", "--recipe", "socket-vs-tcp", "--quick", "--target",
                   "postgresql://bench@db1.example/bench", "--dry-run")  # fmt: skip
    done.assert_user_error()
    assert "socket_dir" in done.err.split("hint:")[1]
