"""Private clusters dbscale starts (`url: local-cluster`): a MariaDB Galera cluster or a
PostgreSQL primary with synchronous standbys, each node on loopback in a directory of its own.
"""

from __future__ import annotations

from pathlib import Path

from dbscale.targets.cluster.base import ClusterShape, LocalCluster, NodeState
from dbscale.targets.cluster.galera import GaleraCluster
from dbscale.targets.cluster.pg_sync import PgSyncCluster

ENGINES: dict[str, type[LocalCluster]] = {
    GaleraCluster.engine: GaleraCluster,
    PgSyncCluster.engine: PgSyncCluster,
}


def make_cluster(engine: str, base_dir: Path, shape: ClusterShape, *, name: str) -> LocalCluster:
    """The cluster of `engine` (a key of `ENGINES`) in `base_dir`, not started yet."""
    return ENGINES[engine](base_dir, shape, name=name)


__all__ = ["ENGINES", "ClusterShape", "LocalCluster", "NodeState", "make_cluster"]
