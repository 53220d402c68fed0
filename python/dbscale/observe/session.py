"""The observer's one connection to the target (`_core.Session`): what the server is, where its
processes are, its statistics and its sessions' waits. Every query is counted, because each one is
also a transaction the server's own counters see.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from typing import Any

from dbscale.core import Session
from dbscale.core.config import RunConfig
from dbscale.modes import Dialect
from dbscale.observe.deadlines import OBSERVER_SESSION_TIMEOUT_S
from dbscale.observe.server_stats import (
    MYSQL_PS_ENABLED_SQL,
    MYSQL_PS_READABLE_SQL,
    MYSQL_PS_WAITS_SQL,
    Snapshot,
    mysql_status_sql,
    parse_mysql_status,
    parse_pg_stats,
    parse_ps_waits,
    pg_stats_sql,
)
from dbscale.observe.waits import waits_sql

PG_SETTINGS = (
    "shared_buffers", "max_connections", "synchronous_commit", "fsync", "full_page_writes",
    "wal_level", "max_wal_size", "checkpoint_timeout", "huge_pages", "work_mem", "jit",
    "track_io_timing",
)  # fmt: skip
MYSQL_SETTINGS = (
    "innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin",
    "max_connections", "performance_schema", "innodb_log_file_size", "transaction_isolation",
    "tx_isolation", "version_comment", "thread_handling",
)  # fmt: skip


@dataclass
class ServerIdentity:
    dialect: Dialect
    version: str | None = None
    version_num: int = 0
    session_pid: int | None = None  # PostgreSQL: the observer's own backend
    settings: dict[str, str] = field(default_factory=dict)
    performance_schema: bool = False
    performance_schema_denied: bool = False  # on, but the user may not read it


class ObserverSession:
    """Wraps one native Session; `queries` counts what we sent."""

    def __init__(self, config: RunConfig, dialect: Dialect) -> None:
        self._session = Session(config, OBSERVER_SESSION_TIMEOUT_S)
        self.dialect = dialect
        self.queries = 0
        # The sampling thread and the runner (statement snapshots) share it, one query at a time.
        self._lock = threading.Lock()
        self.identity = self._identify()

    def rows(self, sql: str) -> list[list[Any]]:
        with self._lock:
            self.queries += 1
            return list(self._session.query(sql))

    def _identify(self) -> ServerIdentity:
        if self.dialect is Dialect.MYSQL:
            [[version, comment]] = self.rows("SELECT @@version, @@version_comment")
            names = ", ".join(f"'{n}'" for n in MYSQL_SETTINGS)
            settings = {
                str(k).lower(): str(v)
                for k, v in self.rows(f"SHOW GLOBAL VARIABLES WHERE Variable_name IN ({names})")
            }
            enabled = self.rows(MYSQL_PS_ENABLED_SQL)
            on = bool(enabled) and str(enabled[0][0]) in ("1", "ON")
            denied = False
            if on:
                try:
                    self.rows(MYSQL_PS_READABLE_SQL)
                except Exception:  # no SELECT on performance_schema: its figures are left out
                    denied = True
            return ServerIdentity(
                Dialect.MYSQL,
                f"{version} ({comment})" if comment else str(version),
                session_pid=None,
                settings=settings,
                performance_schema=on and not denied,
                performance_schema_denied=denied,
            )
        [[version, num, pid]] = self.rows(
            "SELECT current_setting('server_version'), current_setting('server_version_num'), "
            "pg_backend_pid()"
        )
        names = ", ".join(f"'{n}'" for n in PG_SETTINGS)
        settings = {
            str(name): str(value)
            for name, value in self.rows(
                f"SELECT name, current_setting(name) FROM pg_settings WHERE name IN ({names})"
            )
        }
        return ServerIdentity(Dialect.POSTGRESQL, str(version), int(num), int(pid), settings)

    def stats(self) -> Snapshot:
        if self.dialect is Dialect.MYSQL:
            return parse_mysql_status(self.rows(mysql_status_sql()))
        [[text]] = self.rows(pg_stats_sql(self.identity.version_num))
        return parse_pg_stats(str(text))

    def waits(self) -> list[list[Any]]:
        return self.rows(waits_sql(self.dialect))

    def ps_waits(self) -> dict[str, tuple[int, float]] | None:
        if self.dialect is not Dialect.MYSQL or not self.identity.performance_schema:
            return None
        return parse_ps_waits(self.rows(MYSQL_PS_WAITS_SQL))

    def close(self) -> None:
        # Closing a broken connection has nothing left to report.
        with contextlib.suppress(Exception):
            self._session.close()


def one_line(exc: BaseException) -> str:
    """A query's or a connection's error as one line: the core's message (its errors carry
    (kind, message, hint)), whitespace folded."""
    args: tuple[object, ...] = tuple(getattr(exc, "args", ()))
    text = str(args[1]) if len(args) >= 2 else str(exc)
    return " ".join(text.split())
