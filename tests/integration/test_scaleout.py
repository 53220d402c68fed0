"""One run's clients over several load-generator workers, against the test PostgreSQL: local
worker processes, and Ray actors on a two-node Ray cluster bound to 127.0.0.1. The merged record
must be what one machine would have recorded: transactions the workers' sum, percentiles those of
the union of their histograms (decoded here by HdrHistogram's own Python package, not by dbscale),
an open-model rate split so the total is reached; a killed worker fails the run naming it, keeps
the other's measurements, and the study resumes."""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbscale.errors import EXIT_RUN
from tests.conftest import REPO, PgTestServer, skip_or_fail
from tests.integration.conftest import dbscale, read_runs

pytestmark = [pytest.mark.server, pytest.mark.native, pytest.mark.slow]

HIGHEST_US = 3_600_000_000  # the core's histogram range: 1 us to an hour, 3 digits


def _decoded(blobs: list[str]) -> Any:
    """The union of stored histograms, decoded and added by HdrHistogram's Python package."""
    from hdrh.histogram import HdrHistogram

    union = HdrHistogram(1, HIGHEST_US, 3)
    for blob in blobs:
        union.decode_and_add(blob)
    return union


def _buckets(histogram: Any) -> dict[int, int]:
    return {v.value_iterated_to: v.count_at_value_iterated_to
            for v in histogram.get_recorded_iterator()}  # fmt: skip


def _check_exact_merge(record: dict[str, Any], workers: int) -> None:
    parts = record["workers"]
    assert len(parts) == workers and record["config_workers"] == workers
    assert sum(w["transactions"] for w in parts) == record["transactions"] > 0
    assert sum(w["clients"] for w in parts) == record["clients"]
    assert [w["first_client"] for w in parts] == [0, parts[0]["clients"]][:workers]
    union = _decoded([w["histogram"] for w in parts])
    merged = _decoded([record["histogram"]])
    assert _buckets(merged) == _buckets(union)  # value by value, not only percentiles
    latency = record["latency_ms"]
    assert union.get_total_count() == latency["count"] == record["transactions"]
    buckets = sorted(_buckets(union).items())
    for p in (50, 95, 99, 99.9):
        assert merged.get_value_at_percentile(p) == union.get_value_at_percentile(p)
        # The record's percentile: the first value whose cumulative count reaches the rank.
        rank, seen = max(1, math.ceil(p / 100 * union.get_total_count())), 0
        value = next(v for v, n in buckets if (seen := seen + n) >= rank)
        assert latency[f"p{p:g}".replace(".", "")] * 1000 == pytest.approx(value, abs=0.5), p
    assert sum(i["transactions"] for i in record["intervals"]) == record["transactions"]
    for part in parts:
        assert 0 <= part["start_skew_bound_ms"] < 50, part


def test_two_local_workers_merge_exactly(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    done = dbscale("run", "tpcb", "--target", tpcb_url, "--clients", "4", "-T", "2s",
                   "--workers", "2", "--out", str(out))  # fmt: skip
    done.assert_ok()
    assert "2 load-generator workers (local processes): worker 1 on" in done.err
    (record,) = read_runs(out / "runs.jsonl")
    _check_exact_merge(record, 2)
    assert record["verdict"]["status"] in ("ok", "errors")
    # The workers' CPU is dbscale's: the observer counts their processes as the client, as much
    # as the workers say they used (never as other processes, whatever else this machine runs).
    workers_cores = (
        sum(w["client_cpu_s"]["total"] for w in record["workers"]) / record["duration_s"]
    )
    resources = record["observe"]["resources"]
    column = resources["columns"].index("process_cpu_cores")  # its processes, workers too
    observed = [row[column] for row in resources["rows"] if row[column] is not None]
    client_cores = sum(observed) / len(observed)
    assert client_cores >= 0.7 * workers_cores - 0.05, (client_cores, workers_cores)
    page = (out / "report.html").read_text()
    assert 'id="workers"' in page and "start skew bound ms" in page


def test_an_open_model_rate_is_split_to_reach_the_total(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    dbscale("run", "tpcb-select-only", "--target", tpcb_url, "--clients", "4", "-T", "3s",
            "--rate", "3000", "--workers", "2", "--out", str(out)).assert_ok()  # fmt: skip
    (record,) = read_runs(out / "runs.jsonl")
    assert record["rate_tps"] == 3000
    assert record["tps"] == pytest.approx(3000, rel=0.08)  # Poisson: ~9,000 arrivals, 1% sd
    shares = [w["transactions"] for w in record["workers"]]
    assert all(abs(n - record["transactions"] / 2) < 0.1 * record["transactions"] for n in shares)
    assert record["schedule_lag_ms"]["count"] == record["transactions"]


def test_tpcc_terminals_are_the_runs_own(live: PgTestServer, tmp_path: Path) -> None:
    url = live.fresh_database("dbscale_scaleout_tpcc")
    dbscale("prepare", "tpcc", "--target", url, "--set", "warehouses=2").assert_ok()
    out = tmp_path / "results"
    dbscale("run", "tpcc", "--target", url, "--clients", "4", "-T", "3s", "--set", "wait=false",
            "--workers", "2", "--out", str(out)).assert_ok()  # fmt: skip
    (record,) = read_runs(out / "runs.jsonl")
    _check_exact_merge(record, 2)
    tpcc = record["tpcc"]
    assert tpcc["active_warehouses"] == 2 and tpcc["new_orders"] > 0
    assert tpcc["new_orders"] == record["transaction_types"]["new_order"]["transactions"]
    assert tpcc["tpmc"] == pytest.approx(tpcc["new_orders"] / (record["duration_s"] / 60))


def _start_and_kill_one(
    args: list[str], kill_after_s: float, victim_no: int
) -> tuple[int, str, int]:
    """Runs `dbscale run ARGS`, kills worker `victim_no`'s process `kill_after_s` after the
    workers are named; the exit code, standard error and the killed pid."""
    process = subprocess.Popen([sys.executable, "-m", "dbscale", "run", *args],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               cwd=REPO)  # fmt: skip
    assert process.stderr is not None
    seen = []
    for line in process.stderr:
        seen.append(line)
        if "load-generator workers" in line:
            break
    named = line.split(f"worker {victim_no} on ", 1)[1]
    victim = int(named.split("pid ", 1)[1].split(")", 1)[0])
    time.sleep(kill_after_s)
    os.kill(victim, signal.SIGKILL)
    _, err = process.communicate(timeout=120)
    return process.returncode, "".join(seen) + err, victim


def _check_lost_run(out: Path, code: int, err: str, victim: int, victim_no: int) -> None:
    assert code == EXIT_RUN, err
    assert f"error: worker {victim_no} on " in err and f"pid {victim}) was lost" in err, err
    assert "the other workers' measurements are kept" in err
    assert err.count("was lost") == 1 and err.count("error: ") == 1, err  # said once
    assert "Traceback" not in err
    (record,) = read_runs(out / "runs.jsonl")
    assert record["worker_lost"] is True and record["verdict"]["status"] == "failed"
    kept, lost = record["workers"]
    assert kept["transactions"] == record["transactions"] > 0 and "lost" in lost
    assert lost["intervals"] and lost["transactions_received"] > 0  # what it measured, kept


def test_a_killed_worker_fails_the_run_and_the_study_resumes(tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    args = ["tpcb-select-only", "--target", tpcb_url, "--clients", "4", "-T", "5s",
            "--workers", "2", "--out", str(out)]  # fmt: skip
    code, err, victim = _start_and_kill_one(args, 2.0, 1)  # the first polled: the others wait
    _check_lost_run(out, code, err, victim, 1)
    resumed = dbscale("run", *args[:-2], "--resume", str(out))
    resumed.assert_ok()
    records = read_runs(out / "runs.jsonl")
    assert len(records) == 2 and records[1]["verdict"]["status"] == "ok"
    assert records[1]["run_key"] == records[0]["run_key"]


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[str]:
    """A head (no CPUs: no load on it) and two one-CPU nodes, all on 127.0.0.1."""
    try:
        from ray.cluster_utils import Cluster
    except ImportError:
        skip_or_fail("Ray is missing: `make venv` installs the dev extra")
        raise
    memory = 80 * 1024 * 1024
    cluster = Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "include_dashboard": False, "object_store_memory": memory,
        "node_ip_address": "127.0.0.1"})  # fmt: skip
    try:
        for _ in range(2):
            cluster.add_node(num_cpus=1, object_store_memory=memory, node_ip_address="127.0.0.1")
        cluster.wait_for_nodes()
        yield str(cluster.address)
    finally:
        cluster.shutdown()


def test_ray_workers_one_per_node(ray_cluster: str, tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    done = dbscale("run", "tpcb", "--target", tpcb_url, "--clients", "4", "-T", "2s",
                   "--ray", ray_cluster, "--workers", "2", "--out", str(out))  # fmt: skip
    done.assert_ok()
    assert f"(Ray at {ray_cluster})" in done.err
    (record,) = read_runs(out / "runs.jsonl")
    _check_exact_merge(record, 2)
    nodes = {w["node_id"] for w in record["workers"]}
    assert len(nodes) == 2 and None not in nodes  # STRICT_SPREAD: a node each


def test_three_ray_workers_do_not_fit_two_nodes_one_each(
    ray_cluster: str, tpcb_url: str, tmp_path: Path
) -> None:
    began = time.monotonic()
    out = str(tmp_path / "r")
    done = dbscale("run", "tpcb", "--target", tpcb_url, "--clients", "4", "-T", "1s",
                   "--ray", ray_cluster, "--workers", "3", "--out", out)  # fmt: skip
    done.assert_user_error()
    assert (
        "Ray cannot place 3 node(s) of 1 worker(s) with a CPU each: 2 of the cluster's" in done.err
    )
    # Refused from the cluster's nodes, not after the placement's 120 s wait.
    assert time.monotonic() - began < 60


def test_a_killed_ray_worker_fails_the_run(ray_cluster: str, tpcb_url: str, tmp_path: Path) -> None:
    out = tmp_path / "results"
    args = ["tpcb-select-only", "--target", tpcb_url, "--clients", "4", "-T", "5s",
            "--ray", ray_cluster, "--workers", "2", "--out", str(out)]  # fmt: skip
    code, err, victim = _start_and_kill_one(args, 2.0, 2)
    _check_lost_run(out, code, err, victim, 2)
    assert json.loads((out / "summary.json").read_text())["runs"][0]["status"] == "failed"


SPLIT_PLAN = """
targets: [{{name: db, url: "{url}"}}]
workloads:
  - {{name: tpcc, params: {{warehouses: 3, wait: false}}}}
  - {{name: tpcb, params: {{scale: 2}}}}
  - {{name: oltp_read_only, params: {{tables: 3, table_size: 2000}}}}
load: {{clients: 2, duration: 1s}}
repeat: 1
warmup_runs: 0
prepare: {{load: fresh}}
scale_out: {{workers: 2}}
"""


def test_a_load_split_over_workers_is_whole(live: PgTestServer, tmp_path: Path) -> None:
    """TPC-C by warehouses, TPC-B by account ranges, sysbench by tables: every row once, the
    keys built, and TPC-C's consistency conditions hold on the result."""
    name = "dbscale_scaleout_split"
    url = live.fresh_database(name)
    plan = tmp_path / "plan.yaml"
    plan.write_text(SPLIT_PLAN.format(url=url))
    done = dbscale("run", str(plan), "--out", str(tmp_path / "results"))
    done.assert_ok()
    for workload, what in (("tpcc", "units"), ("tpcb", "generate data"), ("sysbench", "tables")):
        assert "worker 2 on " in done.err and what in done.err, workload
    assert "load part 2 of 2" in done.err and "generate data, part 2 of 2" in done.err
    checked = dbscale("check", "tpcc", "--target", url)
    checked.assert_ok()
    assert "all 13 conditions hold (3 warehouses" in checked.text
    counts = live.psql(
        "select (select count(*) from pgbench_accounts), (select count(distinct aid) from "
        "pgbench_accounts), (select count(*) from pgbench_branches), (select count(*) from "
        "sbtest1) + (select count(*) from sbtest2) + (select count(*) from sbtest3), (select "
        "count(*) from pg_index where indrelid = 'pgbench_accounts'::regclass)", name,
    )  # fmt: skip
    assert counts == "200000|200000|2|6000|1"


def test_without_ray_installed_ray_says_how_to_install_it(tpcb_url: str, tmp_path: Path) -> None:
    fake = tmp_path / "no-ray" / "ray"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('No module named ray')\n")
    with socket.socket() as listener:  # something answers at the address
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        path = f"{fake.parent}{os.pathsep}{REPO / 'python'}"
        done = dbscale("run", "tpcb", "--target", tpcb_url, "-c", "2", "--ray", address,
                       "--workers", "2", "--out", str(tmp_path / "r"),
                       env={"PYTHONPATH": path})  # fmt: skip
    done.assert_user_error()
    assert "error: --ray needs Ray, which is not installed" in done.err
    assert "hint: pip install 'dbscale[ray]'" in done.err
