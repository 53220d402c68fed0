"""Real clusters for the tests: a 3-node MariaDB Galera cluster and PostgreSQL primaries with 2
synchronous standbys, on loopback in directories of their own under /var/tmp (short enough for
their sockets). A cluster that cannot start fails the test in CI (skips elsewhere)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dbscale.errors import DbscaleError
from dbscale.targets.cluster import ClusterShape, LocalCluster, make_cluster
from tests.conftest import skip_or_fail

CLUSTER_ROOT = Path("/var/tmp")


def cluster_dir(name: str) -> Path:
    return CLUSTER_ROOT / f"dbscale-test-{name}-{os.getpid()}"


@contextmanager
def running_cluster(engine: str, name: str, nodes: int = 3) -> Iterator[LocalCluster]:
    """A fresh cluster of `engine`, stopped and removed after the block."""
    base = cluster_dir(name)
    cluster = make_cluster(engine, base, ClusterShape(nodes=nodes), name=name)
    try:
        cluster.start()
    except DbscaleError as exc:
        skip_or_fail(f"the {engine} cluster did not start: {exc.message}")
    try:
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(base, ignore_errors=True)


def cluster_plan(name: str, engine: str, body: str, nodes: int = 3) -> str:
    """A plan whose one target is a local cluster in a fresh test directory."""
    return (
        f"name: {name}\n"
        "targets:\n"
        f"  - name: {name}\n"
        "    url: local-cluster\n"
        f"    nodes: {nodes}\n"
        f"    local: {{engine: {engine}, dir: {cluster_dir(name)}}}\n"
        f"{body}"
    )


@pytest.fixture(scope="session")
def galera() -> Iterator[LocalCluster]:
    """A 3-node Galera cluster the session's tests share (none of them harms a node)."""
    with running_cluster("mariadb-galera", "galera") as cluster:
        yield cluster


def node_urls(cluster: LocalCluster) -> str:
    """The `--target` of every node: full URLs joined by commas."""
    return ",".join(cluster.urls)
