"""Targets: where a benchmark connects. A URL names a server someone else runs; `embedded` (the
default) is a private PostgreSQL that dbscale starts for the command and stops afterwards.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dbscale.redaction import redact_url
from dbscale.targets.cluster import LocalCluster
from dbscale.targets.local.embedded import running_embedded
from dbscale.targets.local.postgres import LocalPostgres
from dbscale.targets.local.server import LocalServer
from dbscale.targets.url import TargetSpec, resolve_target


@dataclass(frozen=True)
class OpenTarget:
    """A target ready for connections: its URL, the private server when it is ours, the URL
    through the private pooler started in front of it (`pooler: pgbouncer`), and for a private
    cluster its other nodes' URLs and the cluster itself (for fault steps)."""

    url: str
    server: LocalServer[Any] | None = None
    pooled_url: str | None = None
    more_urls: tuple[str, ...] = ()
    cluster: LocalCluster | None = None


@contextmanager
def open_target(spec: TargetSpec) -> Iterator[OpenTarget]:
    """Starts the embedded server if `spec` asks for it (and stops it after the block)."""
    if spec.url is not None:
        yield OpenTarget(url=spec.url)
        return
    with running_embedded() as server:
        yield OpenTarget(url=server.url, server=server)


__all__ = [
    "LocalPostgres",
    "OpenTarget",
    "TargetSpec",
    "open_target",
    "redact_url",
    "resolve_target",
]
