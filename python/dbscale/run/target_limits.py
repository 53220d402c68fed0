"""A target's limits against what the study will ask of it, read before its runs (in a dry run
too, for targets reachable by URL): the clients of its largest point against
`max_connections`, and under the prepared protocol on MySQL the statements its clients prepare
against `max_prepared_stmt_count`. A limit it would pass is a warning naming the points, never
an error: the user may know better (a pooler in between, a limit raised before the runs).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence

from dbscale.errors import DbscaleError
from dbscale.modes import QueryProtocol
from dbscale.plan.study import Point
from dbscale.targets.facts import server_settings

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


def dialect_of(url: str) -> str:
    return "mysql" if url.lower().startswith(("mysql://", "mariadb://")) else "postgres"


def read_and_warn(
    url: str,
    target: str,
    points: Sequence[Point],
    note: Callable[[str], None],
    within_s: float | None = None,
) -> None:
    """Reads the target's settings and notes each warning; a target it cannot read (within
    `within_s`, when given: a dry run does not wait out a connect timeout) is noted once, and
    the study goes on (the runs will say what is wrong)."""
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
    for warning in limit_warnings(target, points, settings):
        note(f"warning: {warning}")
