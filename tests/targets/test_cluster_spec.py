"""Cluster targets in plans: nodes as URLs or entries, a local cluster's count and per-node
vCPUs (node shapes as a sweep), and the routing each point gets by default."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from dbscale.modes import Dialect
from dbscale.targets.sizes import expand_sizes
from dbscale.targets.spec import TargetEntry, target_info
from dbscale.targets.url import node_urls


def test_nodes_as_urls_are_the_target_and_its_more_urls() -> None:
    t = TargetEntry.model_validate(
        {
            "name": "c",
            "nodes": ["mysql://u@a/db", {"url": "mysql://u@b/db", "vcpus": 4}],
            "vcpus": 4,
        }
    )
    assert (t.url, t.more_urls, t.node_count) == ("mysql://u@a/db", ["mysql://u@b/db"], 2)
    assert t.vcpu_count == 8 and t.node_vcpus == 4
    info = target_info(t)
    assert (info.vcpus, info.nodes, info.vcpus_per_node) == (8, 2, 4)
    with pytest.raises(ValidationError, match="not both"):
        TargetEntry.model_validate(
            {"name": "c", "url": "mysql://u@x/db", "nodes": ["mysql://u@a/db"]}
        )


def test_node_shapes_sweep_one_target_per_shape() -> None:
    t = TargetEntry.model_validate({
        "name": "g", "url": "local-cluster", "nodes": [3, 1], "vcpus": [0.5, 1.5],
        "local": {"engine": "mariadb-galera"},
    })  # fmt: skip
    small, large = expand_sizes([t])
    assert (small.name, small.node_count, small.vcpu_count) == ("g-3x0.5vcpu", 3, 1.5)
    assert (large.name, large.node_count, large.vcpu_count) == ("g-1x1.5vcpu", 1, 1.5)
    assert small.group == large.group == "g"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"url": "local-cluster"}, "local-cluster` takes `local.engine"),
        ({"url": "local", "local": {"engine": "mariadb-galera"}}, "need `url: local-cluster`"),
        ({"url": "local", "vcpus": 0.5}, "fractional vcpus"),
        ({"url": "postgresql://u@a/db", "nodes": 3}, "`nodes: N` is for `url: local-cluster`"),
    ],
)
def test_cluster_fields_are_checked(fields: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        TargetEntry.model_validate({"name": "t", **fields})


def test_a_targets_dialect_comes_from_its_local_engine_or_its_url() -> None:
    """The routing default that keeps a workload valid on a cluster is the core's
    (engine/nodes.rs `cluster_routing`); Python sends only a routing the user set."""
    galera = TargetEntry.model_validate({"name": "g", "nodes": ["mysql://a/db", "mysql://b/db"]})
    pg = TargetEntry.model_validate(
        {"name": "p", "url": "local-cluster", "nodes": 2, "local": {"engine": "postgresql-sync"}}
    )
    local_galera = TargetEntry.model_validate(
        {"name": "l", "url": "local-cluster", "nodes": 3, "local": {"engine": "mariadb-galera"}}
    )
    assert galera.dialect is Dialect.MYSQL and local_galera.dialect is Dialect.MYSQL
    assert pg.dialect is Dialect.POSTGRESQL
    assert (
        TargetEntry.model_validate({"name": "e", "url": "embedded"}).dialect is Dialect.POSTGRESQL
    )
    assert galera.routing is None


def test_comma_joined_urls_are_nodes_and_a_libpq_host_list_is_one_url() -> None:
    assert node_urls("mysql://a/db, mysql://b/db") == ["mysql://a/db", "mysql://b/db"]
    assert node_urls("postgresql://a:1,b:2/db") == ["postgresql://a:1,b:2/db"]
