"""Local targets: a PostgreSQL (a `LocalPostgres`) or MariaDB (a `LocalMariaDB`) server that
dbscale starts in a private directory, shaped like an instance size: confined to `vcpus` CPUs
and a memory budget (confinement.py), its memory settings sized from that budget. The sizes of
one sweep share the directory, so each size restarts the same server, with the same data, under
a new confinement. The embedded target is the simplest case: no limits, started only if it is
not already running.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dbscale.errors import LocalServerError
from dbscale.targets.local.confinement import (
    MemoryPlacement,
    choose_cpus,
    confine_tree,
    format_cpu_list,
    make_memory_cgroup,
    memory_cgroup_of,
    process_tree,
    thread_affinity,
)
from dbscale.targets.local.embedded import ROOT_FALLBACK_DIR, default_base_dir
from dbscale.targets.local.evidence import LocalEvidence, MemoryLimit
from dbscale.targets.local.mariadb import LocalMariaDB
from dbscale.targets.local.postgres import DEFAULT_SETTINGS, LocalPostgres
from dbscale.targets.local.server import LocalServer, SettingValue

MIB = 1024 * 1024


@dataclass(frozen=True)
class LocalShape:
    """The size of a local server: CPUs, memory budget and extra postgresql.conf settings."""

    vcpus: int | None = None
    memory_gib: float | None = None
    cpus: str | None = None  # explicit CPU list instead of the first `vcpus`
    settings: Mapping[str, SettingValue] = field(default_factory=dict)
    engine: str = "postgresql"  # or "mariadb" (LocalMariaDB)

    @property
    def confined(self) -> bool:
        return self.vcpus is not None or self.memory_gib is not None


def local_root(home: Path) -> Path:
    """Where local targets' directories go: next to the embedded server's (`$DBSCALE_HOME/local`
    when it is set)."""
    embedded = default_base_dir(home)
    if embedded == ROOT_FALLBACK_DIR:
        return Path("/var/tmp/dbscale-local")
    return embedded.parent / "local"


def local_dir(name_or_path: str, home: Path) -> Path:
    """An absolute (or `~`) path as given; a bare name under `local_root`."""
    path = Path(name_or_path).expanduser()
    if path.is_absolute():
        return path
    return local_root(home) / re.sub(r"[^A-Za-z0-9_.+-]", "-", name_or_path)


def memory_settings(memory_gib: float, max_connections: int) -> dict[str, SettingValue]:
    """PostgreSQL's usual sizing for a machine of `memory_gib`: shared_buffers a quarter,
    effective_cache_size three quarters, work_mem a quarter shared by all connections."""
    total_mib = memory_gib * 1024
    work_mem_kib = int(total_mib * 1024 * 0.25 / max(max_connections, 1))
    return {
        "shared_buffers": f"{max(int(total_mib * 0.25), 16)}MB",
        "effective_cache_size": f"{max(int(total_mib * 0.75), 32)}MB",
        "work_mem": f"{min(max(work_mem_kib, 1024), 65536)}kB",
        "maintenance_work_mem": f"{min(max(int(total_mib / 16), 16), 1024)}MB",
    }


def mariadb_memory_settings(memory_gib: float) -> dict[str, SettingValue]:
    """MariaDB's usual sizing: half the budget for the InnoDB buffer pool (the other half for
    connections, the log buffer and the page cache)."""
    return {"innodb_buffer_pool_size": f"{max(int(memory_gib * 1024 * 0.5), 32)}M"}


class LocalInstance:
    """One local server in one shape. `start()` returns the evidence of its confinement."""

    def __init__(self, base_dir: Path, shape: LocalShape, *, cgroup_name: str) -> None:
        self.shape = shape
        # One per process: two studies may use targets of the same name at once.
        self.cgroup_name = re.sub(r"[^A-Za-z0-9_.+-]", "-", f"{cgroup_name}-{os.getpid()}")
        self.sized_settings: dict[str, SettingValue] = {}
        self.server: LocalServer[Any]
        if shape.engine == "mariadb":
            if shape.memory_gib is not None:
                self.sized_settings = mariadb_memory_settings(shape.memory_gib)
            settings = {**self.sized_settings, **shape.settings}
            self.server = LocalMariaDB(base_dir, settings=settings)
        else:
            if shape.memory_gib is not None:
                default = DEFAULT_SETTINGS["max_connections"]
                connections = int(shape.settings.get("max_connections", default))
                self.sized_settings = memory_settings(shape.memory_gib, connections)
            settings = {**self.sized_settings, **shape.settings}
            self.server = LocalPostgres(base_dir, settings=settings)
        self._memory: MemoryPlacement | None = None
        self._started = False

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> LocalEvidence:
        """Starts the server in its shape (a running one is reused only when unconfined)."""
        server, shape = self.server, self.shape
        if shape.confined and server.status() == "running":
            raise LocalServerError(
                f"the local server in {server.data_dir} is already running, so it cannot be "
                "started with the target's CPU and memory limits",
                f"stop it first (as its owner): pg_ctl -D {server.data_dir} stop, or for MariaDB "
                "mariadb-admin --socket=... shutdown",
            )
        cpus: tuple[int, ...] | None = None
        if shape.vcpus is not None:
            cpus = choose_cpus(shape.vcpus, shape.cpus, os.sched_getaffinity(0))
        if cpus is not None:
            with thread_affinity(cpus):
                self._started = server.start()
        else:
            self._started = server.start()
        return self._confine(cpus)

    def _confine(self, cpus: tuple[int, ...] | None) -> LocalEvidence:
        pid = self.postmaster_pid()
        evidence = LocalEvidence(
            dir=str(self.server.base_dir),
            port=self.server.port,
            postmaster_pid=pid,
            vcpus=self.shape.vcpus,
            cpus=format_cpu_list(cpus) if cpus is not None else None,
            settings_from_memory=dict(self.sized_settings),
            settings=dict(self.shape.settings),
        )
        if cpus is not None:
            processes = confine_tree(pid, cpus)
            confined = all(p.cpus_allowed_list == format_cpu_list(cpus) for p in processes)
            evidence = evidence.model_copy(
                update={"processes": [asdict(p) for p in processes], "all_confined": confined}
            )
        if self.shape.memory_gib is not None:
            memory = self._limit_memory(pid, self.shape.memory_gib)
            evidence = evidence.model_copy(update={"memory": memory})
        return evidence

    def _limit_memory(self, pid: int, memory_gib: float) -> MemoryLimit:
        limit = int(memory_gib * 1024 * MIB)
        placement = make_memory_cgroup(self.cgroup_name, limit)
        self._memory = placement
        if placement.cgroup is None:
            return MemoryLimit(
                memory_gib=memory_gib,
                limit_bytes=limit,
                enforced_by=None,
                note=f"not enforced ({placement.reason}: {'; '.join(placement.tried)}); only "
                "the settings are sized from the budget",
            )
        moved = placement.cgroup.add(process_tree(pid))
        return MemoryLimit(
            memory_gib=memory_gib,
            limit_bytes=limit,
            enforced_by=placement.reason,
            cgroup=str(placement.cgroup.path),
            postmaster_cgroup=memory_cgroup_of(pid),
            processes_moved=len(moved),
        )

    def postmaster_pid(self) -> int:
        """The server's first process (PostgreSQL's postmaster, or mariadbd)."""
        pid = self.server.running_pid()
        if pid is None:
            raise LocalServerError(f"no running {self.server.title} in {self.server.base_dir}")
        return pid

    def stop(self) -> None:
        """Releases the server (stopped unless other dbscale processes still use it, and only
        if a dbscale started it) and removes its memory cgroup."""
        self.server.release()
        self._started = False
        if self._memory is not None and self._memory.cgroup is not None:
            self._memory.cgroup.remove()
            self._memory = None
