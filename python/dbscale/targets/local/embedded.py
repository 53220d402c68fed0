"""The default target: a private PostgreSQL under a cache directory, initialized once and reused
by every invocation, started for one command and stopped after it (unless it was already running,
e.g. for a concurrent dbscale).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from dbscale.targets.local.postgres import LocalPostgres

ROOT_FALLBACK_DIR = Path("/var/tmp/dbscale-embedded")


def reachable_by_others(path: Path) -> bool:
    """Whether every existing ancestor of `path` lets other users through (o+x); PostgreSQL runs
    as another OS user when we are root, and must reach its directory."""
    for ancestor in [path, *path.parents]:
        if not ancestor.exists():
            continue
        if not ancestor.stat().st_mode & stat.S_IXOTH:
            return False
    return True


HOME_VARIABLE = "DBSCALE_HOME"  # where dbscale keeps its private servers, when set


def dbscale_home() -> Path | None:
    """`$DBSCALE_HOME` (e.g. to keep one user's servers apart from another's when both are
    root), or None."""
    value = os.environ.get(HOME_VARIABLE, "").strip()
    return Path(value).expanduser().absolute() if value else None


def default_base_dir(home: Path) -> Path:
    """`$DBSCALE_HOME/embedded`; else `~/.cache/dbscale/embedded`, or /var/tmp/dbscale-embedded
    when we are root and the `postgres` OS user cannot reach root's home."""
    chosen = dbscale_home()
    if chosen is not None:
        return chosen / "embedded"
    preferred = home / ".cache" / "dbscale" / "embedded"
    if os.geteuid() == 0 and not reachable_by_others(preferred):
        return ROOT_FALLBACK_DIR
    return preferred


def embedded_server(base_dir: Path | None = None) -> LocalPostgres:
    """The embedded server object (not started)."""
    return LocalPostgres(base_dir or default_base_dir(Path.home()))


@contextmanager
def running_embedded(base_dir: Path | None = None) -> Iterator[LocalPostgres]:
    """The embedded server, running for the duration of the block."""
    with embedded_server(base_dir) as server:
        yield server
