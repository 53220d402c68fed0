"""A node that stops answering without closing its connections (SIGSTOP, as a paused VM or a
network blackhole does) never holds a run or the command: the run ends on time and is
recorded, a signal during the wrap-up ends the command at once with the record written, a local
cluster with a frozen node still stops, and servers a killed dbscale left running are stopped
at the next start (issue 40, cases 1 and 4). Every test is bounded in time."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbscale.targets.local.processes import OWNER_FILE, kill_tree, signal_tree
from tests.conftest import REPO, PgTestServer
from tests.integration.clusters import cluster_dir, cluster_plan
from tests.integration.conftest import read_runs
from tests.integration.forwarder import forwarding

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]


def _started(*args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    return subprocess.Popen(
        [sys.executable, "-m", "dbscale", *args], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO,
    )  # fmt: skip


def _read_until(proc: subprocess.Popen[str], needle: str, limit_s: float) -> str:
    """The command's output up to the first line holding `needle` (within `limit_s`)."""
    assert proc.stdout is not None
    seen, deadline = [], time.monotonic() + limit_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        if needle in line:
            return "".join(seen)
    raise AssertionError(f"{needle!r} never came:\n{''.join(seen)}")


def _two_nodes(live: PgTestServer, a: int, b: int) -> str:
    dbname = live.url.rsplit("/", 1)[1]
    return (
        f"postgresql://postgres@127.0.0.1:{a}/{dbname},postgresql://postgres@127.0.0.1:{b}/{dbname}"
    )


@pytest.fixture
def tpcb_ready(live: PgTestServer) -> PgTestServer:
    subprocess.run(
        [sys.executable, "-m", "dbscale", "prepare", "tpcb", "--target", live.url, "--set",
         "scale=1"], check=True, capture_output=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO / "python")},
    )  # fmt: skip
    return live


def _round_robin_run(
    server: PgTestServer, port_a: int, port_b: int, duration: str, out: Path
) -> subprocess.Popen[str]:
    """Select-only over the two forwarded nodes, 4 clients dealt round-robin, a 2 s deadline."""
    nodes = _two_nodes(server, port_a, port_b)
    return _started("run", "tpcb-select-only", "--target", nodes, "-c", "4", "-T", duration,
                    "--transaction-timeout", "2s", "--routing", "round-robin",
                    "--out", str(out))  # fmt: skip


def test_a_frozen_node_never_holds_the_run(tpcb_ready: PgTestServer, tmp_path: Path) -> None:
    """The first node (where the observer's session is) freezes 3 s into an 8 s run: the run
    ends on time, is recorded, and the command ends within the observer's bounded waits."""
    out = tmp_path / "frozen"
    with (
        forwarding("127.0.0.1", tpcb_ready.port) as a,
        forwarding("127.0.0.1", tpcb_ready.port) as b,
    ):
        proc = _round_robin_run(tpcb_ready, a.port, b.port, "8s", out)
        _read_until(proc, "progress: 3.0 s", 60)
        a.freeze()
        began = time.monotonic()
        output, _ = proc.communicate(timeout=90)
        took = time.monotonic() - began
    assert proc.returncode == 0, output
    assert took < 5 + 30, f"{took:.0f} s after the freeze"  # the run's rest, then bounded waits
    [record] = read_runs(out / "runs.jsonl")
    assert record["cancelled"] is False and record["duration_s"] == pytest.approx(8, abs=0.5)
    assert record["failovers"] >= 1 and record["transactions"] > 0
    notes = " ".join(record["observe"]["notes"])
    assert "did not answer within 5 s" in notes, notes


def test_a_signal_during_the_wrap_up_ends_the_command_with_the_run_kept(
    tpcb_ready: PgTestServer, tmp_path: Path
) -> None:
    out = tmp_path / "term"
    with (
        forwarding("127.0.0.1", tpcb_ready.port) as a,
        forwarding("127.0.0.1", tpcb_ready.port) as b,
    ):
        proc = _round_robin_run(tpcb_ready, a.port, b.port, "5s", out)
        _read_until(proc, "progress: 2.0 s", 60)
        a.freeze()
        # The window's last second, then the drain (at most the 2 s deadline): the wrap-up.
        _read_until(proc, "progress: 5.0 s", 30)
        time.sleep(2.5)
        proc.send_signal(signal.SIGTERM)
        began = time.monotonic()
        output, _ = proc.communicate(timeout=30)
        took = time.monotonic() - began
    assert proc.returncode == 143, output
    assert took < 8, f"{took:.1f} s after SIGTERM"
    assert "Traceback" not in output and "FATAL" not in output
    [record] = read_runs(out / "runs.jsonl")  # recorded, whenever the signal came
    if record["cancelled"]:  # it came before the run's end (a slow machine): cut and kept
        assert "cancelled by SIGTERM during run 1" in output, output
    else:  # the run was whole; only its wrap-up was cut
        assert "cancelled by SIGTERM during the wrap-up after run 1" in output, output
        assert "cut short by SIGTERM" in " ".join(record["observe"]["notes"])


def _postgres_pids(directory: Path) -> list[int]:
    """The live postmasters whose data directory is under `directory`."""
    found = []
    for pid_file in directory.glob("n*/data/postmaster.pid"):
        try:
            pid = int(pid_file.read_text().split()[0])
            os.kill(pid, 0)
        except (OSError, ValueError, IndexError):
            continue
        found.append(pid)
    return found


def test_a_local_cluster_with_a_frozen_primary_still_ends_and_stops(tmp_path: Path) -> None:
    """The issue's case: a postgresql-sync cluster's primary SIGSTOPped 3 s into a run with a
    3 s transaction deadline. The run is recorded and the cluster's stop wakes or kills the
    frozen node: nothing of the cluster is left running."""
    name = "frozen-pg"
    plan = tmp_path / "plan.yaml"
    plan.write_text(cluster_plan(name, "postgresql-sync", (
        "workload: {name: tpcb, params: {scale: 1}}\nrepeat: 1\nwarmup_runs: 0\n"
        "prepare: {load: auto}\nload: {clients: 2, duration: 8s, transaction_timeout: 3s}\n"
    ), nodes=2))  # fmt: skip
    out = tmp_path / "out"
    proc = _started("run", str(plan), "--out", str(out))
    try:
        _read_until(proc, "progress: 3.0 s", 240)
        pid_file = cluster_dir(name) / "n1" / "data" / "postmaster.pid"
        primary = int(pid_file.read_text().split()[0])
        assert signal_tree(primary, signal.SIGSTOP), "the primary and its backends frozen"
        output, _ = proc.communicate(timeout=150)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in _postgres_pids(cluster_dir(name)):
            kill_tree(pid)
    assert proc.returncode in (0, 6), output  # the frozen primary fails transactions: errors
    [record] = [r for r in read_runs(out / "runs.jsonl") if not r["warmup"]]
    assert record["duration_s"] == pytest.approx(8, abs=1.0)
    assert record["errors"]["by_class"].get("client_timeout", 0) >= 1, record["errors"]
    assert _postgres_pids(cluster_dir(name)) == [], "a node outlived the command"


def test_a_server_left_by_a_killed_dbscale_is_stopped_at_the_next_start(tmp_path: Path) -> None:
    directory = cluster_dir("orphan")  # a server's directory its OS user reaches (we may be root)
    pid_file = directory / "data" / "postmaster.pid"
    plan = tmp_path / "plan.yaml"
    plan.write_text(
        "targets: [{name: mine, url: local, local: {dir: " + str(directory) + "}}]\n"
        "workload: {name: tpcb-select-only, params: {scale: 1}}\nrepeat: 1\nwarmup_runs: 0\n"
        "prepare: {load: auto}\nload: {clients: 1, duration: 60s}\n"
    )
    proc = _started("run", str(plan), "--out", str(tmp_path / "first"))
    try:
        _read_until(proc, "progress: 1.0 s", 240)
        proc.kill()  # SIGKILL: no clean-up of any kind
        proc.wait(10)
        orphan = int(pid_file.read_text().split()[0])
        os.kill(orphan, 0)  # left running, as a killed process leaves it
        assert (directory / "run" / OWNER_FILE).read_text().split()[0] == str(proc.pid)
        again = _started("run", str(plan), "--set", "load.duration=1s",
                         "--out", str(tmp_path / "second"))  # fmt: skip
        output, _ = again.communicate(timeout=240)
    finally:
        if pid_file.is_file():
            kill_tree(int(pid_file.read_text().split()[0]))
        shutil.rmtree(directory, ignore_errors=True)
    assert again.returncode == 0, output
    assert f"left running by dbscale pid {proc.pid}" in output, output
    assert not pid_file.is_file(), "the second run stopped the server it started"
