"""How a cluster target's clients use its nodes when the plan does not say: a PostgreSQL
cluster has one writer (`primary`), so clients go where writes go; a MySQL-protocol cluster of
several nodes is taken for multi-master (Galera), where TPC-C pins each warehouse's terminals to
one node (`affinity`: the Cloud Report's partitioned load; hot rows written through several
nodes conflict at commit) and other workloads spread round-robin.
"""

from __future__ import annotations

from dbscale.modes import Routing
from dbscale.targets.spec import TargetEntry

TPCC_NAMES = ("tpcc", "tpc-c")


def default_routing(target: TargetEntry, workload: str) -> Routing | None:
    """The routing a point uses: the target's, else one that keeps the workload valid on the
    cluster (None for a single node: the URL's own rules)."""
    if target.routing is not None:
        return target.routing
    if target.node_count <= 1:
        return None
    if cluster_dialect(target) == "postgresql":
        return Routing.PRIMARY
    if workload.lower() in TPCC_NAMES:
        return Routing.AFFINITY
    return Routing.ROUND_ROBIN


def cluster_dialect(target: TargetEntry) -> str:
    """`postgresql` or `mysql`, from a local cluster's engine or the first URL's scheme."""
    if target.local is not None:
        return "mysql" if target.local.engine.startswith("mariadb") else "postgresql"
    scheme = target.url.split("://", 1)[0].lower() if "://" in target.url else ""
    return "mysql" if scheme in ("mysql", "mariadb") else "postgresql"


def is_multi_master(target: TargetEntry) -> bool:
    """Every node takes writes (a Galera cluster, or any MySQL-protocol cluster of several)."""
    return target.node_count > 1 and cluster_dialect(target) == "mysql"
