"""A target's limits against what the study will ask of it, read before its runs (in a dry run
too, for targets reachable by URL): the clients of its largest point against
`max_connections`, and under the prepared protocol on MySQL the statements its clients prepare
against `max_prepared_stmt_count`, and for a server on this machine the data sets against the
free space of its data directory's disk. A limit it would pass is a warning naming the points,
never an error: the user may know better (a pooler in between, a limit raised before the runs).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dbscale.errors import DbscaleError
from dbscale.modes import QueryProtocol
from dbscale.observe.procfs import ProcFs
from dbscale.observe.server_process import find_listener
from dbscale.plan.study import Point, point_load
from dbscale.targets.facts import server_settings
from dbscale.targets.url import dialect_of, endpoint_of

# Connections dbscale itself opens beside the clients: the observer's session, a probe.
OWN_CONNECTIONS = 2
# Statements one sysbench or TPC-C client prepares at most (sysbench's oltp_read_write: 10
# distinct statements per table; TPC-C about 30); a guess on the high side is the point.
STATEMENTS_PER_CLIENT = 32

Settings = Mapping[str, str | None]


def _number(settings: Settings, name: str) -> int | None:
    value = settings.get(name)
    try:
        return int(str(value)) if value is not None else None
    except ValueError:
        return None


def limit_warnings(target: str, points: Sequence[Point], settings: Settings) -> list[str]:
    """What the target's settings say its points will run into."""
    if not points:
        return []
    warnings = []
    biggest = max(points, key=lambda p: p.load.clients)
    limit = _number(settings, "max_connections")
    wanted = biggest.load.clients + OWN_CONNECTIONS
    if limit is not None and wanted > limit and not biggest.target.pooled_url:
        over = [p.key for p in points if p.load.clients + OWN_CONNECTIONS > limit]
        warnings.append(
            f"target {target}: {len(over)} point(s) ({', '.join(over[:3])}"
            f"{' ...' if len(over) > 3 else ''}) need up to {wanted} connections, over its "
            f"max_connections ({limit}): those runs would fail (raise max_connections, or "
            "pool the connections)"
        )
    statements = _number(settings, "max_prepared_stmt_count")
    prepared = [p for p in points if p.load.protocol == QueryProtocol.PREPARED]
    if statements is not None and prepared:
        most = max(p.load.clients for p in prepared) * STATEMENTS_PER_CLIENT
        if most > statements:
            warnings.append(
                f"target {target}: prepared statements of up to {most} (clients x "
                f"{STATEMENTS_PER_CLIENT}) may pass its max_prepared_stmt_count ({statements})"
            )
    return warnings


# Room beside the data a load needs: write-ahead log, index builds, the tables' growth in a run.
DISK_MARGIN = 1.3


def data_bytes(points: Sequence[Point]) -> float:
    """The most the points' data sets take at once: a workload family's tables replace each
    other (a new scale reloads the same tables), families sit side by side."""
    largest: dict[str, float] = {}
    for point in points:
        estimate = point_load(point)
        largest[estimate.family] = max(largest.get(estimate.family, 0.0), estimate.bytes)
    return sum(largest.values())


def data_directory(url: str) -> Path | None:
    """The data directory of a server on this machine: its process's working directory
    (PostgreSQL's and MariaDB's both run in theirs); None when it cannot be read."""
    try:
        pid = find_listener(ProcFs(), endpoint_of(url))
        return Path(f"/proc/{pid}/cwd").readlink() if pid is not None else None
    except (OSError, ValueError):
        return None


def disk_warning(target: str, points: Sequence[Point], directory: Path | None) -> str | None:
    """The data sets against the free space of the data directory's disk, when it is known."""
    if directory is None or not points:
        return None
    try:
        stat = os.statvfs(directory)
    except OSError:
        return None
    free = stat.f_bavail * stat.f_frsize
    needed = data_bytes(points) * DISK_MARGIN
    if needed <= free:
        return None
    return (
        f"target {target}: its data sets need up to {needed / 1e9:,.1f} GB (with room for the "
        f"log and index builds) and the disk of {directory} has {free / 1e9:,.1f} GB free: a "
        "load would fill it (free space, or smaller data sets)"
    )


def read_and_warn(
    url: str,
    target: str,
    points: Sequence[Point],
    note: Callable[[str], None],
    within_s: float | None = None,
    loads: bool = True,
) -> None:
    """Reads the target's settings and notes each warning; a target it cannot read (within
    `within_s`, when given: a dry run does not wait out a connect timeout) is noted once, and
    the study goes on (the runs will say what is wrong). `loads`: the study may load data
    (its disk is checked)."""
    found: list[Settings | DbscaleError] = []

    def read() -> None:
        try:
            found.append(server_settings(url, dialect_of(url)))
        except DbscaleError as exc:
            found.append(exc)

    if within_s is None:
        read()
    else:  # in a thread it need not wait for: the reading ends when its connect times out
        reader = threading.Thread(target=read, name="dbscale-target-limits", daemon=True)
        reader.start()
        reader.join(within_s)
    if not found:
        note(f"note: target {target}: its limits could not be read in {within_s:g} s")
        return
    settings = found[0]
    if isinstance(settings, DbscaleError):
        note(f"note: target {target}: its limits could not be read ({settings.message})")
        return
    warnings = limit_warnings(target, points, settings)
    disk = disk_warning(target, points, data_directory(url)) if loads else None
    for warning in warnings + ([disk] if disk else []):
        note(f"warning: {warning}")
