"""What targets/<name>.json keeps of a private cluster: its engine, directory, CPU confinement
and each node as the start-up check found it."""

from __future__ import annotations

from dataclasses import asdict

from pydantic import BaseModel, ConfigDict

from dbscale.redaction import redact_url
from dbscale.targets.cluster.base import LocalCluster


class NodeRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    url: str
    up: bool
    role: str
    detail: str = ""


class ClusterRecord(BaseModel):
    model_config = ConfigDict(extra="allow")

    engine: str
    dir: str
    nodes: list[NodeRecord]
    confinement: str | None = None


def node_records(cluster: LocalCluster) -> list[NodeRecord]:
    """Each node's state now, its URL without a password."""
    return [
        NodeRecord(**{**asdict(state), "url": redact_url(state.url)}) for state in cluster.states()
    ]
