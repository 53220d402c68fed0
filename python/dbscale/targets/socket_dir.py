"""Finding the Unix socket of a PostgreSQL server on this machine, for `transport: unix` on a
target given by a TCP URL (socket-vs-tcp against your own server): the server is asked where its
sockets are (`unix_socket_directories`), and the first directory holding `.s.PGSQL.<port>` here
is used. Only loopback URLs qualify: a socket is a file on the server's machine.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

from dbscale import core
from dbscale.core.config import TargetConfig, WorkloadConfig, make_run_config
from dbscale.errors import ConfigError, DbscaleError
from dbscale.targets.url import loopback_postgres


def socket_candidates(setting: str, port: int) -> list[Path]:
    """The directories of `unix_socket_directories` (comma-separated, `@` names are Linux's
    abstract sockets, which have no file) that hold this port's socket file."""
    found = []
    for entry in setting.split(","):
        directory = entry.strip()
        abstract = directory.startswith("@")
        if directory and not abstract and (Path(directory) / f".s.PGSQL.{port}").exists():
            found.append(Path(directory))
    return found


def discover_socket_dir(url: str, target: str) -> str:
    """The socket directory of the server behind `url`; `ConfigError` saying how to give it."""
    hint = (
        f"give the server's socket directory: --set targets.{target}.socket_dir=DIR "
        "(PostgreSQL: SHOW unix_socket_directories), or a socket_url"
    )
    where = loopback_postgres(url)
    if where is None:
        raise ConfigError(
            f"target {target}: transport=unix needs the server's socket, and its URL is not a "
            "PostgreSQL server on this machine", hint,
        )  # fmt: skip
    config = make_run_config(
        target=TargetConfig(url=url), workload=WorkloadConfig(name="tpcb", params={})
    )
    try:
        with closing(core.Session(config)) as session:
            rows = session.query("SHOW unix_socket_directories")
    except DbscaleError as exc:
        raise ConfigError(
            f"target {target}: cannot ask for its socket: {exc.message}", hint
        ) from None
    setting = str(rows[0][0]) if rows and rows[0] and rows[0][0] is not None else ""
    found = socket_candidates(setting, where[1])
    if not found:
        raise ConfigError(
            f"target {target}: no socket file .s.PGSQL.{where[1]} in its unix_socket_directories "
            f"({setting or 'none'}) on this machine", hint,
        )  # fmt: skip
    return str(found[0])
