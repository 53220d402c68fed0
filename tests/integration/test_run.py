"""`dbscale prepare` and `dbscale run` end to end against the test server."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import REPO, PgTestServer
from tests.integration.conftest import dbscale, read_runs


def test_workloads_lists_the_catalog(live: PgTestServer) -> None:
    done = dbscale("workloads")
    done.assert_ok()
    for name in ("tpcb", "tpcb-simple-update", "tpcb-select-only", "tpcc"):
        assert len([line for line in done.out.splitlines() if line.startswith(f" {name} ")]) == 1
    assert "--set key" not in done.out  # parameters: `dbscale workloads NAME`
    one = dbscale("workloads", "pgbench")  # an alias
    one.assert_ok()
    assert one.out.startswith("tpcb (aliases:") and " scale " in one.out
    as_json = json.loads(dbscale("workloads", "--json").out)
    assert "scale" in as_json["tpcb"]["params"]
    dbscale("workloads", "tpcx").assert_user_error()
    version = dbscale("--version")
    version.assert_ok()
    assert version.out.startswith("dbscale 0.")


def test_prepare_then_run(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    done = dbscale("run", "tpcb", "--target", tpcb_url, "-c", "2", "-T", "2s", "--out", str(out))
    done.assert_ok()
    assert "tps = " in done.out
    assert "(without initial connection time)" in done.out
    assert f"results: {out}" in done.out
    [record] = read_runs(out / "runs.jsonl")
    assert record["workload"] == "tpcb"
    assert record["clients"] == 2
    assert record["transactions"] > 0
    assert record["tps"] > 0
    assert record["warmup"] is False
    assert record["cancelled"] is False
    assert record["verdict"]["status"] == "ok"
    assert record["config"]["duration_s"] == 2.0
    assert record["started_at"] < record["ended_at"]
    assert len(record["intervals"]) >= 1
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["runs"]) == 1


def test_client_levels_with_warmup(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "levels"
    done = dbscale(
        "run", "tpcb-select-only", "--target", tpcb_url, "-c", "1,3", "-T", "1s",
        "--warmup", "1s", "--protocol", "prepared", "--out", str(out),
    )  # fmt: skip
    done.assert_ok()
    records = read_runs(out / "runs.jsonl")
    assert [r["warmup"] for r in records] == [True, False, False]
    assert [r["clients"] for r in records] == [3, 1, 3]
    assert all(r["protocol"] == "prepared" for r in records)


def test_per_transaction_connect(tpcb_url: str, tmp_path: Path) -> None:
    done = dbscale(
        "run", "tpcb", "--target", tpcb_url, "-c", "2", "-T", "1s",
        "--connect", "per-transaction", "--out", str(tmp_path / "c"),
    )  # fmt: skip
    done.assert_ok()
    assert "(including reconnection times)" in done.out


def test_ctrl_c_keeps_what_ran(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "cancelled"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "run", "tpcb", "--target", tpcb_url, "-c", "2",
         "-T", "60s", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stdout + stderr
    [record] = read_runs(out / "runs.jsonl")
    assert record["cancelled"] is True
    assert record["transactions"] > 0
    assert record["duration_s"] < 30
    # The seconds end at the stop: no empty seconds up to the 60 s limit.
    assert len(record["intervals"]) <= math.ceil(record["duration_s"]) + 1, record["intervals"]
    assert (out / "summary.json").is_file()


def test_a_second_ctrl_c_stops_a_counted_run_inside_a_long_statement(
    live: PgTestServer, tpcb_url: str, tmp_path: Path
) -> None:
    """A counted run's time limit is far off: the hard stop ends it at once, its seconds end
    there (they were handed in up to the limit, for hours), its duration is the stop's, and the
    server is asked to cancel the statement it abandoned (it ran on for its 30 s before)."""
    out = tmp_path / "hard"
    script = tmp_path / "sleep.sql"
    script.write_text("SELECT pg_sleep(30);\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env["PYTHONPATH"] = str(REPO / "python")
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbscale", "run", f"script:{script}", "--target", tpcb_url,
         "-c", "1", "-t", "3", "--out", str(out)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO,
    )  # fmt: skip
    still = ("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(30)%' "
             "AND state = 'active' AND pid <> pg_backend_pid()")  # fmt: skip
    deadline = time.monotonic() + 30  # a busy host starts the command slowly
    while live.psql(still) != "1" and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert live.psql(still) == "1", "the statement is not running: the check below would pass"
    time.sleep(2)  # some seconds measured before the stop
    proc.send_signal(signal.SIGINT)
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stdout + stderr
    [record] = read_runs(out / "runs.jsonl")
    assert record["cancelled"] is True and record["transactions"] == 0
    assert 2 < record["duration_s"] < 15, record["duration_s"]
    assert len(record["intervals"]) <= math.ceil(record["duration_s"]) + 1
    assert live.psql(still) == "0", "the abandoned statement runs on in the server"


def test_tls_modes(live: PgTestServer, tpcb_url: str, tmp_path: Path) -> None:
    done = dbscale(
        "run", "tpcb-select-only", "--target", tpcb_url, "--tls", "require", "-T", "1s",
        "--out", str(tmp_path / "tls"),
    )  # fmt: skip
    done.assert_ok()
    assert read_runs(tmp_path / "tls" / "runs.jsonl")[0]["tls"] is True
    verified = f"{tpcb_url}?sslmode=verify-full&sslrootcert={live.ca_file}"
    done = dbscale(
        "run", "tpcb-select-only", "--target", verified, "-T", "1s", "--out", str(tmp_path / "v")
    )
    done.assert_ok()
    assert read_runs(tmp_path / "v" / "runs.jsonl")[0]["tls"] is True


def test_scram_password_never_stored(live: PgTestServer, tpcb_url: str, tmp_path: Path) -> None:
    dbname = tpcb_url.rsplit("/", 1)[1]
    url = live.scram_url.rsplit("/", 1)[0] + "/" + dbname
    out = tmp_path / "scram"
    done = dbscale("run", "tpcb", "--target", url, "-T", "1s", "--out", str(out))
    done.assert_ok()
    assert "scram-secret" not in done.text
    for path in out.rglob("*"):  # targets/<name>.json included
        if path.is_file():
            assert "scram-secret" not in path.read_text(), path
    # PGPASSWORD fills in a URL without a password
    no_password = url.replace(":scram-secret", "")
    done = dbscale(
        "run", "tpcb-select-only", "--target", no_password, "-T", "1s",
        "--out", str(tmp_path / "pgpass"), env={"PGPASSWORD": "scram-secret"},
    )  # fmt: skip
    done.assert_ok()
    assert "scram-secret" not in (tmp_path / "pgpass" / "runs.jsonl").read_text()


def test_node_passwords_never_stored(live: PgTestServer, tpcb_url: str, tmp_path: Path) -> None:
    """Comma-joined URLs (more_urls) and a plan's `nodes:` list: both nodes are the test
    server, each URL with the password; no file of the results holds it (issue 40)."""
    dbname = tpcb_url.rsplit("/", 1)[1]
    url = live.scram_url.rsplit("/", 1)[0] + "/" + dbname
    joined = tmp_path / "joined"
    done = dbscale("run", "tpcb-select-only", "--target", f"{url},{url}", "-T", "1s",
                   "--routing", "round-robin", "--out", str(joined))  # fmt: skip
    done.assert_ok()
    plan = tmp_path / "nodes.yaml"
    plan.write_text(
        "workload: tpcb-select-only\nrepeat: 1\nwarmup_runs: 0\nload: {duration: 1s}\n"
        f"targets:\n  - name: pair\n    routing: round-robin\n    nodes:\n      - {url}\n"
        f"      - {{url: '{url}', vcpus: 1}}\n"
    )
    listed = tmp_path / "listed"
    done2 = dbscale("run", str(plan), "--out", str(listed))
    done2.assert_ok()
    for text in (done.text, done2.text):
        assert "scram-secret" not in text
    for out in (joined, listed):
        stored = json.loads((out / "plan.json").read_text())
        assert stored["plan"]["targets"][0]["more_urls"], stored
        for path in out.rglob("*"):
            if path.is_file():
                assert "scram-secret" not in path.read_text(errors="replace"), path


def test_the_drain_after_the_window_is_kept_apart(tpcb_url: str, tmp_path: Path) -> None:
    """Transactions still running at the end finish after the window: counted in the totals,
    marked as the drain, never folded into the last second."""
    out = tmp_path / "drain"
    dbscale(
        "run", "tpcb", "--target", tpcb_url, "-c", "8", "-T", "2s", "--out", str(out)
    ).assert_ok()
    [record] = read_runs(out / "runs.jsonl")
    intervals = record["intervals"]
    window = [i for i in intervals if not i.get("drain")]
    assert [i["t_s"] for i in window] == [1.0, 2.0]
    drains = [i for i in intervals if i.get("drain")]
    assert drains == intervals[len(window) :] and len(drains) <= 1
    for drain in drains:
        assert 2.0 < drain["t_s"] <= record["duration_s"] + 1e-6
    assert sum(i["transactions"] for i in intervals) == record["transactions"]
