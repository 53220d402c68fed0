"""What a target's server says about itself, asked once per target: its version and settings
(`SHOW ALL` on PostgreSQL, `SHOW GLOBAL VARIABLES` on MySQL), stored with the instance facts and
prices in `targets/<name>.json` of the results directory, so two studies can be diffed. Also the
wait, after a target's `ready` hook, until the server accepts connections.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from contextlib import closing
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from dbscale import core
from dbscale.core.answers import ProbeAnswer
from dbscale.core.config import RunConfig, TargetConfig, WorkloadConfig, make_run_config
from dbscale.errors import (
    TargetError,
    TargetUnavailableError,
    TargetUnreachableError,
)
from dbscale.files import write_atomic
from dbscale.modes import Dialect, TlsMode
from dbscale.polling import poll_until
from dbscale.targets.cluster.record import ClusterRecord
from dbscale.targets.hooks import HookResult
from dbscale.targets.local.evidence import LocalEvidence, PoolerFacts
from dbscale.targets.spec import TargetInfo

TARGETS_DIR = "targets"
# Settings shown first (and diffed by `dbscale compare`); all of them are stored.
KEY_SETTINGS = {
    Dialect.POSTGRESQL: (
        "server_version", "max_connections", "shared_buffers", "effective_cache_size", "work_mem",
        "maintenance_work_mem", "synchronous_commit", "fsync", "full_page_writes", "wal_level",
        "max_wal_size", "checkpoint_timeout", "random_page_cost", "huge_pages", "jit",
        "max_worker_processes", "ssl",
    ),
    Dialect.MYSQL: (
        "version", "max_connections", "innodb_buffer_pool_size", "innodb_flush_log_at_trx_commit",
        "sync_binlog", "innodb_log_file_size", "innodb_redo_log_capacity", "innodb_io_capacity",
        "innodb_flush_method", "transaction_isolation", "binlog_format", "thread_handling",
    ),
}  # fmt: skip
_SHOW = {Dialect.POSTGRESQL: "SHOW ALL", Dialect.MYSQL: "SHOW GLOBAL VARIABLES"}
# Per-instance addresses and paths: they differ between any two starts, so diffs skip them.
NOT_COMPARED = frozenset({
    "port", "unix_socket_directories", "data_directory", "config_file", "hba_file", "ident_file",
    "external_pid_file", "ssl_cert_file", "ssl_key_file", "ssl_ca_file", "socket", "datadir",
    "pid_file", "hostname", "server_uuid", "log_error", "general_log_file", "slow_query_log_file",
})  # fmt: skip


class TargetNotReadyError(TargetError):
    """The target did not accept connections in time after its `ready` hook."""

    default_hint = "raise hooks.connect_timeout, or check the target's `ready` hook and address"


def probe_config(url: str, tls: TlsMode | None = None) -> RunConfig:
    """What a probe or an admin session needs: only the target matters."""
    return make_run_config(
        target=TargetConfig(url=url, tls=tls), workload=WorkloadConfig(name="probe")
    )


def wait_accepting(
    url: str,
    timeout_s: float,
    *,
    tls: TlsMode | None = None,
    target: str = "target",
    probe: Callable[[RunConfig], ProbeAnswer] = core.probe,
) -> ProbeAnswer:
    """Probes until the server accepts a connection; its probe answer. Only "not there yet"
    errors are retried; a wrong password is not."""
    config = probe_config(url, tls)
    last = ""

    def answer() -> ProbeAnswer | None:
        nonlocal last
        try:
            return probe(config)
        except (TargetUnreachableError, TargetUnavailableError) as exc:
            if timeout_s <= 0:
                raise
            last = exc.message
            return None

    found = poll_until(answer, timeout_s, 0.2, growth=2.0, max_interval_s=2.0)
    if found is None:
        raise TargetNotReadyError(
            f"target {target} did not accept connections within {timeout_s:g} s: {last}"
        )
    return found


def server_settings(
    url: str, dialect: Dialect, tls: TlsMode | None = None
) -> dict[str, str | None]:
    """Every server setting by name, as the server shows it."""
    sql = _SHOW.get(dialect)
    if sql is None:
        return {}
    with closing(core.Session(probe_config(url, tls))) as session:
        rows = session.query(sql)
    return {str(row[0]): row[1] for row in rows if len(row) >= 2}


def key_settings(dialect: Dialect, settings: Mapping[str, str | None]) -> dict[str, str | None]:
    return {k: settings[k] for k in KEY_SETTINGS.get(dialect, ()) if k in settings}


def target_record_path(results_dir: Path, name: str) -> Path:
    return results_dir / TARGETS_DIR / f"{name}.json"


def write_target_record(results_dir: Path, name: str, record: TargetRecord) -> Path:
    """targets/<name>.json, replaced atomically."""
    path = target_record_path(results_dir, name)
    data = record.model_dump(mode="json", exclude_unset=True)
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")
    return path


class _Tolerant(BaseModel):
    # A record written by another version keeps what this one does not know.
    model_config = ConfigDict(extra="allow", frozen=True)


class ServerRecord(_Tolerant):
    """What the server said about itself when the target was entered."""

    version: str | None = None
    dialect: Dialect | None = None  # older files: "postgres"
    tls: bool | None = None
    key_settings: dict[str, str | None] = Field(default_factory=dict)
    settings: dict[str, str | None] = Field(default_factory=dict)


class TargetRecord(BaseModel):
    """targets/<name>.json: the target's facts and prices, its hooks as they ran, the local
    server's and pooler's evidence, what the server said, and when it was entered and left.
    Built up while the target is in use (so not frozen), written with the fields it has."""

    model_config = ConfigDict(extra="allow")

    name: str = ""
    url: str | None = None
    info: TargetInfo = Field(default_factory=TargetInfo)
    prices: dict[str, JsonValue] | None = None
    entered_at: str | None = None
    hooks: list[HookResult] = Field(default_factory=list)
    local: LocalEvidence | None = None
    pooler: PoolerFacts | None = None
    cluster: ClusterRecord | None = None  # a private cluster: engine, nodes, confinement
    server: ServerRecord = Field(default_factory=ServerRecord)
    error: str | None = None
    left_at: str | None = None


def load_target_records(results_dir: Path) -> dict[str, TargetRecord]:
    """Every targets/<name>.json of a results directory, by target name (one that is not a
    target record is passed over)."""
    records: dict[str, TargetRecord] = {}
    folder = results_dir / TARGETS_DIR
    if not folder.is_dir():
        return records
    for path in sorted(folder.glob("*.json")):
        try:
            record = TargetRecord.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        records[record.name or path.stem] = record
    return records


class TargetDifference(BaseModel):
    """A fact or setting that differs between the same-named targets of two studies."""

    model_config = ConfigDict(frozen=True)

    target: str
    setting: str
    a: JsonValue
    b: JsonValue


def diff_target_records(a: Path, b: Path, limit: int = 40) -> list[TargetDifference]:
    """The server version, instance facts and settings that differ between the targets of the
    same name in two results directories (key settings first, at most `limit` rows)."""
    records_a, records_b = load_target_records(a), load_target_records(b)
    diffs: list[TargetDifference] = []
    for name in [n for n in records_a if n in records_b]:
        server_a, server_b = records_a[name].server, records_b[name].server
        pairs: list[tuple[str, JsonValue, JsonValue]] = [
            ("server version", server_a.version, server_b.version)
        ]
        info_a = records_a[name].info.model_dump(exclude_none=True)
        info_b = records_b[name].info.model_dump(exclude_none=True)
        pairs += [(f"target {k}", info_a.get(k), info_b.get(k)) for k in sorted({*info_a, *info_b})]
        settings_a, settings_b = server_a.settings, server_b.settings
        keys = list(server_a.key_settings)
        keys += sorted(k for k in {*settings_a, *settings_b} if k not in keys)
        pairs += [(k, settings_a.get(k), settings_b.get(k)) for k in keys if k not in NOT_COMPARED]
        diffs += [
            TargetDifference(target=name, setting=k, a=va, b=vb) for k, va, vb in pairs if va != vb
        ]
    return diffs[:limit]
