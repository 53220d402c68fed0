"""Clusters of real database nodes on loopback (issue 31): TPC-C over a 3-node Galera cluster
with round-robin and with warehouse affinity (consistency conditions hold after both), sysbench
whose point selects find their rows, a Galera node killed mid-run, a PostgreSQL primary killed
and a standby promoted, and a synchronous-replication stall ended by the client's deadline."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dbscale.core import Run
from dbscale.core.config import RunConfig, TargetConfig, WorkloadConfig
from dbscale.modes import Routing
from dbscale.targets.cluster import ClusterShape, LocalCluster, make_cluster
from dbscale.targets.local.mariadb import LocalMariaDB
from dbscale.targets.local.postgres import LocalPostgres
from tests.integration.clusters import (
    cluster_dir,
    cluster_plan,
    galera,
    node_urls,
    running_cluster,
)
from tests.integration.conftest import dbscale, read_runs

__all__ = ["galera"]  # the session fixture, shared by the tests here


def _only_record(out: Path) -> dict[str, Any]:
    [record] = [r for r in read_runs(out / "runs.jsonl") if not r.get("warmup")]
    return record


@pytest.fixture(scope="module")
def galera_tpcc(galera: LocalCluster) -> str:
    """TPC-C with 2 warehouses loaded through the cluster's first node."""
    target = node_urls(galera)
    dbscale("prepare", "tpcc", "--target", target, "--set", "warehouses=2").assert_ok()
    return target


@pytest.mark.parametrize("routing", [Routing.ROUND_ROBIN, Routing.AFFINITY])
def test_tpcc_over_three_galera_nodes_keeps_its_data_consistent(
    galera_tpcc: str, routing: Routing, tmp_path: Path
) -> None:
    out = tmp_path / routing.value
    done = dbscale(
        "run", "tpcc", "--target", galera_tpcc, "--routing", routing.value, "--set", "wait=false",
        "-c", "6", "-T", "4s", "--warmup", "0", "--check", "--out", str(out),
    )  # fmt: skip
    done.assert_ok()
    record = _only_record(out)
    assert record["routing"] == routing.value
    assert record["consistency"]["ok"] is True, record["consistency"]
    nodes = record["nodes"]
    assert len(nodes) == 3, nodes
    assert sum(n["connections"] for n in nodes) == 6
    assert sum(n["transactions"] for n in nodes) == record["transactions"]
    if routing is Routing.AFFINITY:
        # Terminals of warehouse w are on node w mod 3: warehouses 1 and 2 on nodes 1 and 2.
        assert [n["connections"] for n in nodes] == [3, 3, 0]
        assert nodes[0]["transactions"] > 0 and nodes[1]["transactions"] > 0
        assert nodes[2]["transactions"] == 0
    else:
        assert [n["connections"] for n in nodes] == [2, 2, 2]
        assert all(n["transactions"] > 0 for n in nodes), nodes
    cluster = record["observe"]["cluster"]
    assert cluster["engine"] == "galera" and len(cluster["nodes"]) == 3
    assert cluster["commits"] > 0
    assert all(n["role"] == "synced" for n in cluster["nodes"])
    # every interval splits its transactions over the nodes
    for interval in record["intervals"]:
        if interval.get("by_node"):
            assert sum(interval["by_node"]) == interval["transactions"]


def test_sysbench_point_selects_find_every_row_on_galera(
    galera: LocalCluster, tmp_path: Path
) -> None:
    """Galera steps AUTO_INCREMENT by its node count; the load's ids stay dense."""
    target = node_urls(galera)
    dbscale(
        "prepare", "oltp_point_select", "--target", target, "--set", "tables=1",
        "--set", "table_size=300",
    ).assert_ok()  # fmt: skip
    other = galera.nodes[1]
    assert isinstance(other, LocalMariaDB)  # read through another node than the load's
    rows = other.sql("SELECT COUNT(*), MIN(id), MAX(id) FROM dbscale_test.sbtest1")
    assert rows.split() == ["300", "1", "300"], rows
    done = dbscale(
        "run", "oltp_point_select", "--target", target, "--set", "tables=1",
        "--set", "table_size=300", "-c", "3", "-T", "3s", "--warmup", "0",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    done.assert_ok()
    result = _only_record(tmp_path / "out")
    assert result["transactions"] > 100
    assert result["queries"]["read"] == result["transactions"], result["queries"]


def _faulted_run(
    tmp_path: Path, name: str, engine: str, body: str, nodes: int = 3
) -> tuple[str, dict[str, Any]]:
    """One measured run of a plan on a fresh local cluster with fault steps: the console's text
    (the cluster made whole again after the run) and the record."""
    plan = tmp_path / "plan.yaml"
    plan.write_text(cluster_plan(name, engine, body + "repeat: 1\nwarmup_runs: 0\n", nodes))
    out = tmp_path / "out"
    try:
        done = dbscale("run", str(plan), "--out", str(out), timeout_s=400)
    finally:
        shutil.rmtree(cluster_dir(name), ignore_errors=True)
    done.assert_ok()
    assert "cluster whole again" in done.text
    return done.text, _only_record(out)


def test_a_galera_node_killed_mid_run_moves_its_clients_and_is_measured(tmp_path: Path) -> None:
    _, record = _faulted_run(
        tmp_path,
        "galera-kill",
        "mariadb-galera",
        "workload: {name: oltp_read_write, params: {tables: 2, table_size: 1000}}\n"
        "load: {clients: 3, duration: 6s}\n"
        "faults:\n  - {at: 2s, kill: n2}\n  - {at: 4s, start: n2}\n",
    )
    assert record["routing"] == "round-robin"
    lost = record["nodes"][1]
    assert lost["lost"] >= 1 and lost["failovers"] >= 1, lost
    assert record["failovers"] >= 1
    kill, start = record["fault_windows"]
    assert (kill["action"], kill["node"], start["action"]) == ("kill", "n2", "start")
    assert kill["error"] is None and 1.9 <= kill["at_s"] < 3.0
    assert kill["failovers"] >= 1  # n2's clients moved while the step's window lasted
    # The node's own window opens at the kill and stays open at least until it restarted.
    node = kill["nodes"][1]
    assert node["last_success_s"] is not None and node["last_success_s"] <= kill["at_s"] + 0.5
    # Nothing lost: every transaction is counted once, on some node.
    assert sum(n["transactions"] for n in record["nodes"]) == record["transactions"]
    assert record["transactions"] > 0
    assert "faults: kill n2 at" in record["verdict"]["message"]


def test_a_postgres_primary_killed_and_a_standby_promoted(tmp_path: Path) -> None:
    text, record = _faulted_run(
        tmp_path,
        "pg-failover",
        "postgresql-sync",
        "workload: {name: tpcb, params: {scale: 1}}\n"
        "load: {clients: 3, duration: 6s, transaction_timeout: 3s}\n"
        "faults:\n  - {at: 2s, kill: primary}\n  - {at: 3s, promote: standby}\n",
    )
    assert "n2 primary" in text  # the old primary rebuilt as a standby after the run
    assert record["routing"] == "primary"
    kill, promote = record["fault_windows"]
    assert (kill["node"], promote["node"]) == ("n1", "n2")
    # Clients move once there is a writer again: a second is its step's when the step began first.
    assert kill["failovers"] + promote["failovers"] >= 1
    window = kill["overall"]
    # Writes stop at the kill and resume on the promoted standby, not before its promotion.
    assert window["seconds"] is not None and 0.5 < window["seconds"] < 3.0, window
    assert window["first_success_s"] >= promote["at_s"]
    old, new, _ = record["nodes"]
    assert old["failovers"] >= 1 and old["lost"] >= 1, old
    assert new["availability"]["first_success_s"] >= promote["at_s"]
    assert new["transactions"] > 0
    # n3 followed n2, and n2 waited for it at each commit, as n1 did: the same durability.
    assert [f.get("weakened") for f in record["faults"]] == [None, None]
    # Roles kept per run: after the promotion the standby is another node (issue 42).
    roles = {r["node"]: (r["before"], r["after"]) for r in record["node_roles"]}
    assert roles["n1"][0] == "primary" and roles["n1"][1] != "primary", roles
    assert roles["n2"] == ("standby", "primary"), roles
    # The console's end answers the study's question: what the failover cost (issue 42).
    assert re.search(r"fault step kill primary: [\d.]+ s without a success, ", text), text


def test_a_promotion_with_no_standby_left_is_flagged(tmp_path: Path) -> None:
    """Two nodes: the promoted standby has no standby to wait for, so its commits are
    asynchronous; the step says so and the run is flagged (issue 40)."""
    text, record = _faulted_run(
        tmp_path, "pg-alone", "postgresql-sync",
        "workload: {name: tpcb, params: {scale: 1}}\n"
        "load: {clients: 2, duration: 4s, transaction_timeout: 3s}\n"
        "faults:\n  - {at: 1s, kill: primary}\n  - {at: 2s, promote: standby}\n",
        nodes=2,
    )  # fmt: skip
    weakened = record["faults"][1]["weakened"]
    assert weakened.startswith("n2 commits asynchronously after its promotion"), weakened
    assert "commits asynchronously" in record["verdict"]["message"] and weakened in text
    [point] = json.loads((tmp_path / "out" / "summary.json").read_text())["points"]
    assert any("committed asynchronously after a promotion" in f for f in point["flags"])


@pytest.fixture
def pg_cluster() -> Iterator[LocalCluster]:
    with running_cluster("postgresql-sync", "pg-stall") as cluster:
        yield cluster


def test_a_synchronous_replication_stall_is_ended_by_the_client_deadline(
    pg_cluster: LocalCluster,
) -> None:
    """Both standbys gone: commits wait for them whatever statement_timeout says. The client's
    deadline fails each transaction and cancels its wait on the server."""
    primary = pg_cluster.nodes[0]
    assert isinstance(primary, LocalPostgres)
    dbscale("prepare", "tpcb", "--target", primary.url, "--set", "scale=1").assert_ok()
    pg_cluster.stop_node(1)
    pg_cluster.stop_node(2)
    config = RunConfig(
        target=TargetConfig(url=primary.url),
        workload=WorkloadConfig(name="tpcb", params={"vacuum": False}),
        clients=2,
        duration_s=3.0,
        transaction_timeout_s=0.5,
    )
    run = Run(config)
    result = run.result()
    timeouts = result.errors.by_class.get("client_timeout", 0)
    assert timeouts >= 2 and result.transactions == 0, result.errors
    assert "transaction deadline" in result.errors.messages["client_timeout"]
    time.sleep(0.5)
    waiting = primary.psql("SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'SyncRep'")
    assert waiting == "0", "the cancel request ended the backends' wait for the standbys"


def test_a_killed_postgres_node_starts_again_at_once(pg_cluster: LocalCluster) -> None:
    """A SIGKILLed server leaves its lock files, naming a postmaster its parent may not have
    reaped yet; the cluster removes them, so `start` right after `kill` works."""
    began = time.monotonic()
    pg_cluster.kill_node(1)
    assert pg_cluster.nodes[1].running_pid() is None
    pg_cluster.restart_node(1)
    states = pg_cluster.wait_formed(timeout_s=30)
    assert [s.role for s in states] == ["primary", "standby", "standby"]
    assert time.monotonic() - began < 20


def test_a_standby_the_primary_went_on_without_is_rebuilt_at_start() -> None:
    """A reused directory whose standby missed more WAL than the primary keeps (a study ran the
    primary alone first): at the next start that standby is rebuilt, and the cluster forms
    (issue 40; it used to fail after 120 s, every time)."""
    name = "pg-stale"
    base = cluster_dir(name)
    small = {"max_wal_size": "32MB", "min_wal_size": "32MB", "wal_keep_size": "0"}
    shape = ClusterShape(nodes=2, settings=small)
    first = make_cluster("postgresql-sync", base, shape, name=name)
    try:
        first.start()
        primary = first.nodes[0]
        assert isinstance(primary, LocalPostgres)
        first.stop_node(1)
        primary.psql("ALTER SYSTEM SET synchronous_standby_names = ''")
        primary.psql("SELECT pg_reload_conf()")
        for _ in range(6):  # about 6 x 20 MB of WAL, each stretch checkpointed and switched
            primary.psql("CREATE TABLE IF NOT EXISTS filler (v text)")
            primary.psql(
                "INSERT INTO filler SELECT repeat('x', 200) FROM generate_series(1, 80000)"
            )
            primary.psql("CHECKPOINT")
            primary.psql("SELECT pg_switch_wal()")
        first.stop()
        began = time.monotonic()
        again = make_cluster("postgresql-sync", base, shape, name=name)
        again.start()
        try:
            assert "rebuilt n2" in again.rebuilt_note
            assert [s.role for s in again.states()] == ["primary", "standby"]
            assert time.monotonic() - began < 110
        finally:
            again.stop()
    finally:
        first.stop()
        shutil.rmtree(base, ignore_errors=True)
